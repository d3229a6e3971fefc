"""A connected cluster: kubeconfig or in-cluster configuration read as kubectl reads it, a
transport to the API server, and one place that turns every failure into a `KtrainError` with a
cause and what to do.

Two transports (`ktrain.cluster.transport`): ktrain's own on the standard library, and the
`kubernetes` client for what only it does (`auth-provider` users, HTTPS/SOCKS proxies), chosen
per connection by `connect`; `KTRAIN_KUBE_CLIENT=kubernetes|stdlib` forces one. Messages are the
same whichever answered, and name the server and the context, never a token, a password or a key.
"""

from __future__ import annotations

import os

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.names import check_namespace
from ktrain.cluster.transport import StatusError, TransportError
from ktrain.errors import ApiError, ClusterUnreachableError, ConflictError, ExitCode, KtrainError, UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from ktrain.cluster.kubeconfig import Selected
    from ktrain.cluster.transport import Transport

    T = TypeVar("T")

DEFAULT_KUBECONFIG = "~/.kube/config"
TRANSPORT_ENV = "KTRAIN_KUBE_CLIENT"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class ApiNotFoundError(ApiError):
    """The server answered 404."""

    exit_code = ExitCode.NOT_FOUND


class BrokenAnswerError(ClusterUnreachableError):
    """The server answered something ktrain cannot use: not HTTP, not JSON, not the shape asked
    for, or too large (`kind`: the TransportError's). A write answered so may have been carried out."""

    kind = ""


class NotSentError(ClusterUnreachableError):
    """No connection was made (refused, unresolvable, TLS, connect timeout): the request was never
    sent, so a write failing this way surely was not carried out."""


def kubeconfig_paths(explicit: str | None) -> list[str]:
    """The kubeconfig files kubectl would read: --kubeconfig, else $KUBECONFIG (':'-separated)."""
    value = explicit or os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG
    return [os.path.expanduser(p) for p in value.split(os.pathsep) if p]


def _in_cluster_available() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        os.path.join(SERVICE_ACCOUNT_DIR, "token")
    )


class KubeCluster:
    """A transport plus the resolved namespace and names for messages."""

    def __init__(
        self, transport: Transport, *, namespace: str, context: str | None, server: str, request_timeout: float
    ) -> None:
        self.transport = transport
        self.namespace = namespace
        self.context = context
        self.server = server
        self.request_timeout = request_timeout

    def call(self, fn: Callable[..., T], *args: Any, what: str = "", stream: bool = False, **kwargs: Any) -> T:
        """Call a request function; failures come back as KtrainErrors. `what` names the object
        for messages (e.g. "JobSet default/my-job"). A request must be done within the request
        timeout (connect, head and body, as kubectl's --request-timeout); a stream's head too, and
        its body then only may not go STREAM_IDLE_SECONDS without a byte."""
        if not stream:
            kwargs.setdefault("_request_timeout", self.request_timeout)
        else:
            from ktrain.cluster.transport import STREAM_IDLE_SECONDS

            kwargs.setdefault("_request_timeout", (self.request_timeout, STREAM_IDLE_SECONDS))
        try:
            return fn(*args, **kwargs)
        except (StatusError, TransportError) as exc:
            raise self.translate(exc, what) from None

    def where(self) -> str:
        return f"the API server at {self.server}" + (f" (context {self.context!r})" if self.context else "")

    def translate(self, exc: BaseException, what: str = "") -> Exception:
        """Map a transport failure to a KtrainError (returned, not raised)."""
        where = self.where()
        if isinstance(exc, StatusError):
            return api_error(exc, what, where)
        if not isinstance(exc, TransportError):
            return exc if isinstance(exc, Exception) else RuntimeError(str(exc))
        from ktrain.util.text import printable

        kind, detail = exc.kind, printable(exc.detail)
        asked = what or "the request"
        if kind in ("connect-timeout", "read-timeout"):
            return (NotSentError if kind == "connect-timeout" else ClusterUnreachableError)(
                f"{where} did not answer within {self.request_timeout:g}s" + (f" ({what})" if what else ""),
                hint="check the network path to the cluster (VPN, proxy), or retry with a longer --request-timeout",
            )
        if kind in ("garbled", "shape", "protocol", "too-large"):
            said = {
                "garbled": "something that is not JSON",
                "shape": "JSON that is not what was asked for",
                "protocol": "a broken HTTP answer",
                "too-large": "an answer too large to read",
            }[kind]
            broken = BrokenAnswerError(
                f"{where} answered {asked} with {said}" + (f" ({detail})" if detail else ""),
                hint="too large: narrow it with -n or -l"
                if kind == "too-large"
                else "is the server URL an API server's, not a proxy's or a dashboard's? `kubectl cluster-info`",
            )
            broken.kind = kind
            return broken
        if kind == "closed":
            # The request went out and the connection broke before an answer (reset, closed, or
            # the server died): whether it was carried out is unknown.
            return ClusterUnreachableError(
                f"{where} closed the connection without answering ({detail or 'EOF'}"
                + (f"; {what}" if what else "")
                + "): "
                "the request may or may not have been carried out",
                hint="is the cluster (or a proxy in front of it) restarting? `kubectl cluster-info` shows the same",
            )
        text = {
            "refused": "connection refused",
            "dns": "the host name does not resolve",
            "tls": "TLS verification failed" + (f" ({detail})" if detail else ""),
            "proxy": "the proxy refused the connection" + (f" ({detail})" if detail else ""),
        }.get(kind, detail or kind)
        return NotSentError(
            f"cannot reach {where}: {text}",
            hint="is the cluster running? `kubectl cluster-info` shows the same; pick another with --context",
        )


