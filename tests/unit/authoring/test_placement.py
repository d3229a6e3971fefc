"""Placement flags: kubectl's taint syntax for tolerations, label rules for selectors, and which
replicated jobs each flag reaches."""

from __future__ import annotations

import pytest

from ktrain.authoring.placement import (
    gpu_resource,
    parse_node_selector,
    parse_toleration,
    placement_patch,
    trainer_job_names,
)
from ktrain.errors import UsageError


def _rjob(name: str, ancestor: str | None = None, pod: dict | None = None) -> dict:
    meta = {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": ancestor}} if ancestor else {}
    return {"name": name, "template": {"metadata": meta, "spec": {"template": {"spec": pod or {}}}}}


TEMPLATE = {
    "spec": {
        "replicatedJobs": [
            _rjob("dataset-initializer", "dataset-initializer"),
            _rjob(
                "node",
                "trainer",
                {
                    "tolerations": [{"key": "spot", "operator": "Exists"}],
                    "containers": [{"name": "node", "resources": {"limits": {"amd.com/gpu": 1}}}],
                },
            ),
        ]
    }
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpu:NoSchedule", {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}),
        ("pool=a100:NoExecute", {"key": "pool", "operator": "Equal", "value": "a100", "effect": "NoExecute"}),
        ("nvidia.com/gpu", {"key": "nvidia.com/gpu", "operator": "Exists"}),
        ("team=nlp", {"key": "team", "operator": "Equal", "value": "nlp"}),
    ],
)
def test_toleration_reads_kubectl_taint_syntax(text: str, expected: dict) -> None:
    assert parse_toleration(text) == expected


@pytest.mark.parametrize("text", ["gpu:Never", ":NoSchedule", "bad key:NoSchedule", "k=bad value!:NoSchedule"])
def test_bad_tolerations_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="--toleration"):
        parse_toleration(text)


def test_node_selector_needs_valid_label_keys_and_values() -> None:
    assert parse_node_selector(["pool=a100", "cloud.google.com/gke-nodepool=gpu"]) == {
        "pool": "a100",
        "cloud.google.com/gke-nodepool": "gpu",
    }
    for bad in ("pool", "=x", "Pool_/x=y", "pool=-x"):
        with pytest.raises(UsageError, match="--node-selector"):
            parse_node_selector([bad])


def test_trainer_jobs_and_gpu_resource_come_from_the_runtime() -> None:
    assert trainer_job_names(TEMPLATE) == ["node"]
    assert gpu_resource(TEMPLATE) == "amd.com/gpu"
    assert gpu_resource({"spec": {"replicatedJobs": [_rjob("node")]}}) == "nvidia.com/gpu"


def test_selector_and_tolerations_reach_every_step_gpu_type_only_the_trainer() -> None:
    rjobs = placement_patch(
        TEMPLATE,
        node_selector={"pool": "a"},
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        gpu_type="A100",
        gpu_type_label="nvidia.com/gpu.product",
    )
    pods = {r["name"]: r["template"]["spec"]["template"]["spec"] for r in rjobs}
    assert pods["dataset-initializer"]["nodeSelector"] == {"pool": "a"}
    assert pods["node"]["nodeSelector"] == {"pool": "a", "nvidia.com/gpu.product": "A100"}
    # a patch replaces the atomic tolerations list: the runtime's own come first
    assert pods["node"]["tolerations"] == [
        {"key": "spot", "operator": "Exists"},
        {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert pods["dataset-initializer"]["tolerations"] == [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
