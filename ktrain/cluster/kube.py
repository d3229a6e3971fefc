"""A connected cluster: the `kubernetes` client, configured the way kubectl would be, and one
place that turns every client failure into a `KtrainError` with a cause and what to do.

Messages name the server and the context, never a token, a password or a client key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.names import check_namespace
from ktrain.errors import ApiError, ClusterUnreachableError, ConflictError, ExitCode, UsageError

T = TypeVar("T")

DEFAULT_KUBECONFIG = "~/.kube/config"


class ApiNotFoundError(ApiError):
    """The server answered 404."""

    exit_code = ExitCode.NOT_FOUND


class NotSentError(ClusterUnreachableError):
    """No connection was made (refused, unresolvable, TLS, connect timeout): the request was never
    sent, so a write failing this way surely was not carried out."""


def kubeconfig_paths(explicit: str | None) -> list[str]:
    """The kubeconfig files kubectl would read: --kubeconfig, else $KUBECONFIG (':'-separated)."""
    value = explicit or os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG
    return [os.path.expanduser(p) for p in value.split(os.pathsep) if p]


def _in_cluster_available() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    )


class KubeCluster:
    """An `ApiClient` plus the resolved namespace and names for messages."""

    def __init__(
        self, api_client: Any, *, namespace: str, context: str | None, server: str, request_timeout: float
    ) -> None:
        self.api_client = api_client
        self.namespace = namespace
        self.context = context
        self.server = server
        self.request_timeout = request_timeout

    def call(self, fn: Callable[..., T], *args: Any, what: str = "", stream: bool = False, **kwargs: Any) -> T:
        """Call a client method; failures come back as KtrainErrors. `what` names the object
        for messages (e.g. "JobSet default/my-job"). Streaming calls get no read timeout."""
        if not stream:
            kwargs.setdefault("_request_timeout", self.request_timeout)
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every client failure is mapped below
            raise self.translate(exc, what) from None

    def translate(self, exc: BaseException, what: str = "") -> Exception:
        """Map a client/transport exception to a KtrainError (returned, not raised)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3 import exceptions as u3

        where = f"the API server at {self.server}" + (f" (context {self.context!r})" if self.context else "")
        if isinstance(exc, ApiException):
            return api_error(exc, what, where)
        reason = exc.reason if isinstance(exc, u3.MaxRetryError) else exc
        # urllib3's NewConnectionError subclasses ConnectTimeoutError: test it first.
        timed_out = not isinstance(reason, u3.NewConnectionError) and isinstance(
            reason, (u3.ReadTimeoutError, u3.ConnectTimeoutError, TimeoutError)
        )
        if timed_out:
            connecting = isinstance(reason, u3.ConnectTimeoutError)
            return (NotSentError if connecting else ClusterUnreachableError)(
                f"{where} did not answer within {self.request_timeout:g}s",
                hint="check the network path to the cluster (VPN, proxy), or retry",
            )
        if isinstance(reason, u3.ProtocolError) or (
            isinstance(reason, ConnectionError) and not isinstance(reason, ConnectionRefusedError)
        ):
            # The request went out and the connection broke before an answer (reset, closed, or
            # the server died): whether it was carried out is unknown.
            inner = reason.args[1] if isinstance(reason, u3.ProtocolError) and len(reason.args) > 1 else reason
            return ClusterUnreachableError(
                f"{where} closed the connection without answering ({type(inner).__name__}): "
                "the request may or may not have been carried out",
                hint="is the cluster (or a proxy in front of it) restarting? `kubectl cluster-info` shows the same",
            )
        if isinstance(exc, (u3.MaxRetryError, u3.NewConnectionError, u3.ProtocolError, ConnectionError, u3.SSLError)):
            text = str(reason)
            if "Connection refused" in text or "Errno 111" in text:
                text = "connection refused"
            elif "Name or service not known" in text or "nodename nor servname" in text:
                text = "the host name does not resolve"
            elif isinstance(reason, u3.SSLError) or "CERTIFICATE_VERIFY_FAILED" in text:
                text = "TLS verification failed"
            else:
                text = type(reason).__name__
            return NotSentError(
                f"cannot reach {where}: {text}",
                hint="is the cluster running? `kubectl cluster-info` shows the same; pick another with --context",
            )
        return exc if isinstance(exc, Exception) else RuntimeError(str(exc))