def server_shaped(fn: Callable[..., T]) -> Callable[..., T]:
    """For a function reading objects a server sent (its first argument: the KubeCluster): a
    field of the wrong type deep inside them (`spec: 5`, `labels: []`) is the server's broken
    answer (BrokenAnswerError, exit 5), not ktrain's internal error. The 2xx answers' top level is
    checked where they are read (`client.checked_object`, `client.checked_items`)."""
    import functools

    @functools.wraps(fn)
    def guarded(cluster: KubeCluster, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(cluster, *args, **kwargs)
        except KtrainError:
            raise  # ktrain's own errors subclass ValueError & co. too (the Kubeflow SDK's built-ins)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
            shape = TransportError("shape", f"a field of an unexpected type: {type(exc).__name__}", sent=True)
            raise cluster.translate(shape) from exc

    return guarded


def api_error(exc: Any, what: str, where: str) -> ApiError:
    """An ApiError from an ApiException, keeping the server's Status message and causes."""
    status = int(getattr(exc, "status", 0) or 0)
    body: dict[str, Any] = {}
    try:
        from ktrain.util.jsondata import loads

        text = exc.body.decode("utf-8", "replace") if isinstance(exc.body, bytes) else exc.body
        parsed = loads(text) if text else {}
        if isinstance(parsed, dict):
            body = parsed
    except (TypeError, ValueError, RecursionError):
        pass
    from ktrain.util.text import printable

    # The server's words are printed: control characters escaped (a message holding `\x1b[2J`
    # must not clear the user's screen), and a Status of the wrong shape read as far as it goes.
    reason = printable(str(body.get("reason") or getattr(exc, "reason", "") or ""))
    message = printable(str(body.get("message") or getattr(exc, "reason", "") or f"HTTP {status}"))
    details = body.get("details")
    raw_causes = details.get("causes") if isinstance(details, dict) else None
    causes = [
        {printable(str(k)): printable(str(v)) for k, v in cause.items()}
        for cause in (raw_causes if isinstance(raw_causes, list) else [])
        if isinstance(cause, dict)
    ]
    prefix = f"{what}: " if what else ""
    if status == 401:
        return ApiError(
            f"{where} rejected the credentials (401 Unauthorized)",
            status=status,
            reason=reason,
            hint="your login may have expired: refresh it (e.g. your cloud's get-credentials command)",
        )
    if status == 403:
        # The server's message already says "... is forbidden: ..." (RBAC, admission): say it once.
        # The server's RBAC message names the resource and namespace ("jobsets.jobset.x-k8s.io
        # "x" is forbidden: User ... cannot patch ..."): then it is the whole message.
        text = message if " is forbidden" in message else f"{prefix}forbidden: {message}"
        verb = message.partition("cannot ")[2].partition(" resource")[0]
        reading = verb in ("get", "list", "watch")
        hint = (
            "ask a cluster admin for read access (RBAC), or look in another namespace (-n)"
            if reading
            else "ask a cluster admin for RBAC permission, or use a namespace you may write to (-n)"
        )
        return ApiError(text, status=status, reason=reason, hint=hint)
    if status == 404:
        return ApiNotFoundError(f"{prefix}{message}", status=status, reason=reason)
    if status == 409:
        return ConflictError(f"{prefix}{message}", status=status, reason=reason, causes=causes)
    if status == 0:
        return ApiError(f"{prefix}{message}", status=status, reason=reason)
    return ApiError(f"{prefix}{message}", status=status, reason=reason, causes=causes)


def _warn_insecure(context: str | None, server: str) -> None:
    """One ktrain warning for an `insecure-skip-tls-verify` context (urllib3's own per-request
    warning is silenced by the kubernetes transport)."""
    import sys

    if server.startswith("https://"):
        where = f"context {context!r}" if context else server
        sys.stderr.write(
            f"warning: TLS verification is off for {where} (insecure-skip-tls-verify): "
            "the server's identity is not checked\n"
        )


def proxy_of(cluster: dict[str, Any]) -> str | None:
    """The proxy requests go through: the cluster's `proxy-url`, else the environment's."""
    if cluster.get("proxy-url"):
        return str(cluster["proxy-url"])
    from ktrain.cluster.http_transport import env_proxy

    return env_proxy(str(cluster.get("server") or ""))


def transport_choice(user: dict[str, Any] | None, proxy: str | None) -> str:
    """ "stdlib" or "kubernetes": $KTRAIN_KUBE_CLIENT, else what the user and proxy need."""
    forced = os.environ.get(TRANSPORT_ENV, "").strip().lower()
    if forced in ("stdlib", "kubernetes"):
        return forced
    if forced:
        raise UsageError(f"{TRANSPORT_ENV} must be `stdlib` or `kubernetes`, not {forced!r}")
    if user and user.get("auth-provider"):
        return "kubernetes"  # gcp / azure / oidc plugins: only the client implements them
    if proxy and not proxy.startswith("http://"):
        return "kubernetes"  # https:// (TLS to the proxy) and socks5:// proxies
    return "stdlib"


def _stdlib(cluster: dict[str, Any], user: dict[str, Any], proxy: str | None) -> Transport:
    from ktrain.cluster.credentials import Credentials
    from ktrain.cluster.http_transport import Endpoint, HttpTransport

    if user.get("auth-provider"):  # never silently without the credentials the kubeconfig names
        raise UsageError(
            f"the kubeconfig user's auth-provider needs the kubernetes client, and {TRANSPORT_ENV}=stdlib forbids it",
            hint=f"unset {TRANSPORT_ENV} (ktrain then picks the kubernetes client for this user)",
        )

    return HttpTransport(
        Endpoint(str(cluster["server"]), proxy),
        Credentials(user, cluster=cluster),
        cluster,
        tls_server_name=cluster.get("tls-server-name") or None,
    )


def _in_cluster_target() -> tuple[dict[str, Any], dict[str, Any]]:
    """client-go's rest.InClusterConfig: the service's host and port, the mounted token (a
    token file: it is rotated) and CA."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ClusterUnreachableError(
            "in-cluster configuration failed: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"
        )
    if ":" in host:  # IPv6
        host = f"[{host}]"
    cluster = {
        "server": f"https://{host}:{port}",
        "certificate-authority": os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt"),
    }
    return cluster, {"tokenFile": os.path.join(SERVICE_ACCOUNT_DIR, "token")}


def connect(options: ConnectionOptions) -> KubeCluster:
    """Connect as kubectl would: --kubeconfig / $KUBECONFIG (several files merged), --context,
    else in-cluster config when running in a pod. Nothing is sent to the server yet."""
    paths = kubeconfig_paths(options.kubeconfig)
    existing = [p for p in paths if os.path.isfile(p)]
    context_name: str | None = None
    namespace = options.namespace or None  # `-n ''` means the context's namespace, as in kubectl
    selected: Selected | None = None
    if not existing:
        if options.kubeconfig or options.context or not _in_cluster_available():
            raise ClusterUnreachableError(
                "no kubeconfig found (looked at " + ", ".join(paths) + ")",
                hint="pass --kubeconfig FILE or set KUBECONFIG; `ktrain job render` needs no cluster",
            )
        cluster, user = _in_cluster_target()
        if namespace is None:
            try:
                with open(os.path.join(SERVICE_ACCOUNT_DIR, "namespace"), encoding="utf-8") as fh:
                    namespace = fh.read(1024).strip() or None
            except OSError:
                namespace = None
    else:
        from ktrain.cluster.kubeconfig import Merged

        selected = Merged(existing).select(options.context)
        cluster, user, context_name = selected.cluster, selected.user, selected.context
        if namespace is None:
            namespace = selected.namespace
    if str(cluster.get("server", "")).startswith("http://") and user:
        # client-go (DirectClientConfig.ClientConfig): "only try to read the auth information if we
        # are secure" -- no token, password or client certificate travels in clear text.
        user = {}
    # Checked here too, not only when a path is built: a command's first request (discovery, or the
    # cluster-scoped runtimes) may not carry the namespace, and nothing at all is sent for a bad one.
    namespace = check_namespace(namespace or "default")
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    server = str(cluster["server"])
    transport: Transport
    proxy = proxy_of(cluster)
    if transport_choice(user, proxy) == "kubernetes":
        from ktrain.cluster import kubernetes_transport

        if selected is None:
            transport, server, insecure = kubernetes_transport.in_cluster(
                user["tokenFile"], cluster["certificate-authority"]
            )
        else:
            transport, server, insecure = kubernetes_transport.from_kubeconfig(
                cluster, user, selected.context, proxy=proxy
            )
    else:
        transport = _stdlib(cluster, user, proxy)
    if insecure:
        _warn_insecure(context_name, server)
    return KubeCluster(
        transport,
        namespace=namespace,
        context=context_name,
        server=server,
        request_timeout=options.request_timeout,
    )
