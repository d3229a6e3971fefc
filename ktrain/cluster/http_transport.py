"""HTTPS/JSON to the API server with the standard library (`socket`, `ssl`, and `http.client`
for the HTTP/1.1 framing of requests and answers).

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
- Deadlines as Go's `http.Client.Timeout` (kubectl's `--request-timeout`): one deadline for the
  whole request (connect, TLS handshake, sending, the head and the body), checked on every read,
  so a server that drip-feeds an answer is cut when the time is up; at most `MAX_INTERIM` 1xx
  answers before the real one (Go allows 5). Streams (log follows, watches) have a deadline for
  their head and then an idle limit on each read instead of a total.
- Bounded answers: a body is read whole only up to `transport.MAX_BODY_BYTES`.

Why `http.client` although it imports the `email` package (about 16 ms of every cluster
command): ktrain once framed HTTP itself to save that, and met the bugs a well-kept parser fixed
long ago (`str.isdigit` taking `²00`, a 5,000-digit Content-Length, errors inside a body). On top
of `http.client` only what Go's client is stricter about: a Content-Length must be one plain
number, and 1xx answers are counted.

Failures come out as `StatusError` / `TransportError` (`ktrain.cluster.transport`).
"""

from __future__ import annotations

import http.client
import io
import os
import socket
import time
from _thread import allocate_lock  # threading.Lock, without importing threading (~1 ms)

from ktrain.cluster.transport import MAX_BODY_BYTES, TransportError, encode_query
from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterator
    from typing import Any

    from ktrain.cluster.credentials import ClientCert, Credentials
    from ktrain.cluster.transport import Timeout

_IDEMPOTENT = ("GET", "HEAD")
# What a reused connection that the server had closed meets: a GET is then sent once more.
_CLOSED_BEFORE_ANSWER = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
MAX_INTERIM = 5  # 1xx answers before the final one (Go's net/http: 5)


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


# --- the connection: one socket, one buffered reader, every read within the request's time ------


class _Raw(io.RawIOBase):
    """The socket as http.client reads it. Every read waits at most until the request's deadline
    (and at most `idle` seconds on a stream), so a server that drip-feeds an answer is cut when the
    request's time is up, not when it stops sending."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline: float | None = None
        self.idle: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        wait = self.idle
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's time is up")
            wait = left if wait is None else min(wait, left)
        self.sock.settimeout(wait)
        return self.sock.recv_into(buffer)


class _Reader(io.BufferedReader):
    """One buffered reader for the connection's life: http.client closes the reader of every
    answer it has read, while the next answer on a kept-alive connection (or after a 1xx) reads on
    from the same buffer. `_Conn.close` closes it for real."""

    def close(self) -> None:
        pass

    def flush(self) -> None:  # http.client flushes a reader it closes, maybe after `release`
        pass

    def release(self) -> None:
        super().close()


class _Conn:
    """A connected (maybe TLS) socket, as http.client's HTTPConnection and HTTPResponse use it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.raw = _Raw(sock)
        self.reader = _Reader(self.raw, 65536)
        self.http = http.client.HTTPConnection("localhost")  # never connects: `sock` is set
        self.http.auto_open = 0
        self.http.response_class = StrictAnswer
        self.http.sock = self  # what it needs of a socket: sendall, makefile, close

    def makefile(self, mode: str) -> _Reader:
        return self.reader

    def sendall(self, data: bytes) -> None:
        deadline = self.raw.deadline
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's time is up")
            self.sock.settimeout(left)  # sendall's timeout bounds the whole call
        self.sock.sendall(data)

    def close(self) -> None:
        try:
            self.reader.release()
        finally:
            self.sock.close()


class StrictAnswer(http.client.HTTPResponse):
    """http.client's answer, with what Go's client is stricter about: at most MAX_INTERIM 1xx
    answers (http.client skips any number of `100 Continue` and takes 102/103 as final), and a
    Content-Length that is one plain number (http.client reads a bad one as "until the close")."""

    _interim = 0

    def _read_status(self) -> tuple[str, int, str]:
        while True:
            version, status, reason = super()._read_status()  # type: ignore[misc]
            if not 100 <= status < 200 or status == 101:  # 101: final (an upgrade, never asked for)
                return version, status, reason
            self._interim += 1
            if self._interim > MAX_INTERIM:
                raise http.client.HTTPException(f"more than {MAX_INTERIM} interim (1xx) answers")
            if status == 100:
                return version, status, reason  # begin() skips its headers and reads on
            http.client.parse_headers(self.fp)  # 102, 103: skip its headers, read on

    def begin(self) -> None:
        super().begin()
        lengths = self.headers.get_all("content-length") or []
        if lengths and not self.chunked:
            values = {v.strip() for value in lengths for v in value.split(",")}
            if len(values) != 1 or not all(v.isascii() and v.isdigit() and len(v) <= 18 for v in values):
                raise http.client.HTTPException("a Content-Length that is not one number")


