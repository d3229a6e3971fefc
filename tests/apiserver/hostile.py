"""A hostile "API server" on 127.0.0.1: it answers every request with bytes a scenario chooses.

Where `ApiServerDouble` behaves as kube-apiserver does, this one misbehaves as broken servers,
proxies and attackers do (issue #25): malformed status lines (`HTTP/1.1 ²00`), odd
Content-Lengths, broken chunking, storms of 1xx answers, heads and bodies drip-fed a byte at a
time, JSON of the wrong shape, bodies of hundreds of MB, and TLS where none is expected (or none
where it is). A client must turn each into one clear error, within its deadline, in bounded
memory, and never take garbage for an answer.

    with HostileServer(SCENARIOS["drip-head"]) as srv:
        srv.write_kubeconfig(tmp_path / "kc")

A scenario is a function of the request (`HostileRequest`) that yields what to do: bytes to send,
a float to sleep that many seconds, or `CLOSE` to end the connection (else the next request on it
is read and answered by the same scenario). Every loop is bounded by the server's stop event
and by `MAX_SECONDS`, so a test that forgets to stop it leaves nothing running for long.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ktrain.cluster.transport import MAX_BODY_BYTES

CLOSE = object()
MAX_SECONDS = 60.0  # no connection is served longer than this, whatever the scenario says
MiB = 1024 * 1024


@dataclass
class HostileRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Step = "bytes | float | object"
Scenario = Callable[[HostileRequest], Iterator[Any]]


@dataclass
class HostileServer:
    scenario: Scenario
    tls: bool = False
    requests: list[HostileRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> HostileServer:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        if self.tls:
            self._context = _server_context()
        threading.Thread(target=self._accept, name="hostile-accept", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._listener is not None
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def kubeconfig(self, *, scheme: str | None = None, ca: bytes | None = None) -> dict[str, Any]:
        """A kubeconfig for this server, namespace `team-a`; `scheme` may lie about TLS, `ca` may
        be another authority's (a TLS mismatch)."""
        from .tls import shared_authority

        cluster: dict[str, Any] = {"server": f"{scheme or ('https' if self.tls else 'http')}://127.0.0.1:{self.port}"}
        if cluster["server"].startswith("https"):
            cluster["certificate-authority-data"] = base64.b64encode(ca or shared_authority().ca_pem).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "hostile", "cluster": cluster}],
            "users": [{"name": "u", "user": {"token": "hostile-token"}}],
            "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "u", "namespace": "team-a"}}],
            "current-context": "hostile",
        }

    def write_kubeconfig(self, path: str | Path, **kwargs: Any) -> Path:
        target = Path(path)
        target.write_text(yaml.safe_dump(self.kubeconfig(**kwargs)), encoding="utf-8")
        return target

    # -- serving ------------------------------------------------------------------------------------

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), name="hostile-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        started = time.monotonic()
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._context is not None:
                conn.settimeout(10)
                conn = self._context.wrap_socket(conn, server_side=True)
            while not self._stop.is_set():
                request = _read_request(conn)
                if request is None:
                    return
                self.requests.append(request)
                for step in self.scenario(request):
                    if self._stop.is_set() or time.monotonic() - started > MAX_SECONDS:
                        return
                    if step is CLOSE:
                        return
                    if isinstance(step, float):
                        self._stop.wait(step)
                    else:
                        conn.sendall(step)
        except (OSError, ValueError):
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass


def _read_request(conn: socket.socket) -> HostileRequest | None:
    conn.settimeout(30)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk or len(data) > 1 << 20:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = [*lines[0].split(" ", 2), "", ""][:3]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return HostileRequest(method, target, headers, body)


