"""Typed inputs of ktrain: TrainJob and (Cluster)TrainingRuntime of trainer.kubeflow.org/v1alpha1.

The pydantic models live in `common`, `trainjob` and `runtime`; the names below are loaded on
first use, so that importing `ktrain.api.records` (the render path) does not import pydantic.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


_EXPORTS = {
    "EnvVar": "common",
    "ObjectMeta": "common",
    "ResourceRequirements": "common",
    "ClusterTrainingRuntime": "runtime",
    "MLPolicy": "runtime",
    "PodGroupPolicy": "runtime",
    "TrainingRuntime": "runtime",
    "TrainingRuntimeSpec": "runtime",
    "default_jobset_spec": "base",
    "Initializer": "trainjob",
    "RuntimePatch": "trainjob",
    "RuntimeRef": "trainjob",
    "Trainer": "trainjob",
    "TrainJob": "trainjob",
    "TrainJobSpec": "trainjob",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ktrain.api' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"ktrain.api.{module}"), name)


__all__ = sorted(_EXPORTS)
