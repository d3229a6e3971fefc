"""`from ktrain.backends.localprocess.types import LocalProcessBackendConfig`, as from
`kubeflow.trainer.backends.localprocess.types` (SDK 0.5)."""

from ktrain.python_api.types import LocalProcessBackendConfig

__all__ = ["LocalProcessBackendConfig"]
