"""How to reach a cluster, as kubectl users say it: --kubeconfig, --context, -n."""

from __future__ import annotations

from ktrain.util.structs import struct


@struct(frozen=True)
class ConnectionOptions:
    kubeconfig: str | None = None  # a path, or several joined with ':' (as in KUBECONFIG)
    context: str | None = None
    namespace: str | None = None  # None: the context's namespace, else "default"
    request_timeout: float = 30.0  # seconds, for each ordinary (non-streaming) request
