"""`ktrain.api.runtime`, the TrainingRuntime and ClusterTrainingRuntime models: upstream's CRDs, field for
field and default for default, strict as the API server, and what the engine reads of a runtime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from ktrain import constants as c
from ktrain.api.runtime import ClusterTrainingRuntime, MLPolicy, TrainingRuntime

from .crd_defaults import crd_schema, field_defaults

REPO = Path(__file__).resolve().parents[3]


def _runtime(spec: dict[str, Any], **top: Any) -> TrainingRuntime:
    return TrainingRuntime.model_validate({"metadata": {"name": "rt"}, "spec": spec, **top})


@pytest.mark.shared
@pytest.mark.parametrize("plural", ["trainingruntimes", "clustertrainingruntimes"])
def test_every_field_is_the_crds_with_the_crds_default(plural: str) -> None:
    found = field_defaults(TrainingRuntime, crd_schema(plural))
    assert not [key for key in found if key.startswith("unknown:")]
    assert {key: pair for key, pair in found.items() if pair[0] != pair[1]} == {}
    assert found["spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"] == (60, 60)
    assert found["spec.mlPolicy.mpi.sshAuthMountPath"] == ("/root/.ssh", "/root/.ssh")


def test_an_empty_policy_source_gets_the_crds_defaults() -> None:
    rt = _runtime({"mlPolicy": {"mpi": {}}, "podGroupPolicy": {"coscheduling": {}}})
    assert rt.to_dict()["spec"] == {
        "mlPolicy": {
            "mpi": {
                "numProcPerNode": 1,
                "mpiImplementation": "OpenMPI",
                "sshAuthMountPath": "/root/.ssh",
                "runLauncherAsNode": False,
            }
        },
        "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 60}},
        "template": {"spec": {}},
    }


def test_every_bundled_runtime_reads_with_its_framework_and_policy() -> None:
    for path in sorted((REPO / "runtimes").glob("*.yaml")):
        rt = TrainingRuntime.model_validate(yaml.safe_load(path.read_text()))
        assert rt.name == path.stem, path
        assert rt.spec.ml_policy is not None and len(rt.spec.ml_policy.policy_keys) <= 1, path
        assert rt.framework and rt.labels[c.LABEL_FRAMEWORK] == rt.framework, path  # `runtime list` shows it
    text = (REPO / "runtimes" / "deepspeed-distributed.yaml").read_text()
    deepspeed = TrainingRuntime.model_validate(yaml.safe_load(text))
    assert deepspeed.kind == "ClusterTrainingRuntime" and deepspeed.framework == "deepspeed"
    assert deepspeed.spec.ml_policy is not None and deepspeed.spec.ml_policy.policy_keys == ["mpi"]


def test_a_runtime_without_the_framework_label_has_none() -> None:
    assert _runtime({}).framework == "" and _runtime({}).labels == {}


def test_the_kind_says_which_runtime_and_defaults_to_the_cluster_one() -> None:
    assert ClusterTrainingRuntime is TrainingRuntime
    assert _runtime({}).kind == "ClusterTrainingRuntime"
    assert _runtime({}, kind="TrainingRuntime").kind == "TrainingRuntime"
    with pytest.raises(ValidationError):
        _runtime({}, kind="TrainJob")
    with pytest.raises(ValidationError):
        _runtime({}, apiVersion="trainer.kubeflow.org/v1")


@pytest.mark.parametrize(
    "spec",
    [
        {"mlPolicy": {"numNodes": "2"}},  # the API server does not coerce "2" to 2
        {"mlPolicy": {"mpi": {"runLauncherAsNode": "true"}}},
        {"mlPolicy": {"torch": {"numProcPerNode": 2}}},  # v2.3's torch policy has no numProcPerNode
        {"mlPolicy": {"jax": {"nope": 1}}},  # an unknown field
        {"mlPolicy": {}, "extra": True},
    ],
)
def test_wrongly_typed_or_unknown_fields_are_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _runtime(spec)


def test_policy_keys_are_the_policies_set_in_declaration_order() -> None:
    assert MLPolicy.model_validate({"numNodes": 2}).policy_keys == []
    assert MLPolicy.model_validate({"torch": {}}).policy_keys == ["torch"]
    assert MLPolicy.model_validate({"flux": {}, "mpi": {}}).policy_keys == ["mpi", "flux"]


def test_a_runtime_is_frozen() -> None:
    rt = _runtime({"mlPolicy": {"numNodes": 2}})
    with pytest.raises(ValidationError):
        rt.spec.ml_policy.num_nodes = 3  # type: ignore[union-attr]
