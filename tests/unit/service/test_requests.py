"""The use cases' requests and outcomes: what a request means when a field is left out."""

from __future__ import annotations

from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest


def test_each_request_has_its_own_lists_and_maps() -> None:
    a, b = JobOverrides(), JobOverrides()
    a.env.append(("K", "V"))
    a.labels["x"] = "y"
    assert b.env == [] and b.labels == {}
    r1, r2 = RenderRequest(), RenderRequest()
    r1.notes.append("n")
    assert r2.notes == [] and r1.overrides is not r2.overrides


def test_an_empty_request_renders_in_the_default_namespace_with_a_derived_name() -> None:
    request = RenderRequest(overrides=JobOverrides(runtime="torch-distributed"))
    assert request.default_namespace == "default" and request.fallback_name is None
    outcome = render_request(request, RuntimeRegistry())
    assert outcome.job.namespace == "default"
    again = render_request(RenderRequest(overrides=JobOverrides(runtime="torch-distributed")), RuntimeRegistry())
    assert outcome.job.name and outcome.job.name == again.job.name  # derived from the content: stable


def test_the_fallback_name_names_a_job_without_one() -> None:
    request = RenderRequest(overrides=JobOverrides(runtime="torch-distributed"), fallback_name="sdk-abc")
    assert render_request(request, RuntimeRegistry()).job.name == "sdk-abc"
