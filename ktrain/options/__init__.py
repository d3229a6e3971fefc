"""`from ktrain.options import Name, Labels, ...`: the Kubeflow SDK's training options
(`kubeflow.trainer.options`) for `ktrain.TrainerClient().train(..., options=[...])`;
they live in `ktrain.python_api.options`, whose `__all__` this package exports."""

from ktrain.python_api.options import *  # noqa: F403
from ktrain.python_api.options import __all__ as __all__
