"""The cluster a command talks to: the kubectl-style options (`--kubeconfig`, `--context`,
`-n`, `--request-timeout`) read into a connection, and the names checked as the API server would
before any request. The CLI and the Python API reach the cluster through here and the other use
cases of `ktrain.service`, never through `ktrain.cluster` itself."""

from __future__ import annotations

from ktrain.cluster.connection import ConnectionOptions as ConnectionOptions
from ktrain.cluster.names import check_name as check_name
from ktrain.cluster.names import check_namespace as check_namespace

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.cluster.kube import KubeCluster


def options(
    kubeconfig: str | None, context: str | None, namespace: str | None, request_timeout: float = 30.0
) -> ConnectionOptions:
    """A `ConnectionOptions` from the kubectl-style flags (no cluster is contacted)."""
    return ConnectionOptions(
        kubeconfig=kubeconfig, context=context, namespace=namespace, request_timeout=request_timeout
    )


def connect(chosen: ConnectionOptions) -> KubeCluster:
    """The cluster `chosen` names: the kubeconfig (or the in-cluster service account) read and a
    transport picked; nothing is sent yet."""
    from ktrain.cluster.kube import connect as kube_connect

    return kube_connect(chosen)
