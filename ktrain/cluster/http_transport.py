"""HTTPS/JSON to the API server with the standard library (`socket`, `ssl`; HTTP/1.1 framing in
`ktrain.cluster.http_wire`).

Why not the `kubernetes` package here: importing it costs 0.3-0.5 s (its pydantic models,
urllib3, requests-oauthlib), several times what `kubectl get` takes in all; a `job list` needs
one or two GETs. This module does what those requests need, with client-go's rules:

- TLS: the cluster's `certificate-authority[-data]` only (not the system roots) when given, else
  the system roots; `tls-server-name` for SNI and the hostname check; `insecure-skip-tls-verify`;
  client certificates (in-memory ones are handed to OpenSSL through an anonymous memory file,
  never a file on disk, where the platform has one).
- Proxies: the cluster's `proxy-url` (`http://`), else `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`
  as Go's `http.ProxyFromEnvironment` reads them (never for localhost or a loopback address).
  `https://` and `socks5://` proxies are left to the `kubernetes` client (`kube.connect` picks it).
- One keep-alive connection reused across a command's requests; an idempotent GET that finds a
  reused connection closed by the server is sent once more on a new one (Go's net/http does the
  same); nothing else is retried.
- A 401 refreshes what can be refreshed (a token file, an exec plugin's credential) and sends
  the request once more, as a new client-go request would.

Failures come out as `StatusError` / `TransportError` (`ktrain.cluster.transport`).
"""

from __future__ import annotations

import os
import socket
import threading

from ktrain.cluster import http_wire
from ktrain.cluster.transport import MAX_BODY_BYTES, TransportError, encode_query
from ktrain.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterator
    from typing import Any

    from ktrain.cluster.credentials import ClientCert, Credentials
    from ktrain.cluster.transport import Timeout

_IDEMPOTENT = ("GET", "HEAD")
_CLOSED_BEFORE_ANSWER = (http_wire.ClosedBeforeAnswer, BrokenPipeError, ConnectionResetError)


def _user_agent() -> str:
    from ktrain import __version__

    return f"ktrain/{__version__} (python)"


class Endpoint:
    """Where to connect: the server's scheme, host, port and path prefix, maybe through a proxy."""

    __slots__ = ("authority", "base_path", "host", "port", "proxy", "proxy_auth", "scheme", "server")

    def __init__(self, server: str, proxy_url: str | None) -> None:
        split = split_server(server)
        if split is None:
            raise UsageError(f"the kubeconfig's server {server!r} is not an https:// (or http://) URL")
        self.server = server
        self.scheme, self.host, port, self.base_path, self.authority = split
        # base_path: e.g. Rancher's /k8s/clusters/c-xxxxx; authority: the Host header (and a
        # tunnel's target), host[:port] as the URL spells it, as Go sends it
        self.port = port or (443 if self.scheme == "https" else 80)
        self.proxy: tuple[str, int] | None = None
        self.proxy_auth: str | None = None
        if proxy_url:
            from urllib.parse import urlsplit

            proxy = urlsplit(proxy_url)
            if proxy.scheme != "http" or not proxy.hostname:
                raise UsageError(f"ktrain's own client speaks to http:// proxies only, not {proxy.scheme}://")
            self.proxy = (proxy.hostname, proxy.port or 80)
            if proxy.username:
                import base64
                from urllib.parse import unquote

                pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
                self.proxy_auth = "Basic " + base64.b64encode(pair).decode("ascii")