def _deadline(seconds: float | None) -> float | None:
    return None if seconds is None else time.monotonic() + seconds


def _split_timeout(timeout: Timeout) -> tuple[float | None, float | None, bool]:
    """(seconds for the whole request, or for a stream's head; a stream's idle limit; stream?)"""
    if isinstance(timeout, tuple):
        return timeout[0], timeout[1], True
    return timeout, None, False


def _handshake(sock: ssl.SSLSocket, deadline: float | None) -> None:
    """The TLS handshake within the deadline as a whole (a blocking handshake bounds each read
    only, and a server can drip its certificate a byte at a time)."""
    import select
    import ssl

    sock.setblocking(False)
    try:
        while True:
            try:
                sock.do_handshake()
                return
            except ssl.SSLWantReadError:
                want: tuple[list[Any], list[Any]] = ([sock], [])
            except ssl.SSLWantWriteError:
                want = ([], [sock])
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError("the TLS handshake took too long")
            select.select(want[0], want[1], [], left)
    finally:
        sock.setblocking(True)


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
        self._idle: list[_Conn] = []
        # ASCII names as bytes: ssl then skips the `idna` codec (and its unicodedata import)
        name = self.server_hostname
        self._sni: str | bytes = name.encode("ascii") if name.isascii() else name
        self._lock = allocate_lock()
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

    def _new_connection(self, deadline: float | None, cert: ClientCert | None) -> _Conn:
        """TCP (through the proxy's CONNECT tunnel, if any), then TLS, before the deadline."""
        ep = self.endpoint
        host, port = ep.proxy or (ep.host, ep.port)
        sock: Any = None
        try:
            # an ASCII name as bytes: getaddrinfo then skips the `idna` codec (and its imports)
            name = host.encode("ascii") if host.isascii() else host
            left = None if deadline is None else max(0.001, deadline - time.monotonic())
            sock = socket.create_connection((name, port), left)  # type: ignore[arg-type]  # bytes work
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ep.proxy and ep.scheme == "https":
                _tunnel(sock, f"{_bracketed(ep.host)}:{ep.port}", ep.proxy_auth, deadline)
            if ep.scheme == "https":
                sock = self._tls(cert).wrap_socket(sock, server_hostname=self._sni, do_handshake_on_connect=False)
                _handshake(sock, deadline)
        except BaseException as exc:
            if sock is not None:
                sock.close()
            raise _connect_failure(exc) from None
        return _Conn(sock)

    def _checkout(self, deadline: float | None, cert: ClientCert | None) -> tuple[_Conn, bool]:
        if self.endpoint.scheme == "https":
            self._tls(cert)  # a new client certificate (exec plugin) retires the idle connections
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new_connection(deadline, cert), False

    def _checkin(self, conn: _Conn) -> None:
        conn.raw.deadline = conn.raw.idle = None
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
        auth, cert = self.credentials.for_request()
        seconds, idle, stream = _split_timeout(timeout)
        deadline = _deadline(seconds)  # after the credentials: an exec plugin has its own bound
        pairs = [("Host", self.endpoint.authority), ("User-Agent", self._agent), *headers.items(), *auth]
        if self.endpoint.proxy and self.endpoint.scheme == "http" and self.endpoint.proxy_auth:
            pairs.append(("Proxy-Authorization", self.endpoint.proxy_auth))
        if payload is not None:
            pairs.append(("Content-Length", str(len(payload))))
        for name, value in pairs:
            if any(ch in value for ch in "\r\n\0"):  # never echo the value: it may be a token
                raise UsageError(f"the {name} header ktrain would send holds a line break (check the kubeconfig)")
        for attempt in (0, 1):
            conn, reused = self._checkout(deadline, cert)
            conn.raw.deadline, conn.raw.idle = deadline, None
            try:
                h = conn.http
                h.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
                for name, value in pairs:
                    h.putheader(name, value)
                h.endheaders(payload)
                answer: Any = h.getresponse()  # a StrictAnswer (response_class)
            except _CLOSED_BEFORE_ANSWER as exc:
                conn.close()
                if reused and attempt == 0 and method in _IDEMPOTENT:
                    continue  # the server closed an idle connection: try a new one, once
                raise TransportError("closed", type(exc).__name__, sent=True) from None
            except Exception as exc:  # noqa: BLE001 - every failure of the exchange is mapped
                conn.close()
                raise _sent_failure(exc) from None
            except BaseException:  # Ctrl-C: the connection is in an unknown state
                conn.close()
                raise
            if stream:
                conn.raw.deadline, conn.raw.idle = None, idle  # a stream: no total, an idle limit
            return _Response(self, conn, answer)
        raise AssertionError("unreachable")


