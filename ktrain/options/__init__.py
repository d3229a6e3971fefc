"""`from ktrain.options import Name, Labels, ...`: the Kubeflow SDK's training options
(`kubeflow.trainer.options`) for `ktrain.TrainerClient().train(..., options=[...])`;
they live in `ktrain.python_api.options`."""

from ktrain.python_api.options import (
    ActiveDeadlineSeconds,
    Annotations,
    ContainerPatch,
    JobSetSpecPatch,
    JobSetTemplatePatch,
    JobSpecPatch,
    JobTemplatePatch,
    Labels,
    Name,
    PodSpecPatch,
    PodTemplatePatch,
    ReplicatedJobPatch,
    RuntimePatch,
    TrainerArgs,
    TrainerCommand,
    TrainingRuntimeSpecPatch,
)

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