def _server_context() -> ssl.SSLContext:
    import tempfile

    from .tls import shared_authority

    cert, key = shared_authority().server(("127.0.0.1", "localhost"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "c.pem").write_bytes(cert)
        (Path(tmp) / "k.pem").write_bytes(key)
        context.load_cert_chain(str(Path(tmp) / "c.pem"), str(Path(tmp) / "k.pem"))
    return context


# --- scenarios -------------------------------------------------------------------------------------


def raw(data: bytes, *, close: bool = True) -> Scenario:
    """The same bytes to every request (then the connection closes, unless `close` is False)."""

    def answer(_: HostileRequest) -> Iterator[Any]:
        yield data
        if close:
            yield CLOSE

    return answer


def json_answer(document: Any, status: str = "200 OK") -> Scenario:
    """Well-framed HTTP, the same JSON to every request: garbage only in what it says."""
    body = json.dumps(document).encode()
    return raw(
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body,
        close=False,
    )


def drip(data: bytes, every: float = 0.2, head: bytes = b"") -> Scenario:
    """`head` at once, then `data` one byte every `every` seconds."""

    def answer(_: HostileRequest) -> Iterator[Any]:
        if head:
            yield head
        for i in range(len(data)):
            yield data[i : i + 1]
            yield every
        yield CLOSE

    return answer


def silent(_: HostileRequest) -> Iterator[Any]:
    """Read the request, never answer."""
    yield MAX_SECONDS
    yield CLOSE


def interim_forever(_: HostileRequest) -> Iterator[Any]:
    """1xx answers without end, a few each 0.1 s."""
    for _ in range(int(MAX_SECONDS * 10)):
        yield b"HTTP/1.1 100 Continue\r\n\r\n" * 3
        yield 0.1
    yield CLOSE


def huge(total: int, *, chunked: bool) -> Scenario:
    """A JSON list of `total` bytes of plausible items, sent as fast as the client reads it."""
    item = b'{"metadata":{"name":"x"},"pad":"' + b"y" * 900 + b'"},'

    def answer(_: HostileRequest) -> Iterator[Any]:
        framing = b"Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}".encode()
        yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + framing + b"\r\n\r\n"
        block = b'{"items":[' + item * 1000
        sent = 0
        while sent < total:
            piece = block[: total - sent]
            yield (f"{len(piece):x}\r\n".encode() + piece + b"\r\n") if chunked else piece
            sent += len(piece)
            block = item * 1000
        if chunked:
            yield b"0\r\n\r\n"
        yield CLOSE

    return answer


def continue_forever(request: HostileRequest) -> Iterator[Any]:
    """A list that never ends: every page a new `continue` token."""
    body = json.dumps(
        {"kind": "List", "metadata": {"continue": f"t{time.monotonic_ns()}"}, "items": [{"metadata": {"name": "a"}}]}
    ).encode()
    yield f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


def _ok(body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


_DRIPPED = b'{"kind": "JobSetList", "items": []}' + b" " * 100

ESCAPE = "\x1b[2J\x1b]0;pwned\x07"
STATUS_WITH_ESCAPES = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": f"boom {ESCAPE} boom",
    "reason": f"Bad{ESCAPE}",
    "code": 500,
    "details": {"causes": [{"field": ESCAPE, "message": ESCAPE}]},
}

# Each answers every request the same way; the tests run each against every cluster command.
SCENARIOS: dict[str, Scenario] = {
    # status lines
    "status-superscript-digits": raw(_ok(b"{}").replace(b"200", "²00".encode("latin-1"), 1)),
    "status-superscript-middle": raw(_ok(b"{}").replace(b"200", "4²5".encode("latin-1"), 1)),
    "status-underscore": raw(_ok(b"{}").replace(b"200", b"1_0", 1)),
    "status-not-http": raw(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"),
    "status-http2": raw(_ok(b"{}").replace(b"HTTP/1.1", b"HTTP/2.0", 1)),
    "status-empty": raw(b""),
    "status-line-huge": raw(b"HTTP/1.1 200 " + b"O" * 100_000 + b"\r\n\r\n"),
    "status-1xx-final-103": raw(b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"),
    # headers
    "headers-too-many": raw(b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 5000 + b"Content-Length: 2\r\n\r\n{}"),
    "header-line-huge": raw(b"HTTP/1.1 200 OK\r\nX-A: " + b"b" * 100_000 + b"\r\nContent-Length: 2\r\n\r\n{}"),
    # Content-Length
    "length-5000-digits": raw(b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n{}"),
    "length-superscript": raw("HTTP/1.1 200 OK\r\nContent-Length: ²\r\n\r\n{}".encode("latin-1")),
    "length-negative": raw(b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\n{}"),
    "length-two-values": raw(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 7\r\n\r\n{}"),
    "length-short-body": raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}"),
    # chunked
    "chunked-bad-size": raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
    "chunked-huge-size": raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 5000 + b"\r\n{}"),
    "chunked-truncated": raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{}"),
    "chunked-no-crlf": raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n"),
    # 1xx
    "interim-100-storm": raw(b"HTTP/1.1 100 Continue\r\n\r\n" * 10_000 + _ok(b"{}")),
    "interim-103-storm": raw(b"HTTP/1.1 103 Early Hints\r\n\r\n" * 10_000 + _ok(b"{}")),
    "interim-forever": interim_forever,
    # slow
    "silent": silent,
    "drip-head": drip(_ok(b"{}")),
    "drip-body": drip(_DRIPPED, head=b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(_DRIPPED)),
    # wrong-shaped JSON
    "json-number": json_answer(5),
    "json-array": json_answer([]),
    "json-string": json_answer("x"),
    "json-null": json_answer(None),
    "json-object-empty": json_answer({}),
    "json-items-not-list": json_answer({"kind": "List", "items": {"a": 1}}),
    "json-items-without-names": json_answer({"kind": "List", "items": [{"metadata": {"name": 5}}, 7]}),
    "json-continue-forever": continue_forever,
    "not-json": raw(_ok(b"<html>proxy login</html>", "Content-Type: text/html\r\n"), close=False),
    "json-deep": raw(_ok(b"[" * 100_000 + b"]" * 100_000), close=False),
    # server text with terminal escapes
    "status-with-escapes": json_answer(STATUS_WITH_ESCAPES, "500 Internal Server Error"),
    # huge
    "huge-announced": raw(b"HTTP/1.1 200 OK\r\nContent-Length: 251658240\r\n\r\n{"),
    "huge-length": huge(240 * MiB, chunked=False),
    "huge-chunked": huge(240 * MiB, chunked=True),
}


def dense_page(total: int = MAX_BODY_BYTES - MiB) -> Scenario:
    """A list just under the body cap, of small dense objects (the most Python objects per byte a
    plausible list makes), answered whatever `limit` asked for."""
    item = json.dumps(
        {"metadata": {"name": "n", "labels": {f"k{i}": f"v{i}" for i in range(20)}}, "spec": {"a": [1, {"b": "c"}] * 5}}
    )
    count = total // (len(item) + 1)
    body = ('{"kind": "JobSetList", "metadata": {}, "items": [' + ",".join([item] * count) + "]}").encode()
    return raw(_ok(body), close=False)


# Scenarios whose failure takes the client's whole deadline (the rest fail at once).
SLOW = ("interim-forever", "silent", "drip-head", "drip-body")
# Scenarios that send hundreds of MB (run in a subprocess, its memory measured).
HUGE = ("huge-length", "huge-chunked", "huge-announced")
