"""The CA the Trainer controller copies into `<job>-tls-config` (TrainJobStatus feature gate): the
`ca.crt` of its webhook Secret `kubeflow-trainer-webhook-cert` in its own namespace (upstream
`trainjobstatus.go` `buildStatusServerCaCrtConfigMap`). `job create` and `job diff` read it when
the gate is on, so what they render holds what the controller would; a render without a cluster
cannot know it (ktrain.inputs.feature_gates.offline_ca_note)."""

from __future__ import annotations

from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster
from ktrain.errors import ApiError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

WEBHOOK_SECRET = "kubeflow-trainer-webhook-cert"
CA_KEY = "ca.crt"
MAX_CA_BYTES = 64 * 1024


def read_status_ca(cluster: KubeCluster, namespace: str) -> tuple[str | None, str | None]:
    """(the CA in PEM, None) or (None, why it could not be read: a sentence for a warning)."""
    import base64
    import binascii

    where = f"Secret {namespace}/{WEBHOOK_SECRET}"
    try:
        secret = k.get(cluster, k.SECRET, WEBHOOK_SECRET, namespace)
    except ApiError as exc:
        return None, f"cannot read {where} ({exc.message})"
    if secret is None:
        return None, f"{where} does not exist (is the Trainer controller installed there?)"
    data: Any = (secret.get("data") or {}).get(CA_KEY)
    if not isinstance(data, str) or not data or len(data) > MAX_CA_BYTES:
        return None, f"{where} has no {CA_KEY}"
    try:
        return base64.b64decode(data, validate=True).decode("utf-8"), None
    except (binascii.Error, UnicodeDecodeError):
        return None, f"{where}: {CA_KEY} is not base64 PEM"
