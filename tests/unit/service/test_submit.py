"""`job create`'s targets: refuse_for_target / objects_for_target on the bundled runtimes."""

from __future__ import annotations

import pytest

from ktrain import constants as c
from ktrain.errors import UsageError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest
from ktrain.service.submit import controller_runtime_note, objects_for_target, refuse_for_target


def _render(**overrides: object) -> tuple[RenderRequest, object]:
    request = RenderRequest(overrides=JobOverrides(runtime="torch-distributed", name="demo", nodes=2, **overrides))  # type: ignore[arg-type]
    return request, render_request(request, RuntimeRegistry())


def test_an_unknown_target_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--target must be jobset or trainjob, got 'pods'"):
        refuse_for_target(JobOverrides(), "pods")


def test_elastic_cannot_travel_in_a_trainjob_but_can_in_a_jobset() -> None:
    overrides = JobOverrides(elastic=(1, 4))
    refuse_for_target(overrides, "jobset")
    with pytest.raises(UsageError, match="--elastic cannot travel in a TrainJob") as caught:
        refuse_for_target(overrides, "trainjob")
    assert caught.value.hint == "use --target jobset"


def test_a_restart_budget_is_refused_for_a_trainjob() -> None:
    with pytest.raises(UsageError):
        refuse_for_target(JobOverrides(max_restarts=3), "trainjob")
    refuse_for_target(JobOverrides(max_restarts=3), "jobset")


def test_the_jobset_target_submits_the_rendered_objects_annotated_with_the_runtime() -> None:
    request, outcome = _render()
    objects = objects_for_target(outcome, request, "jobset")  # type: ignore[arg-type]
    assert [o["kind"] for o in objects] == [o["kind"] for o in outcome.result.objects]  # type: ignore[attr-defined]
    jobset = objects[-1]
    assert jobset["kind"] == "JobSet" and jobset["metadata"]["name"] == "demo"
    assert jobset["metadata"]["annotations"][c.RUNTIME_ANNOTATION] == "torch-distributed"


def test_the_trainjob_target_submits_one_trainjob_naming_the_runtime() -> None:
    request, outcome = _render()
    objects = objects_for_target(outcome, request, "trainjob")  # type: ignore[arg-type]
    assert [o["kind"] for o in objects] == ["TrainJob"]
    trainjob = objects[0]
    assert trainjob["metadata"]["name"] == "demo"
    assert trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed"
    assert trainjob["spec"]["trainer"]["numNodes"] == 2


def test_a_bundled_runtime_is_noted_as_missing_for_the_controller() -> None:
    _, outcome = _render()
    note = controller_runtime_note(outcome)  # type: ignore[arg-type]
    assert note is not None
    assert note.startswith("runtime torch-distributed is not on the cluster")
    assert note.endswith("the Trainer controller will not find it")
