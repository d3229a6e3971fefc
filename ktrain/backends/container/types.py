"""`from ktrain.backends.container.types import ContainerBackendConfig, TrainingRuntimeSource`, as
from `kubeflow.trainer.backends.container.types` (SDK 0.5)."""

from ktrain.python_api.types import ContainerBackendConfig, TrainingRuntimeSource

__all__ = ["ContainerBackendConfig", "TrainingRuntimeSource"]
