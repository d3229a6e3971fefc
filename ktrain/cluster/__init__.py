"""The cluster edge: the only package that talks to a Kubernetes API server.

`kubernetes` is imported lazily, inside `kube.py` only, so that rendering and shell completion
never pay for it.
"""

from __future__ import annotations

from ktrain.cluster.connection import ConnectionOptions

__all__ = ["ConnectionOptions"]
