"""What the tests of the engine audit's upstream rules (ENGINE.md §4.2, §5.4, §11.2) share: a one-container
JobSet spec, its container, a runtime and a TrainJob."""

from __future__ import annotations

from ktrain.api.runtime import TrainingRuntime
from ktrain.api.trainjob import TrainJob


def _spec(container: dict) -> dict:
    return {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {"containers": [container]}}}}}]
    }


def _container(spec: dict) -> dict:
    return spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]


def _runtime(kind: str) -> TrainingRuntime:
    return TrainingRuntime.model_validate(
        {
            "kind": kind,
            "metadata": {"name": "old", "labels": {"trainer.kubeflow.org/support": "deprecated"}},
            "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node"}]}}},
        }
    )


def _job(**spec: object) -> TrainJob:
    return TrainJob.model_validate({"metadata": {"name": "j"}, "spec": {"runtimeRef": {"name": "old"}, **spec}})
