"""Typed inputs of ktrain: TrainJob and (Cluster)TrainingRuntime of trainer.kubeflow.org/v1alpha1."""

from ktrain.api.common import EnvVar, ObjectMeta, ResourceRequirements
from ktrain.api.runtime import (
    ClusterTrainingRuntime,
    MLPolicy,
    PodGroupPolicy,
    TrainingRuntime,
    TrainingRuntimeSpec,
    default_jobset_spec,
)
from ktrain.api.trainjob import Initializer, RuntimePatch, RuntimeRef, Trainer, TrainJob, TrainJobSpec

__all__ = [
    "ClusterTrainingRuntime",
    "EnvVar",
    "Initializer",
    "MLPolicy",
    "ObjectMeta",
    "PodGroupPolicy",
    "ResourceRequirements",
    "RuntimePatch",
    "RuntimeRef",
    "TrainJob",
    "TrainJobSpec",
    "Trainer",
    "TrainingRuntime",
    "TrainingRuntimeSpec",
    "default_jobset_spec",
]
