"""TrainJob (trainer.kubeflow.org/v1alpha1) as in Kubeflow Trainer v2.3, with CRD defaults.

Source of truth: upstream `pkg/apis/trainer/v1alpha1/trainjob_types.go` and ENGINE.md §2.1/§2.3.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ktrain import constants as c
from ktrain.api.base import TrainJobBehaviour
from ktrain.api.common import (
    EnvVar,
    KubeModel,
    LocalObjectReference,
    ObjectMeta,
    ResourceRequirements,
)


class RuntimeRef(KubeModel):
    name: str
    api_group: str = c.TRAINER_GROUP
    kind: str = c.CLUSTER_TRAINING_RUNTIME_KIND


class InitializerSource(KubeModel):
    storage_uri: str | None = None
    env: list[EnvVar] | None = None
    secret_ref: LocalObjectReference | None = None


class Initializer(KubeModel):
    dataset: InitializerSource | None = None
    model: InitializerSource | None = None


class Trainer(KubeModel):
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    num_nodes: int | None = None
    resources_per_node: ResourceRequirements | None = None
    num_proc_per_node: int | None = None


class PatchTemplate(KubeModel):
    # JobSet-level metadata (labels/annotations reach the JobSet) and a JobSetSpec patch.
    metadata: dict[str, Any] | None = None
    spec: dict[str, Any] | None = None


class TrainingRuntimeSpecPatch(KubeModel):
    template: PatchTemplate | None = None


class RuntimePatch(KubeModel):
    manager: str
    time: str | None = None
    training_runtime_spec: TrainingRuntimeSpecPatch | None = None


class TrainJobSpec(KubeModel):
    runtime_ref: RuntimeRef
    initializer: Initializer | None = None
    trainer: Trainer | None = None
    runtime_patches: list[RuntimePatch] | None = None
    suspend: bool = False
    active_deadline_seconds: int | None = None
    managed_by: str = c.MANAGED_BY_TRAINER


class TrainJob(KubeModel, TrainJobBehaviour):
    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = Field(default=c.TRAINER_API_VERSION)
    kind: Literal["TrainJob"] = "TrainJob"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: TrainJobSpec
    status: dict[str, Any] | None = None
