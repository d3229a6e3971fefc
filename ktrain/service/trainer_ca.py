"""`job create` and `job diff` with the controller's TrainJobStatus gate on: the CA it copies into
`<job>-tls-config`, read from the cluster (ktrain.cluster.trainer_ca) into the render request."""

from __future__ import annotations

from ktrain.cluster.kube import KubeCluster
from ktrain.cluster.trainer_ca import read_status_ca

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


def fill_status_ca(cluster: KubeCluster, request: Any) -> str | None:
    """With the TrainJobStatus gate on, the request's CA read from the cluster; returns a warning
    when it cannot be read (the render then leaves ca.crt empty, as offline)."""
    from ktrain.inputs.feature_gates import TRAINJOB_STATUS, enabled, parse_status_server

    if not request.feature_gates or not enabled(request.feature_gates, TRAINJOB_STATUS):
        return None
    server = parse_status_server(request.status_server)
    request.status_ca, why = read_status_ca(cluster, server.namespace)
    return None if why is None else f"TrainJobStatus: {why}: ca.crt is left empty"
