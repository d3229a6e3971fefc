"""`from ktrain.options.kubernetes import RuntimePatch, PodSpecPatch, ...` as
`kubeflow.trainer.options.kubernetes` (SDK 0.5): the options of the Kubernetes backend, which live
in `ktrain.python_api.options`."""

from ktrain.python_api.options import (
    ActiveDeadlineSeconds,
    Annotations,
    ContainerPatch,
    JobSetSpecPatch,
    JobSetTemplatePatch,
    JobSpecPatch,
    JobTemplatePatch,
    Labels,
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
    "PodSpecPatch",
    "PodTemplatePatch",
    "ReplicatedJobPatch",
    "RuntimePatch",
    "TrainerArgs",
    "TrainerCommand",
    "TrainingRuntimeSpecPatch",
]
