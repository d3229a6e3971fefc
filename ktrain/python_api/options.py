"""The Kubeflow SDK's training options (`kubeflow.trainer.options`, SDK 0.5), with the same names,
fields, defaults and checks, for `TrainerClient().train(..., options=[...])`:
`from ktrain.options import Name, Labels, ...` (or the SDK's own, read alike by field name).

Source: kubeflow/sdk `kubeflow/trainer/options/common.py` and `kubernetes.py`. The SDK's options
are callables that edit a dict; ktrain's are plain values, read where they enter a call
(`ktrain.python_api.conversion.option_parts`), which turns each into the job keyword or the job
document field the SDK's `__call__` sets. As in the SDK, building one checks only what the SDK's
`__post_init__` checks (ContainerPatch, ActiveDeadlineSeconds); the rest is checked at `train`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ktrain.errors import UsageError

SDK_PATCH_MANAGER = "trainer.kubeflow.org/kubeflow-sdk"  # the manager the SDK's RuntimePatch writes
VALUE_FROM_KEYS = ("configMapKeyRef", "secretKeyRef", "fieldRef", "resourceFieldRef")


@dataclass
class Name:
    """The TrainJob's name (metadata.name); every backend."""

    name: str


@dataclass
class Labels:
    """The TrainJob's labels (metadata.labels); Kubernetes only."""

    labels: dict[str, str]


@dataclass
class Annotations:
    """The TrainJob's annotations (metadata.annotations); Kubernetes only."""

    annotations: dict[str, str]


@dataclass
class TrainerCommand:
    """The trainer's command (spec.trainer.command); only with a CustomTrainerContainer or no trainer."""

    command: list[str]


@dataclass
class TrainerArgs:
    """The trainer's arguments (spec.trainer.args); only with a CustomTrainerContainer or no trainer."""

    args: list[str]


@dataclass
class ActiveDeadlineSeconds:
    """spec.activeDeadlineSeconds: how long the job may be active before it fails (DeadlineExceeded)."""

    seconds: int

    def __post_init__(self) -> None:
        # The SDK's check (a ValueError there; UsageError is one).
        if type(self.seconds) is not int or self.seconds < 1:
            raise UsageError("activeDeadlineSeconds must be a positive integer (minimum 1)")


@dataclass
class ContainerPatch:
    """A container of the runtime's pod template to patch (it must exist there)."""

    name: str
    env: list[dict[str, Any]] | None = None
    volume_mounts: list[dict[str, Any]] | None = None
    security_context: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        check_container_patch(self.name, self.env, self.volume_mounts)


@dataclass
class PodSpecPatch:
    service_account_name: str | None = None
    volumes: list[dict[str, Any]] | None = None
    init_containers: list[ContainerPatch] | None = None
    containers: list[ContainerPatch] | None = None
    image_pull_secrets: list[dict[str, Any]] | None = None
    security_context: dict[str, Any] | None = None
    node_selector: dict[str, str] | None = None
    affinity: dict[str, Any] | None = None
    tolerations: list[dict[str, Any]] | None = None
    scheduling_gates: list[dict[str, Any]] | None = None


@dataclass
class PodTemplatePatch:
    metadata: dict[str, Any] | None = None
    spec: PodSpecPatch | None = None


@dataclass
class JobSpecPatch:
    template: PodTemplatePatch | None = None


@dataclass
class JobTemplatePatch:
    metadata: dict[str, Any] | None = None
    spec: JobSpecPatch | None = None


@dataclass
class ReplicatedJobPatch:
    name: str
    template: JobTemplatePatch | None = None


@dataclass
class JobSetSpecPatch:
    replicated_jobs: list[ReplicatedJobPatch] | None = None


@dataclass
class JobSetTemplatePatch:
    metadata: dict[str, Any] | None = None
    spec: JobSetSpecPatch | None = None


@dataclass
class TrainingRuntimeSpecPatch:
    template: JobSetTemplatePatch | None = None


@dataclass
class RuntimePatch:
    """One entry of spec.runtimePatches, under the SDK's manager `trainer.kubeflow.org/kubeflow-sdk`."""

    training_runtime_spec: TrainingRuntimeSpecPatch | None = None
    manager: str = field(default=SDK_PATCH_MANAGER, init=False, repr=False)


def check_container_patch(name: object, env: object, volume_mounts: object) -> None:
    """The SDK's ContainerPatch checks (`__post_init__`), with its messages."""
    if not isinstance(name, str) or not name.strip():
        raise UsageError("Container name must be a non-empty string")
    if env is not None:
        if not isinstance(env, list):
            raise UsageError("env must be a list of dictionaries")
        for var in env:
            if not isinstance(var, dict):
                raise UsageError("Each env entry must be a dictionary")
            if "name" not in var:
                raise UsageError("Each env entry must have a 'name' key")
            if not var.get("name"):
                raise UsageError("env 'name' must be a non-empty string")
            if "value" not in var and "valueFrom" not in var:
                raise UsageError("Each env entry must have either 'value' or 'valueFrom' key")
            if "valueFrom" in var:
                source = var["valueFrom"]
                if not isinstance(source, dict):
                    raise UsageError("env 'valueFrom' must be a dictionary")
                if not any(key in source for key in VALUE_FROM_KEYS):
                    raise UsageError(f"env 'valueFrom' must contain one of: {', '.join(VALUE_FROM_KEYS)}")
    if volume_mounts is not None:
        if not isinstance(volume_mounts, list):
            raise UsageError("volume_mounts must be a list of dictionaries")
        for mount in volume_mounts:
            if not isinstance(mount, dict):
                raise UsageError("Each volume_mounts entry must be a dictionary")
            if "name" not in mount:
                raise UsageError("Each volume_mounts entry must have a 'name' key")
            if not mount.get("name"):
                raise UsageError("volume_mounts 'name' must be a non-empty string")
            if "mountPath" not in mount:
                raise UsageError("Each volume_mounts entry must have a 'mountPath' key")
            path = mount.get("mountPath")
            if not path or not isinstance(path, str):
                raise UsageError("volume_mounts 'mountPath' must be a non-empty string")
            if not path.startswith("/"):
                raise UsageError(f"volume_mounts 'mountPath' must be an absolute path (start with /): {path}")


__all__ = [
    "ActiveDeadlineSeconds",
    "Annotations",
    "ContainerPatch",
    "JobSetSpecPatch",
    "JobSetTemplatePatch",
    "JobSpecPatch",
    "JobTemplatePatch",
    "Labels",
    "Name",
    "PodSpecPatch",
    "PodTemplatePatch",
    "ReplicatedJobPatch",
    "RuntimePatch",
    "TrainerArgs",
    "TrainerCommand",
    "TrainingRuntimeSpecPatch",
]
