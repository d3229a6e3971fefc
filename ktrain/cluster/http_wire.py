"""HTTP/1.1 on one socket: the part of RFC 9112 a client of kube-apiserver needs.

Why not `http.client`: it imports the `email` package to parse headers, about 16 ms of every
cluster command (a fifth of a whole `kubectl get`). What the API server sends is simple: a status
line, headers, and a body framed by Content-Length or chunked transfer coding (watches and log
streams), or ended by the connection closing. This module reads exactly that, within bounds:

- a status line or header line longer than 64 KiB, or more than 256 header lines, is a broken
  answer (`WireError`), as are a malformed chunk size and a Content-Length that is not a number;
- `1xx` interim answers are skipped; `HEAD`, `204` and `304` have no body;
- the connection is reusable only when the body was read to its end and neither side said
  `Connection: close`.

Failures of the socket itself (reset, timeout) are the caller's to map (`http_transport`).
"""

from __future__ import annotations

import socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_LINE = 64 * 1024
MAX_HEADERS = 256


class WireError(Exception):
    """The peer sent something that is not an HTTP/1.1 answer."""


class ClosedBeforeAnswer(WireError):
    """The connection ended before a status line: on a reused connection, the server had closed it."""


class Connection:
    """A connected (maybe TLS) socket and a buffered reader on it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        try:
            self.reader.close()
        finally:
            self.sock.close()


def request_head(method: str, target: str, host: str, headers: list[tuple[str, str]], length: int | None) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _line(reader: object) -> bytes:
    line: bytes = reader.readline(MAX_LINE + 1)  # type: ignore[attr-defined]
    if len(line) > MAX_LINE:
        raise WireError("a line longer than 64 KiB")
    return line


def read_head(reader: object, *, first: bool = True) -> tuple[int, str, dict[str, str], bool]:
    """(status, reason, headers by lower-case name, HTTP/1.0?) of the next final answer."""
    while True:
        status_line = _line(reader)
        if not status_line:
            raise ClosedBeforeAnswer("the connection closed before an answer")
        parts = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise WireError("not an HTTP/1.1 status line")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            line = _line(reader)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise WireError("the connection closed inside the headers")
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep or not name or name != name.strip():
                raise WireError("a malformed header line")
            key = name.lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        else:
            raise WireError("more than 256 header lines")
        if 100 <= status < 200:  # 100 Continue and friends: the real answer follows
            continue
        return status, parts[2].strip() if len(parts) > 2 else "", headers, parts[0] == "HTTP/1.0"


class Body:
    """The body of one answer, read whole or as it arrives."""

    def __init__(self, reader: object, headers: dict[str, str], *, empty: bool, http10: bool) -> None:
        self.reader = reader
        connection = headers.get("connection", "").lower()
        self.reusable = "close" not in connection and (not http10 or "keep-alive" in connection)
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self.remaining: int | None = None  # bytes left of a Content-Length body (or of the current chunk)
        self.done = empty
        if empty:
            return
        if not self.chunked:
            length = headers.get("content-length")
            if length is not None:
                if not length.isdigit():
                    raise WireError("a Content-Length that is not a number")
                self.remaining = int(length)
                self.done = self.remaining == 0
            else:
                self.reusable = False  # the body ends when the server closes the connection

    def read(self, limit: int) -> bytes:
        """The rest of the body; WireError past `limit` bytes."""
        parts: list[bytes] = []
        total = 0
        for piece in self.pieces(65536):
            total += len(piece)
            if total > limit:
                raise WireError(f"an answer larger than {limit} bytes")
            parts.append(piece)
        return b"".join(parts)

    def pieces(self, size: int) -> Iterator[bytes]:
        """The body as it arrives, at most `size` bytes at a time."""
        reader = self.reader
        while not self.done:
            if self.chunked:
                if not self.remaining:
                    self.remaining = self._chunk_size()
                    if self.remaining == 0:
                        self._trailers()
                        self.done = True
                        return
                data = reader.read1(min(size, self.remaining))  # type: ignore[attr-defined]
                if not data:
                    raise WireError("the connection closed inside a chunk")
                self.remaining -= len(data)
                if self.remaining == 0 and _line(reader) not in (b"\r\n", b"\n"):
                    raise WireError("a chunk not followed by CRLF")
                yield data
            elif self.remaining is not None:
                data = reader.read1(min(size, self.remaining))  # type: ignore[attr-defined]
                if not data:
                    raise WireError("the connection closed before the whole body")
                self.remaining -= len(data)
                self.done = self.remaining == 0
                yield data
            else:
                data = reader.read1(size)  # type: ignore[attr-defined]
                if not data:
                    self.done = True
                    return
                yield data

    def _chunk_size(self) -> int:
        line = _line(self.reader).split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            raise WireError("a malformed chunk size") from None
        if size < 0:
            raise WireError("a malformed chunk size")
        return size

    def _trailers(self) -> None:
        for _ in range(MAX_HEADERS + 1):
            line = _line(self.reader)
            if line in (b"\r\n", b"\n", b""):
                return
        raise WireError("more than 256 trailer lines")


def connect_tunnel(conn: Connection, authority: str, proxy_auth: str | None) -> None:
    """Ask an HTTP proxy for a tunnel to `authority` (host:port); WireError when it refuses."""
    headers = [("Proxy-Authorization", proxy_auth)] if proxy_auth else []
    conn.send(request_head("CONNECT", authority, authority, headers, None))
    status, reason, _, _ = read_head(conn.reader)
    if status != 200:
        raise TunnelRefused(f"{status} {reason}".strip())


class TunnelRefused(WireError):
    """The proxy answered CONNECT with something else than 200."""
