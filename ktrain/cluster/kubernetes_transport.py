"""The `kubernetes` client as a transport, for what ktrain's own (`ktrain.cluster.http_transport`)
leaves to it: legacy `auth-provider` plugins (gcp, azure, oidc), and HTTPS or SOCKS proxies.
`KTRAIN_KUBE_CLIENT=kubernetes` picks it for every connection.

It sends the same requests through the client's `ApiClient` (auth, TLS, proxies as the client's
kubeconfig loader configures them) and maps urllib3's failures to the same `TransportError`
kinds, so messages do not depend on the path taken. Importing it costs 0.3-0.5 s: it is
imported only when chosen.

Deadlines as the standard-library transport keeps them, as far as urllib3 allows: urllib3 bounds
each socket read, not a whole request, so the request and its answer's head run in a worker
thread the caller waits for until the deadline (a server that drip-feeds a head is given up on
then), and a watchdog shuts the socket down when the deadline passes while the body is read.
Answers are read as there (`StrictAnswer`: at most five 1xx answers, one plain Content-Length),
and bodies are capped at `MAX_BODY_BYTES`.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import urllib3
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from urllib3 import exceptions as u3

from ktrain.cluster.credentials import Credentials
from ktrain.cluster.http_transport import StrictAnswer
from ktrain.cluster.transport import MAX_BODY_BYTES, TransportError, encode_query
from ktrain.errors import ClusterUnreachableError, UsageError
from ktrain.util.text import printable

if TYPE_CHECKING:
    from ktrain.cluster.credentials import ClientCert
    from ktrain.cluster.transport import Timeout


# What the client's own loader is given of a user: client certificates (it needs them as files for
# urllib3) and `auth-provider` (only it implements those). Everything else about who a request is
# (tokens, token files, basic auth, exec plugins, impersonation) comes from the same
# `ktrain.cluster.credentials.Credentials` as on the standard-library transport, request by request.
CLIENT_USER_FIELDS = ("client-certificate", "client-certificate-data", "client-key", "client-key-data", "auth-provider")


def from_kubeconfig(
    cluster: dict[str, Any], user: dict[str, Any], context: str, *, proxy: str | None = None
) -> tuple[KubernetesTransport, str, bool]:
    """(transport, server URL, whether TLS verification is off) for the selected `cluster` and
    `user` (the merged kubeconfig's, read and checked once, by `ktrain.cluster.kubeconfig`; {} for a
    plain-HTTP server: kubectl sends no credentials there); `proxy`: the one
    `ktrain.cluster.kube.proxy_of` found, for clients whose loader does not read `proxy-url`
    (before kubernetes 36)."""
    configuration = client.Configuration()
    own = {k: v for k, v in user.items() if k in CLIENT_USER_FIELDS and v is not None}
    document = {  # null is the zero value, as in client-go's decoding: absent
        "clusters": [{"name": "c", "cluster": {k: v for k, v in cluster.items() if v is not None}}],
        "users": [{"name": "u", "user": own}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    try:
        config.load_kube_config_from_dict(
            document, context="c", client_configuration=configuration, persist_config=False
        )
    except ConfigException as exc:
        raise UsageError(f"cannot use context {context!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - an auth-provider the client cannot load (gcp without an access token...)
        provider = user.get("auth-provider")
        name = provider.get("name") if isinstance(provider, dict) else None
        raise UsageError(
            f"cannot use context {context!r}: the kubernetes client could not load "
            + (f"its auth-provider {name!r}" if isinstance(name, str) else "its user")
            + f" ({type(exc).__name__})",
            hint="gcp and azure auth-providers were removed from kubectl 1.26: use an exec plugin "
            "(gke-gcloud-auth-plugin, kubelogin) instead",
        ) from None
    rest = {k: v for k, v in user.items() if k not in CLIENT_USER_FIELDS}
    if user.get("auth-provider"):  # the client's order: an auth-provider's token wins
        rest = {k: v for k, v in rest.items() if k.startswith("as")}
    if own.get("client-certificate") or own.get("client-certificate-data"):
        rest.pop("exec", None)  # a static client certificate wins over an exec plugin, as on stdlib
    if proxy and proxy.startswith("socks"):
        import importlib.util

        if importlib.util.find_spec("socks") is None:
            raise UsageError(
                "the cluster's proxy is a SOCKS proxy, and urllib3 needs PySocks for it, which is not installed",
                hint="pip install pysocks (or 'urllib3[socks]'), or use an http:// proxy",
            )
    if proxy and not configuration.proxy:
        # kubernetes < 36 (which the Kubeflow SDK 0.5 pins) ignores `proxy-url`: requests would
        # bypass the proxy. Its pool manager takes an HTTP(S) proxy, not a SOCKS one.
        if not proxy.startswith(("http://", "https://")):
            raise UsageError(
                f"the installed kubernetes client ({_client_version()}) cannot use the proxy "
                f"{proxy.split('://', 1)[0]}://...",
                hint="pip install 'kubernetes>=36' (it reads proxy-url, SOCKS included)",
            )
        configuration.proxy = proxy
    return _finish(configuration, Credentials(rest, cluster=cluster))


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


def _finish(configuration: Any, credentials: Credentials | None = None) -> tuple[KubernetesTransport, str, bool]:
    configuration.retries = False  # one answer per request: the caller decides about retrying
    insecure = configuration.verify_ssl is False
    if insecure:  # ktrain warns once (kube.connect), instead of urllib3 on every request
        import warnings

        warnings.filterwarnings("ignore", category=u3.InsecureRequestWarning)
    api = client.ApiClient(configuration)
    _strict_answers(api.rest_client.pool_manager)
    return KubernetesTransport(api, credentials), str(configuration.host), insecure


def _strict_answers(pool_manager: Any) -> None:
    """Read every answer through the standard-library transport's `StrictAnswer` (at most MAX_INTERIM
    1xx answers, one plain Content-Length), as Go's client and ktrain's own transport do: urllib3
    uses http.client's answer, which skips any number of `100 Continue` and takes a 103 as final.
    Each of the pool manager's pool classes (plain, TLS, SOCKS) gets a subclass whose connection
    class answers with it; urllib3 wraps whatever `response_class` gives (urllib3 2.x)."""
    classes = dict(pool_manager.pool_classes_by_scheme)
    for scheme, pool_class in classes.items():
        base = pool_class.ConnectionCls
        connection = type(f"Strict{base.__name__}", (base,), {"response_class": StrictAnswer})
        classes[scheme] = type(f"Strict{pool_class.__name__}", (pool_class,), {"ConnectionCls": connection})
    pool_manager.pool_classes_by_scheme = classes


class KubernetesTransport:
    kind = "kubernetes"

    def __init__(self, api_client: Any, credentials: Credentials | None = None) -> None:
        self.api_client = api_client
        self.credentials = credentials
        self._cert: ClientCert | None = None

    def _use_cert(self, cert: ClientCert) -> None:
        """An exec plugin's client certificate: the client's pool reads it from files (written as
        the client's own loader writes an exec plugin's, in private temporary files)."""
        if cert == self._cert or cert.cert_data is None or cert.key_data is None:
            return
        from kubernetes.client import rest
        from kubernetes.config.kube_config import _create_temp_file_with_content

        configuration = self.api_client.configuration
        configuration.cert_file = _create_temp_file_with_content(cert.cert_data)
        configuration.key_file = _create_temp_file_with_content(cert.key_data)
        self.api_client.rest_client = rest.RESTClientObject(configuration)
        _strict_answers(self.api_client.rest_client.pool_manager)
        self._cert = cert

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> _Response:
        response = self._send(method, path, query, headers, body, timeout)
        if response.status == 401 and self.credentials is not None and self.credentials.refresh():
            response.close()  # a rotated token file, an expired exec credential: once more, as stdlib does
            response = self._send(method, path, query, headers, body, timeout)
        return response

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> _Response:
        # Straight to the client's urllib3 pool (proxies, TLS and client certificates as its
        # kubeconfig loader set them up), not through `ApiClient.call_api`: that changed shape at
        # kubernetes 36 (`param_serialize`), and before it raised on any status outside 2xx and
        # JSON-encoded every body again. This path is the same for every client ktrain supports.
        api = self.api_client
        configuration = api.configuration
        sent = urllib3.HTTPHeaderDict({**api.default_headers, **headers})
        if self.credentials is not None:  # one header per impersonated group: a multi-valued dict
            own, cert = self.credentials.for_request()
            if cert is not None:
                self._use_cert(cert)
            for name, value in own:
                sent.add(name, value)
        auth = configuration.auth_settings().get("BearerToken")  # refreshes an auth-provider token
        if auth and auth.get("value"):
            sent[auth["key"]] = auth["value"]
        payload = None
        if body is not None:
            from ktrain.util.jsondata import dumps

            payload = dumps(body).encode("utf-8")
        url = str(configuration.host) + path + encode_query(query)
        seconds: float | None
        if isinstance(timeout, tuple):  # a stream: the deadline covers its head, then each read
            seconds, stream, limit = timeout[0], True, urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            seconds, stream, limit = timeout, False, urllib3.Timeout(total=timeout)
        deadline = None if seconds is None else time.monotonic() + seconds
        pool = api.rest_client.pool_manager
        raw = _within(
            deadline,
            lambda: pool.request(
                method, url, body=payload, headers=sent, preload_content=False, timeout=limit, retries=False
            ),
        )
        return _Response(raw, None if stream else deadline)


def _within(deadline: float | None, send: Any) -> Any:
    """`send()`'s answer (its head read), or TransportError("read-timeout") once the deadline
    passes first: urllib3 bounds each read of the socket, not the whole head."""
    if deadline is None:
        return _sent(send)
    outcome: dict[str, Any] = {}
    lock = threading.Lock()

    def work() -> None:
        try:
            result = _sent(send)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            result, outcome["error"] = None, exc
        with lock:
            outcome["answer"] = result
            late = outcome.get("abandoned")
        if late and result is not None:
            result.close()  # the caller has given up: the connection is not reused

    worker = threading.Thread(target=work, name="ktrain-request", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    with lock:
        if "answer" not in outcome:
            outcome["abandoned"] = True
            raise TransportError("read-timeout", sent=True)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["answer"]


def _sent(send: Any) -> Any:
    try:
        return send()
    except ValueError as exc:
        if "header" in str(exc).lower():  # http.client's message quotes the value: never show it
            raise UsageError(
                "a header ktrain would send holds a line break (check the kubeconfig's token or token file)"
            ) from None
        raise transport_error(exc) from None
    except Exception as exc:  # noqa: BLE001 - every transport failure is mapped
        raise transport_error(exc) from None


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
        if isinstance(inner, (http.client.HTTPException, ValueError)) and not isinstance(inner, ConnectionError):
            from ktrain.cluster.http_transport import protocol_detail

            return TransportError("protocol", protocol_detail(inner), sent=True)
        return TransportError("closed", type(inner).__name__, sent=True)
    if isinstance(reason, (u3.ProtocolError, u3.DecodeError, u3.InvalidHeader, u3.ResponseError)):
        return TransportError("protocol", type(reason).__name__, sent=True)
    if isinstance(reason, u3.HTTPError):
        return TransportError("unreachable", type(reason).__name__, sent=False)
    if isinstance(reason, Exception) and not isinstance(reason, TransportError):
        # http.client's own (BadStatusLine, LineTooLong, IncompleteRead...) and whatever else
        # a broken answer makes a client raise: never an internal error
        return TransportError("protocol", type(reason).__name__, sent=True)
    return exc


class _Response:
    """urllib3's unread answer behind the transport's Response interface."""

    def __init__(self, raw: Any, deadline: float | None) -> None:
        self._raw = raw
        self.status = int(raw.status)

        self.reason = printable(str(raw.reason or ""))
        self._deadline = deadline
        self._done = False  # read to the end: the connection may go back to the pool

    def _watchdog(self) -> threading.Timer | None:
        """A timer that shuts the socket down when the deadline passes (urllib3 bounds each read
        only, and a server may drip-feed the body)."""
        if self._deadline is None:
            return None
        timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), self.abort)
        timer.daemon = True
        timer.start()
        return timer

    def _failure(self, exc: BaseException) -> BaseException:
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return TransportError("read-timeout", sent=True)
        return transport_error(exc)

    def read(self) -> bytes:
        announced = str(self._raw.headers.get("content-length") or "").strip()
        if announced.isascii() and announced.isdigit() and len(announced) < 19 and int(announced) > MAX_BODY_BYTES:
            self._raw.close()
            raise _too_large(f"{int(announced)} bytes")
        parts: list[bytes] = []
        total = 0
        timer = self._watchdog()
        try:
            while True:
                piece = self._raw.read(65536, decode_content=True)
                if not piece:
                    break
                total += len(piece)
                if total > MAX_BODY_BYTES:
                    self._raw.close()
                    raise _too_large(f"more than {MAX_BODY_BYTES} bytes")
                parts.append(piece)
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001
            self._raw.close()
            self._raw.release_conn()
            raise self._failure(exc) from None
        finally:
            if timer is not None:
                timer.cancel()
        self._done = True
        self._raw.release_conn()
        return b"".join(parts)

    def chunks(self, size: int) -> Any:
        timer = self._watchdog()
        try:
            yield from self._raw.stream(size, decode_content=False)
            self._done = True
        except Exception as exc:  # noqa: BLE001
            raise self._failure(exc) from None
        finally:
            if timer is not None:
                timer.cancel()
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


def _too_large(size: str) -> TransportError:
    return TransportError("too-large", f"{size}; ktrain reads at most {MAX_BODY_BYTES // (1024 * 1024)} MiB", sent=True)
