"""Command-line flags on top of a TrainJob mapping: apply_overrides (flags win over the file) and
apply_runtime_aware_flags (the flags whose meaning depends on the runtime)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain import constants as c
from ktrain.errors import UsageError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.overrides import apply_overrides, apply_runtime_aware_flags
from ktrain.service.requests import JobOverrides

FILE_JOB = {
    "metadata": {"name": "from-file", "namespace": "team-a"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {"numNodes": 1, "env": [{"name": "A", "value": "1"}]},
    },
}


def test_flags_win_over_the_file_and_the_file_is_not_modified() -> None:
    ov = JobOverrides(name="demo", runtime="jax-distributed", nodes=4, image="img:1", env=[("A", "2"), ("B", "3")])
    out = apply_overrides(FILE_JOB, ov, None)
    assert out["apiVersion"] == c.TRAINER_API_VERSION and out["kind"] == c.TRAINJOB_KIND
    assert out["metadata"]["name"] == "demo"
    assert out["spec"]["runtimeRef"] == {"name": "jax-distributed"}
    assert out["spec"]["trainer"] == {
        "numNodes": 4,
        "image": "img:1",
        "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}],
    }
    assert FILE_JOB["metadata"]["name"] == "from-file"
    assert FILE_JOB["spec"]["trainer"]["env"] == [{"name": "A", "value": "1"}]  # type: ignore[index]


def test_no_trainer_is_made_where_no_flag_sets_one() -> None:
    out = apply_overrides({"spec": {"runtimeRef": {"name": "torch-distributed"}}}, JobOverrides(name="x"), None)
    assert "trainer" not in out["spec"] and "runtimePatches" not in out["spec"]


def test_a_namespace_flag_contradicting_the_file_is_refused_as_kubectl_does() -> None:
    with pytest.raises(UsageError, match="You must pass '--namespace=team-a' to perform this operation"):
        apply_overrides(FILE_JOB, JobOverrides(namespace="team-b"), None)


def test_resources_and_initializers_land_in_the_trainjob_fields() -> None:
    ov = JobOverrides(requests={"cpu": "2"}, limits={"nvidia.com/gpu": "1"}, dataset="hf://d", model_secret="tok")
    spec = apply_overrides({}, ov, None)["spec"]
    assert spec["trainer"]["resourcesPerNode"] == {"requests": {"cpu": "2"}, "limits": {"nvidia.com/gpu": "1"}}
    assert spec["initializer"] == {"dataset": {"storageUri": "hf://d"}, "model": {"secretRef": {"name": "tok"}}}


def test_labels_and_annotations_travel_in_the_flags_runtime_patch() -> None:
    out = apply_overrides({}, JobOverrides(labels={"team": "a"}, annotations={"note": "x"}), None)
    assert out["spec"]["runtimePatches"] == [
        {
            "manager": f"{c.DEFAULT_PATCH_MANAGER}-flags",
            "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}}}},
        }
    ]


def test_a_kueue_queue_suspends_the_job_and_refuses_no_suspend() -> None:
    out = apply_overrides({"spec": {"suspend": False}}, JobOverrides(kueue_queue="q"), None)
    assert out["spec"]["suspend"] is True
    assert out["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "q"
    with pytest.raises(UsageError, match="--no-suspend with --kueue-queue"):
        apply_overrides({}, JobOverrides(kueue_queue="q", suspend=False), None)


def test_elastic_runs_its_max_nodes_and_refuses_a_contradicting_node_count() -> None:
    assert apply_overrides({}, JobOverrides(elastic=(2, 4)), None)["spec"]["trainer"]["numNodes"] == 4
    with pytest.raises(UsageError, match=r"--nodes 3 contradicts --elastic 2:4 \(MAX nodes run\)"):
        apply_overrides({}, JobOverrides(elastic=(2, 4), nodes=3), None)


def test_a_patch_file_is_appended_after_the_job_files_own_patches(tmp_path: Path) -> None:
    patch = tmp_path / "patch.yaml"
    patch.write_text("manager: me\ntrainingRuntimeSpec:\n  template:\n    metadata:\n      labels: {x: y}\n")
    job = {"spec": {"runtimePatches": [{"manager": "file"}]}}
    grafts: list = []
    out = apply_overrides(job, JobOverrides(patch_files=[str(patch)]), None, grafts)
    assert [p["manager"] for p in out["spec"]["runtimePatches"]] == ["file", "me"]
    assert grafts[0][0] == ("spec", "runtimePatches", 1, "trainingRuntimeSpec")


def test_fine_tuning_flags_need_a_torchtune_runtime() -> None:
    from ktrain.authoring.finetune import FineTuning

    registry = RuntimeRegistry()
    data = apply_overrides({}, JobOverrides(runtime="torch-distributed"), None)
    with pytest.raises(UsageError, match="fine-tuning flags need a torchtune runtime; 'torch-distributed'") as caught:
        entry = registry.get("torch-distributed")
        apply_runtime_aware_flags(data, JobOverrides(fine_tuning=FineTuning()), entry, registry)
    assert "torchtune-llama3.2-1b" in (caught.value.hint or "")