def split_server(server: str) -> tuple[str, str, int | None, str, str] | None:
    """(scheme, host, port or None, path without a trailing /, host[:port]) of an http(s) URL
    with no query or fragment, as `urllib.parse.urlsplit` reads it (the host lower-cased, IPv6
    without brackets); None when it is not one. Plain string work: urllib.parse and the
    ipaddress module it imports cost every cluster command 2-3 ms."""
    scheme, sep, rest = server.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https") or "?" in rest or "#" in rest:
        return None
    netloc, slash, path = rest.partition("/")
    authority = netloc.rpartition("@")[2]
    if authority.startswith("["):
        host, bracket, after = authority[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            return None
        port_text = after[1:]
    else:
        host, _, port_text = authority.partition(":")
        if ":" in port_text:
            return None
    if not host or any(ch in host for ch in " \t\r\n\\"):
        return None
    port: int | None = None
    if port_text:
        if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
            return None
        port = int(port_text)
    return scheme, host.lower(), port, ("/" + path).rstrip("/") if slash else "", authority


def env_proxy(server: str) -> str | None:
    """The proxy Go's `http.ProxyFromEnvironment` picks for `server`, or None."""
    names = ("https_proxy", "HTTPS_PROXY") if server.lower().startswith("https:") else ("http_proxy", "HTTP_PROXY")
    proxy = next((os.environ[n] for n in names if os.environ.get(n)), None)
    if not proxy:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(server)
    host = (parts.hostname or "").lower()
    if host == "localhost" or _loopback(host):
        return None
    no_proxy = next((os.environ[n] for n in ("no_proxy", "NO_PROXY") if os.environ.get(n)), "")
    if _bypassed(host, parts.port, no_proxy):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """golang.org/x/net/http/httpproxy: `*`, CIDRs, IPs, `host`, `.domain` (and `domain` matching
    its subdomains), each optionally with `:port`."""
    import ipaddress

    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        try:
            if ipaddress.ip_address(host.strip("[]")) in ipaddress.ip_network(entry, strict=False):
                return True
            continue
        except ValueError:
            pass
        name, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and port is not None and entry_port != str(port):
            continue
        name = name.lstrip("*")
        if host == name.lstrip(".") or (name.startswith(".") and host.endswith(name)) or host.endswith("." + name):
            return True
    return False


def ssl_context(cluster: dict[str, Any], cert: ClientCert | None) -> ssl.SSLContext:
    import ssl

    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    ca_data = cluster.get("certificate-authority-data")
    ca_file = cluster.get("certificate-authority")
    if insecure:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        try:
            if ca_data:
                import base64

                pem = base64.b64decode(str(ca_data)).decode("ascii", "replace")
                context = ssl.create_default_context(cadata=pem)
            elif ca_file:
                context = ssl.create_default_context(cafile=str(ca_file))
            else:
                context = ssl.create_default_context()
        except (ssl.SSLError, ValueError) as exc:
            raise UsageError(
                f"the kubeconfig's certificate authority is not a PEM certificate ({type(exc).__name__})"
            ) from None
        except OSError as exc:
            raise UsageError(f"cannot read the kubeconfig's certificate-authority {ca_file}: {exc.strerror}") from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # client-go's default floor
    if cert is not None:
        _load_cert(context, cert)
    return context


def _load_cert(context: ssl.SSLContext, cert: ClientCert) -> None:
    import ssl

    try:
        with (
            _pem_file(cert.cert_data, cert.cert_file) as cert_path,
            _pem_file(cert.key_data, cert.key_file) as key_path,
        ):
            context.load_cert_chain(cert_path, key_path)
    except ssl.SSLError:
        raise UsageError(
            "the kubeconfig's client certificate and key could not be loaded (not PEM, or the key does not match)"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot read the kubeconfig's client certificate or key: {exc.strerror}") from None


class _pem_file:
    """A path OpenSSL can read `data` from: an anonymous memory file (Linux), else a private
    temporary file removed as soon as the certificate is loaded."""

    def __init__(self, data: bytes | None, path: str | None) -> None:
        self.data, self.path = data, path
        self.fd: int | None = None
        self.tmpdir: str | None = None

    def __enter__(self) -> str:
        if self.data is None:
            return str(self.path)
        if hasattr(os, "memfd_create"):
            self.fd = os.memfd_create("ktrain-client-credential", os.MFD_CLOEXEC)
            os.write(self.fd, self.data)
            return f"/proc/self/fd/{self.fd}"
        import tempfile

        self.tmpdir = tempfile.mkdtemp(prefix="ktrain-")  # mode 0700
        path = os.path.join(self.tmpdir, "pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(self.data)
        return path

    def __exit__(self, *_: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
        if self.tmpdir is not None:
            import shutil

            shutil.rmtree(self.tmpdir, ignore_errors=True)


def _split_timeout(timeout: Timeout) -> tuple[float | None, float | None]:
    if isinstance(timeout, tuple):
        return timeout[0], timeout[1]
    return timeout, timeout


class HttpTransport:
    kind = "stdlib"

    def __init__(
        self,
        endpoint: Endpoint,
        credentials: Credentials,
        cluster: dict[str, Any],
        *,
        tls_server_name: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.credentials = credentials
        self.cluster = cluster
        self.server_hostname = tls_server_name or endpoint.host
        self._context: ssl.SSLContext | None = None
        self._context_cert: ClientCert | None = None
        self._idle: list[http_wire.Connection] = []
        # ASCII names as bytes: ssl then skips the `idna` codec (and its unicodedata import)
        name = self.server_hostname
        self._sni: str | bytes = name.encode("ascii") if name.isascii() else name
        self._lock = threading.Lock()
        self._agent = _user_agent()

    # -- connections ----------------------------------------------------------------------------

    def _tls(self, cert: ClientCert | None) -> ssl.SSLContext:
        if self._context is None or cert != self._context_cert:
            self._context, self._context_cert = ssl_context(self.cluster, cert), cert
            with self._lock:
                idle, self._idle = self._idle, []
            for conn in idle:
                conn.close()
        return self._context

    def _new_connection(self, connect_timeout: float | None, cert: ClientCert | None) -> http_wire.Connection:
        """TCP (through the proxy's CONNECT tunnel, if any), then TLS, within `connect_timeout`."""
        ep = self.endpoint
        host, port = ep.proxy or (ep.host, ep.port)
        sock: socket.socket | None = None
        try:
            # an ASCII name as bytes: getaddrinfo then skips the `idna` codec (and its imports)
            name = host.encode("ascii") if host.isascii() else host
            sock = socket.create_connection((name, port), connect_timeout)  # type: ignore[arg-type]  # bytes work
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ep.proxy and ep.scheme == "https":
                plain = http_wire.Connection(sock)
                http_wire.connect_tunnel(plain, f"{_bracketed(ep.host)}:{ep.port}", ep.proxy_auth)
                plain.reader.close()  # nothing is buffered: the server speaks only after the ClientHello
            if ep.scheme == "https":
                sock = self._tls(cert).wrap_socket(sock, server_hostname=self._sni)
        except BaseException as exc:
            if sock is not None:
                sock.close()
            raise _connect_failure(exc) from None
        return http_wire.Connection(sock)

    def _checkout(self, connect_timeout: float | None, cert: ClientCert | None) -> tuple[http_wire.Connection, bool]:
        if self.endpoint.scheme == "https":
            self._tls(cert)  # a new client certificate (exec plugin) retires the idle connections
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new_connection(connect_timeout, cert), False

    def _checkin(self, conn: http_wire.Connection) -> None:
        with self._lock:
            if len(self._idle) < 4:
                self._idle.append(conn)
                return
        conn.close()

    # -- requests -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> _Response:
        payload = None
        if body is not None:
            from ktrain.util.jsondata import dumps

            payload = dumps(body).encode("utf-8")
        target = self.endpoint.base_path + path + encode_query(query)
        if self.endpoint.proxy and self.endpoint.scheme == "http":
            target = f"http://{self.endpoint.host}:{self.endpoint.port}{target}"  # absolute-form through a proxy
        response = self._send(method, target, headers, payload, timeout)
        if response.status == 401 and self.credentials.refresh():
            response.close()
            response = self._send(method, target, headers, payload, timeout)
        return response

    def _send(
        self, method: str, target: str, headers: dict[str, str], payload: bytes | None, timeout: Timeout
    ) -> _Response:
        connect_timeout, read_timeout = _split_timeout(timeout)
        auth, cert = self.credentials.for_request()
        pairs = [("User-Agent", self._agent), *headers.items(), *auth]
        if self.endpoint.proxy and self.endpoint.scheme == "http" and self.endpoint.proxy_auth:
            pairs.append(("Proxy-Authorization", self.endpoint.proxy_auth))
        for name, value in pairs:
            if any(ch in value for ch in "\r\n\0"):  # never echo the value: it may be a token
                raise UsageError(f"the {name} header ktrain would send holds a line break (check the kubeconfig)")
        head = http_wire.request_head(
            method, target, self.endpoint.authority, pairs, None if payload is None else len(payload)
        )
        for attempt in (0, 1):
            conn, reused = self._checkout(connect_timeout, cert)
            try:
                conn.sock.settimeout(read_timeout)
                conn.send(head + payload if payload is not None else head)
                status, reason, answer_headers, http10 = http_wire.read_head(conn.reader)
                empty = method == "HEAD" or status in (204, 304)
                body = http_wire.Body(conn.reader, answer_headers, empty=empty, http10=http10)
            except _CLOSED_BEFORE_ANSWER as exc:
                conn.close()
                if reused and attempt == 0 and method in _IDEMPOTENT:
                    continue  # the server closed an idle connection: try a new one, once
                name = "RemoteDisconnected" if isinstance(exc, http_wire.ClosedBeforeAnswer) else type(exc).__name__
                raise TransportError("closed", name, sent=True) from None
            except BaseException as exc:
                conn.close()
                raise _sent_failure(exc) from None
            return _Response(self, conn, status, reason, body)
        raise AssertionError("unreachable")


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _connect_failure(exc: BaseException) -> BaseException:
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return TransportError("tls", str(exc.verify_message or exc.reason or ""), sent=False)
    if isinstance(exc, ssl.SSLError):
        return TransportError("tls", str(exc.reason or type(exc).__name__), sent=False)
    if isinstance(exc, ConnectionRefusedError):
        return TransportError("refused", sent=False)
    if isinstance(exc, socket.gaierror):
        return TransportError("dns", sent=False)
    if isinstance(exc, TimeoutError):
        return TransportError("connect-timeout", sent=False)
    if isinstance(exc, http_wire.TunnelRefused):
        return TransportError("proxy", str(exc), sent=False)
    if isinstance(exc, http_wire.WireError):
        return TransportError("proxy", f"a broken answer to CONNECT: {exc}", sent=False)
    if isinstance(exc, OSError):
        return TransportError("unreachable", exc.strerror or type(exc).__name__, sent=False)
    return exc


def _sent_failure(exc: BaseException) -> BaseException:
    if isinstance(exc, TimeoutError):
        return TransportError("read-timeout", sent=True)
    if isinstance(exc, http_wire.WireError):
        return TransportError("closed", f"a broken answer: {exc}", sent=True)
    if isinstance(exc, OSError):
        return TransportError("closed", type(exc).__name__, sent=True)
    return exc


class _Response:
    """One answer; its connection goes back to the transport once the body is read to its end."""

    def __init__(
        self, transport: HttpTransport, conn: http_wire.Connection, status: int, reason: str, body: http_wire.Body
    ) -> None:
        self._transport = transport
        self._conn: http_wire.Connection | None = conn
        self._sock = conn.sock
        self._body = body
        self.status = status
        self.reason = reason

    def read(self) -> bytes:
        try:
            data = self._body.read(MAX_BODY_BYTES)
        except BaseException as exc:
            self._drop()
            raise _sent_failure(exc) from None
        self.close()
        return data

    def chunks(self, size: int) -> Iterator[bytes]:
        try:
            yield from self._body.pieces(size)
        except GeneratorExit:
            self._drop()
            raise
        except BaseException as exc:
            self._drop()
            error = _sent_failure(exc)
            if error is exc:
                raise
            raise error from None
        self.close()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._body.done and self._body.reusable:
            self._transport._checkin(conn)
        else:
            conn.close()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def abort(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
