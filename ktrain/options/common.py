"""`from ktrain.options.common import Name` as `kubeflow.trainer.options.common` (SDK 0.5): the
option every backend takes."""

from ktrain.python_api.options import Name

__all__ = ["Name"]