def api_error(exc: Any, what: str, where: str) -> ApiError:
    """An ApiError from an ApiException, keeping the server's Status message and causes."""
    status = int(getattr(exc, "status", 0) or 0)
    body: dict[str, Any] = {}
    try:
        parsed = json.loads(exc.body) if exc.body else {}
        if isinstance(parsed, dict):
            body = parsed
    except (TypeError, ValueError):
        pass
    reason = str(body.get("reason") or getattr(exc, "reason", "") or "")
    message = str(body.get("message") or getattr(exc, "reason", "") or f"HTTP {status}")
    causes = [
        {k: str(v) for k, v in cause.items()}
        for cause in ((body.get("details") or {}).get("causes") or [])
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
        verb = re.search(r"cannot (\w+) resource", message)
        reading = verb is not None and verb.group(1) in ("get", "list", "watch")
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


def _first_current_context(paths: list[str]) -> str | None:
    import yaml  # a dependency of the kubernetes client, which has been imported already

    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and data.get("current-context"):
            return str(data["current-context"])
    return None


def _warn_insecure(context: str | None, server: str) -> None:
    """One ktrain warning for an `insecure-skip-tls-verify` context, instead of urllib3's
    InsecureRequestWarning on every request."""
    import sys
    import warnings

    from urllib3.exceptions import InsecureRequestWarning

    warnings.filterwarnings("ignore", category=InsecureRequestWarning)
    if server.startswith("https://"):
        where = f"context {context!r}" if context else server
        sys.stderr.write(
            f"warning: TLS verification is off for {where} (insecure-skip-tls-verify): "
            "the server's identity is not checked\n"
        )


def connect(options: ConnectionOptions) -> KubeCluster:
    """Configure a client as kubectl would: --kubeconfig / $KUBECONFIG (several files merged),
    --context, else in-cluster config when running in a pod. Nothing is sent to the server yet."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    paths = kubeconfig_paths(options.kubeconfig)
    existing = [p for p in paths if os.path.isfile(p)]
    configuration = client.Configuration()
    context_name: str | None = None
    namespace = options.namespace
    if not existing:
        if options.kubeconfig or options.context or not _in_cluster_available():
            raise ClusterUnreachableError(
                "no kubeconfig found (looked at " + ", ".join(paths) + ")",
                hint="pass --kubeconfig FILE or set KUBECONFIG; `ktrain job render` needs no cluster",
            )
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise ClusterUnreachableError(f"in-cluster configuration failed: {exc}") from None
        if namespace is None:
            try:
                with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace", encoding="utf-8") as fh:
                    namespace = fh.read().strip() or None
            except OSError:
                namespace = None
    else:
        joined = os.pathsep.join(existing)
        try:
            contexts, active = config.list_kube_config_contexts(config_file=joined)
        except ConfigException as exc:
            raise UsageError(f"cannot use kubeconfig {joined}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a YAML error in a kubeconfig is the user's input error
            raise UsageError(f"cannot read kubeconfig {joined}: {type(exc).__name__}") from None
        by_name = {c.get("name"): c for c in contexts or []}
        if options.context is not None and options.context not in by_name:
            known = ", ".join(sorted(str(n) for n in by_name)) or "none"
            raise UsageError(
                f"context {options.context!r} not found in kubeconfig (known: {known})",
                hint="`kubectl config get-contexts` lists them",
            )
        # kubectl takes current-context from the first file that sets one; the client's merger
        # takes the last, so pick it ourselves.
        current = _first_current_context(existing)
        chosen = by_name.get(options.context or current) or (None if options.context or current else active)
        if not chosen:
            raise UsageError("the kubeconfig has no current context", hint="pass --context NAME")
        context_name = chosen.get("name")
        if namespace is None:
            namespace = (chosen.get("context") or {}).get("namespace") or None
        try:
            config.load_kube_config(
                config_file=joined, context=context_name, client_configuration=configuration, persist_config=False
            )
        except ConfigException as exc:
            raise UsageError(f"cannot use context {context_name!r}: {exc}") from None
    # Checked here too, not only when a path is built: a command's first request (discovery, or the
    # cluster-scoped runtimes) may not carry the namespace, and nothing at all is sent for a bad one.
    namespace = check_namespace(namespace or "default")
    configuration.retries = False  # one answer per request: the caller decides about retrying
    if configuration.verify_ssl is False:
        _warn_insecure(context_name, str(configuration.host))
    api_client = client.ApiClient(configuration)
    return KubeCluster(
        api_client,
        namespace=namespace,
        context=context_name,
        server=str(configuration.host),
        request_timeout=options.request_timeout,
    )
