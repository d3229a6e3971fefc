"""`ktrain.api.trainjob`, the TrainJob model: upstream's CRD field for field and default for default,
strict as the API server, and the name and namespace the engine reads of it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ktrain.api.trainjob import TrainJob

from .crd_defaults import crd_schema, field_defaults


def _job(spec: dict[str, Any], **meta: Any) -> TrainJob:
    return TrainJob.model_validate({"metadata": {"name": "j", **meta}, "spec": {"runtimeRef": {"name": "rt"}, **spec}})


@pytest.mark.shared
def test_every_field_is_the_crds_with_the_crds_default() -> None:
    found = field_defaults(TrainJob, crd_schema("trainjobs"))
    assert not [key for key in found if key.startswith("unknown:")]
    assert {key: pair for key, pair in found.items() if pair[0] != pair[1]} == {}
    assert found["spec.managedBy"] == ("trainer.kubeflow.org/trainjob-controller",) * 2
    assert found["spec.runtimeRef.kind"] == ("ClusterTrainingRuntime",) * 2


def test_a_minimal_job_is_stored_with_the_crds_defaults() -> None:
    assert _job({}).to_dict() == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "j"},
        "spec": {
            "runtimeRef": {"name": "rt", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
            "suspend": False,
            "managedBy": "trainer.kubeflow.org/trainjob-controller",
        },
    }


def test_the_namespace_defaults_to_default_and_the_name_to_empty() -> None:
    assert (_job({}).name, _job({}).namespace) == ("j", "default")
    assert _job({}, namespace="team").namespace == "team"
    assert TrainJob.model_validate({"spec": {"runtimeRef": {"name": "rt"}}}).name == ""


def test_metadata_kubectl_prints_is_accepted_so_its_output_can_be_fed_back() -> None:
    job = _job({}, resourceVersion="42", managedFields=[{"manager": "kubectl"}], uid="u-1")
    assert job.metadata.uid == "u-1"
    assert job.to_dict()["metadata"]["resourceVersion"] == "42"


def test_trainer_fields_read_by_their_wire_names() -> None:
    job = _job({"trainer": {"numNodes": 2, "numProcPerNode": 4, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}})
    trainer = job.spec.trainer
    assert trainer is not None and (trainer.num_nodes, trainer.num_proc_per_node) == (2, 4)
    assert trainer.resources_per_node is not None and trainer.resources_per_node.limits == {"nvidia.com/gpu": 4}


@pytest.mark.parametrize(
    "spec",
    [
        {"trainer": {"numNodes": "2"}},  # not coerced
        {"suspend": "yes"},
        {"trainer": {"replicas": 2}},  # v1's word: unknown here
        {"runtimeRef": {}},  # runtimeRef.name is required
        {"runtimePatches": [{"trainingRuntimeSpec": {}}]},  # a patch names its manager
    ],
)
def test_wrongly_typed_unknown_or_missing_fields_are_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _job(spec)


def test_another_kind_or_version_is_refused() -> None:
    with pytest.raises(ValidationError):
        TrainJob.model_validate({"kind": "TrainingRuntime", "spec": {"runtimeRef": {"name": "rt"}}})
    with pytest.raises(ValidationError):
        TrainJob.model_validate({"apiVersion": "kubeflow.org/v1", "spec": {"runtimeRef": {"name": "rt"}}})