def _tunnel(sock: socket.socket, authority: str, proxy_auth: str | None, deadline: float | None) -> None:
    """Ask an HTTP proxy for a tunnel to `authority` (host:port); `_TunnelRefused` when it refuses."""
    plain = _Conn(sock)
    plain.raw.deadline = deadline
    h = plain.http
    h.putrequest("CONNECT", authority, skip_host=True, skip_accept_encoding=True)
    h.putheader("Host", authority)
    if proxy_auth:
        h.putheader("Proxy-Authorization", proxy_auth)
    h.endheaders()
    answer = StrictAnswer(plain, method="CONNECT")  # type: ignore[arg-type]
    answer.begin()  # not getresponse(): a 200 to CONNECT has no length, and http.client would close
    if answer.status != 200:
        raise _TunnelRefused(f"{answer.status} {_printable(answer.reason)}".strip())
    # Nothing is buffered past the head: the server speaks only after the ClientHello.


class _TunnelRefused(Exception):
    """The proxy answered CONNECT with something else than 200."""


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _printable(text: str) -> str:
    from ktrain.util.text import printable

    return printable(text)


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
    if isinstance(exc, _TunnelRefused):
        return TransportError("proxy", str(exc), sent=False)
    if isinstance(exc, (http.client.HTTPException, ValueError)):
        return TransportError("proxy", f"a broken answer to CONNECT: {protocol_detail(exc)}", sent=False)
    if isinstance(exc, OSError):
        return TransportError("unreachable", exc.strerror or type(exc).__name__, sent=False)
    if isinstance(exc, Exception):
        return TransportError("unreachable", type(exc).__name__, sent=False)
    return exc  # KeyboardInterrupt and friends


def protocol_detail(exc: BaseException) -> str:
    """What broke, in words that quote nothing the server sent (a status line, a chunk size)."""
    if isinstance(exc, http.client.IncompleteRead):
        return "the connection closed before the whole body"
    if isinstance(exc, http.client.LineTooLong):
        return "a line longer than 64 KiB"
    if isinstance(exc, http.client.UnknownProtocol):
        return "an HTTP version ktrain does not speak"
    if isinstance(exc, http.client.BadStatusLine):
        return "not an HTTP/1.x status line"
    if isinstance(exc, ValueError):  # http.client's chunk reader (a chunk size that is not hex)
        return "malformed framing"
    if type(exc) is http.client.HTTPException and exc.args:  # ours and http.client's fixed texts
        return str(exc.args[0])
    return type(exc).__name__


def _sent_failure(exc: BaseException) -> BaseException:
    """A failure after the request may have gone out, as a TransportError."""
    if isinstance(exc, TimeoutError):
        return TransportError("read-timeout", sent=True)
    if isinstance(exc, _CLOSED_BEFORE_ANSWER):
        return TransportError("closed", type(exc).__name__, sent=True)
    if isinstance(exc, (http.client.HTTPException, ValueError)):
        return TransportError("protocol", protocol_detail(exc), sent=True)
    if isinstance(exc, OSError):
        return TransportError("closed", type(exc).__name__, sent=True)
    if isinstance(exc, Exception):
        return TransportError("protocol", type(exc).__name__, sent=True)
    return exc  # KeyboardInterrupt and friends


class _Response:
    """One answer; its connection goes back to the transport once the body is read to its end."""

    def __init__(self, transport: HttpTransport, conn: _Conn, answer: StrictAnswer) -> None:
        self._transport = transport
        self._conn: _Conn | None = conn
        self._sock = conn.sock
        self._answer = answer
        self._done = False  # the body was read to its end
        self.status = answer.status
        self.reason = _printable(answer.reason or "")

    def read(self) -> bytes:
        """The whole body, refused past MAX_BODY_BYTES (a Content-Length over it before a byte of it)."""
        announced = self._answer.length
        if announced is not None and announced > MAX_BODY_BYTES:
            self._drop()
            raise _too_large(f"{announced} bytes")
        parts: list[bytes] = []
        total = 0
        for piece in self.chunks(65536):
            total += len(piece)
            if total > MAX_BODY_BYTES:
                self._drop()
                raise _too_large(f"more than {MAX_BODY_BYTES} bytes")
            parts.append(piece)
        return b"".join(parts)

    def chunks(self, size: int) -> Iterator[bytes]:
        answer = self._answer
        try:
            while True:
                piece = answer.read1(size)
                if not piece:
                    break
                yield piece
            if answer.length:  # http.client ends a short Content-Length body quietly
                raise http.client.IncompleteRead(b"", answer.length)
        except GeneratorExit:
            self._drop()
            raise
        except BaseException as exc:
            self._drop()
            error = _sent_failure(exc)
            if error is exc:
                raise
            raise error from None
        self._done = True
        self.close()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        reusable = self._done and not self._answer.will_close
        self._answer.close()
        if reusable:
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


def _too_large(size: str) -> TransportError:
    return TransportError("too-large", f"{size}; ktrain reads at most {MAX_BODY_BYTES // (1024 * 1024)} MiB", sent=True)
