"""The `kubernetes` client as a transport, for what ktrain's own (`ktrain.cluster.http_transport`)
leaves to it: legacy `auth-provider` plugins (gcp, azure, oidc), and HTTPS or SOCKS proxies.
`KTRAIN_KUBE_CLIENT=kubernetes` picks it for every connection.

It sends the same requests through the client's `ApiClient` (auth, TLS, proxies as the client's
kubeconfig loader configures them) and maps urllib3's failures to the same `TransportError`
kinds, so messages do not depend on the path taken. Importing it costs 0.3-0.5 s: it is
imported only when chosen.
"""

from __future__ import annotations

import contextlib
import json
import socket
from typing import Any

import urllib3
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from urllib3 import exceptions as u3

from ktrain.cluster.transport import MAX_BODY_BYTES, TransportError
from ktrain.errors import ClusterUnreachableError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ktrain.cluster.transport import Timeout


def from_kubeconfig(
    files: list[str], context: str, *, credentials: bool = True, proxy_url: str | None = None
) -> tuple[KubernetesTransport, str, bool]:
    """(transport, server URL, whether TLS verification is off) for `context` of `files`;
    `credentials=False` drops the user's (a plain-HTTP server: kubectl sends none there).
    `proxy_url`: the cluster's `proxy-url`, which kubernetes < 36 does not read itself."""
    configuration = client.Configuration()
    joined = ":".join(files)
    try:
        config.load_kube_config(
            config_file=joined, context=context, client_configuration=configuration, persist_config=False
        )
    except ConfigException as exc:
        raise UsageError(f"cannot use context {context!r}: {exc}") from None
    if proxy_url and not configuration.proxy:
        # kubernetes < 36 (pinned by the Kubeflow SDK 0.5) ignores `proxy-url`: requests would
        # bypass the proxy. Its pool manager takes an HTTP(S) proxy, not a SOCKS one.
        if not proxy_url.startswith(("http://", "https://")):
            raise UsageError(
                f"the installed kubernetes client ({_client_version()}) cannot use the cluster's proxy-url "
                f"{proxy_url.split('://', 1)[0]}://...",
                hint="pip install 'kubernetes>=36' (it reads proxy-url, SOCKS included)",
            )
        configuration.proxy = proxy_url
    if not credentials:
        configuration.api_key = {}
        configuration.refresh_api_key_hook = None
        configuration.username = configuration.password = None
        configuration.cert_file = configuration.key_file = None
    return _finish(configuration)


def _client_version() -> str:
    import kubernetes

    return str(getattr(kubernetes, "__version__", "unknown version"))


def in_cluster(token_file: str, ca_file: str) -> tuple[KubernetesTransport, str, bool]:
    from kubernetes.config.incluster_config import InClusterConfigLoader

    configuration = client.Configuration()
    try:
        InClusterConfigLoader(token_filename=token_file, cert_filename=ca_file).load_and_set(configuration)
    except ConfigException as exc:
        raise ClusterUnreachableError(f"in-cluster configuration failed: {exc}") from None
    return _finish(configuration)


def _finish(configuration: Any) -> tuple[KubernetesTransport, str, bool]:
    configuration.retries = False  # one answer per request: the caller decides about retrying
    insecure = configuration.verify_ssl is False
    if insecure:  # ktrain warns once (kube.connect), instead of urllib3 on every request
        import warnings

        warnings.filterwarnings("ignore", category=u3.InsecureRequestWarning)
    return KubernetesTransport(client.ApiClient(configuration)), str(configuration.host), insecure


class KubernetesTransport:
    kind = "kubernetes"

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> _Response:
        try:
            raw = _send(self.api_client, method, path, query, headers, body, timeout)
        except ValueError as exc:
            if "header" in str(exc).lower():  # http.client's message quotes the value: never show it
                raise UsageError(
                    "a header ktrain would send holds a line break (check the kubeconfig's token or token file)"
                ) from None
            raise transport_error(exc) from None
        except Exception as exc:  # noqa: BLE001 - every transport failure is mapped
            raise transport_error(exc) from None
        return _Response(raw)


