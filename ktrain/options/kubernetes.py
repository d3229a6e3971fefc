"""`from ktrain.options.kubernetes import RuntimePatch, PodSpecPatch, ...` as
`kubeflow.trainer.options.kubernetes` (SDK 0.5): the options of the Kubernetes backend, which live
in `ktrain.python_api.options`: all of them but `Name`, which the SDK keeps in `options.common`."""

from ktrain.python_api import options as _options
from ktrain.python_api.options import *  # noqa: F403

__all__ = [name for name in _options.__all__ if name != "Name"]
del Name  # noqa: F821  (the star import's; `ktrain.options.common.Name` is its home, as the SDK's)
