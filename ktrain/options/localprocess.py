"""`ktrain.options.localprocess`, as `kubeflow.trainer.options.localprocess` (SDK 0.5): the local
process backend's own options, none (it takes `ktrain.options.common.Name`)."""

from __future__ import annotations

__all__: list[str] = []