def _send(
    api: Any,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    headers: dict[str, str],
    body: Any,
    timeout: Timeout,
) -> Any:
    """The request as the client's generated `ApiClient` builds it (its default headers and cookie,
    the `BearerToken` auth setting, which refreshes tokens through the client's hooks, the query
    percent-encoded, a dict body as JSON, which server-side apply takes as YAML), sent through the
    client's own urllib3 pool (TLS, proxy, SOCKS as its kubeconfig loader configured them), and
    handed back unread, whatever its status.

    Not through `ApiClient.call_api`: its signature changed at kubernetes 36 (`param_serialize`
    first), and before that it raises on every non-2xx answer after reading the body, while the
    Kubeflow SDK 0.5 pins kubernetes < 36. This one path serves every version from 29 on."""
    from urllib.parse import quote

    header_params = dict(headers)
    header_params.update(api.default_headers)
    if api.cookie:
        header_params["Cookie"] = api.cookie
    auth = api.configuration.auth_settings().get("BearerToken")
    if auth and auth.get("value") and auth.get("in") == "header":
        header_params[auth["key"]] = auth["value"]
    url = api.configuration.host + path
    if query:
        url += "?" + "&".join(f"{k}={quote(str(v))}" for k, v in query)
    if isinstance(timeout, (int, float)):
        pool_timeout: Any = urllib3.Timeout(total=timeout)
    elif isinstance(timeout, tuple):
        pool_timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
    else:
        pool_timeout = None
    data = None if body is None else json.dumps(api.sanitize_for_serialization(body))
    return api.rest_client.pool_manager.request(
        method, url, body=data, headers=header_params, timeout=pool_timeout, preload_content=False
    )


def transport_error(exc: BaseException) -> BaseException:
    """urllib3's failures in `TransportError` kinds (see ktrain.cluster.transport)."""
    if isinstance(exc, client.ApiException) and not exc.status:
        # The client wraps urllib3's SSLError in an ApiException of status 0:
        # reason "SSLError\n[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: <why> (_ssl.c:N)"
        text = str(exc.reason or "")
        if text.startswith("SSLError"):
            why = text.partition("certificate verify failed: ")[2].rpartition(" (_ssl")[0]
            return TransportError("tls", why.rstrip(".") if why else "", sent=False)
        return TransportError("unreachable", text.partition("\n")[0], sent=False)
    reason = exc.reason if isinstance(exc, u3.MaxRetryError) else exc
    if isinstance(reason, u3.ProxyError):
        return TransportError("proxy", str(getattr(reason, "original_error", "") or ""), sent=False)
    if isinstance(reason, u3.SSLError):
        inner = reason.args[0] if reason.args else reason
        return TransportError(
            "tls", str(getattr(inner, "verify_message", "") or getattr(inner, "reason", "") or ""), sent=False
        )
    # urllib3's NewConnectionError subclasses ConnectTimeoutError: test it first.
    if isinstance(reason, u3.NewConnectionError):
        text = str(reason)
        if (
            isinstance(reason, u3.NameResolutionError)
            or "Name or service not known" in text
            or "nodename nor servname" in text
        ):
            return TransportError("dns", sent=False)
        if "Connection refused" in text or "Errno 111" in text:
            return TransportError("refused", sent=False)
        inner = reason.__cause__ or reason.__context__
        detail = getattr(inner, "strerror", None) or type(inner or reason).__name__
        return TransportError("unreachable", str(detail), sent=False)
    if isinstance(reason, u3.ConnectTimeoutError):
        return TransportError("connect-timeout", sent=False)
    if isinstance(reason, (u3.ReadTimeoutError, TimeoutError, socket.timeout)):
        return TransportError("read-timeout", sent=True)
    if isinstance(reason, ConnectionRefusedError):
        return TransportError("refused", sent=False)
    if isinstance(reason, (u3.ProtocolError, ConnectionError)):
        inner = reason.args[1] if isinstance(reason, u3.ProtocolError) and len(reason.args) > 1 else reason
        return TransportError("closed", type(inner).__name__, sent=True)
    if isinstance(reason, u3.HTTPError):
        return TransportError("unreachable", type(reason).__name__, sent=False)
    return exc


class _Response:
    """urllib3's unread answer behind the transport's Response interface."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self.status = int(raw.status)
        self.reason = str(raw.reason or "")
        self._done = False  # read to the end: the connection may go back to the pool

    def read(self) -> bytes:
        try:
            data = self._raw.read(MAX_BODY_BYTES + 1, decode_content=True)
        except Exception as exc:  # noqa: BLE001
            self._raw.release_conn()
            raise transport_error(exc) from None
        if len(data) > MAX_BODY_BYTES:
            self._raw.close()
            raise TransportError("closed", "an answer larger than 256 MiB", sent=True)
        self._done = True
        self._raw.release_conn()
        return bytes(data)

    def chunks(self, size: int) -> Any:
        try:
            yield from self._raw.stream(size, decode_content=False)
            self._done = True
        except Exception as exc:  # noqa: BLE001
            raise transport_error(exc) from None
        finally:
            self.close()

    def close(self) -> None:
        if not self._done:
            self._raw.close()  # unread bytes must not reach the next request on this connection
        self._raw.release_conn()

    def abort(self) -> None:
        """`close()` would wait for the reading thread (it takes the buffered reader's lock, held
        during a blocking read); shutting the socket down makes the read return at once."""
        raw = self._raw
        sock = getattr(getattr(raw, "_connection", None), "sock", None)
        if sock is None:  # urllib3 gave the connection back already: reach the socket through the reader
            sock = getattr(getattr(getattr(getattr(raw, "_fp", None), "fp", None), "raw", None), "_sock", None)
        with contextlib.suppress(OSError):
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
