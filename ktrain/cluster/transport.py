"""What the two ways of talking to the API server have in common.

ktrain reaches the API server through one of two transports (`ktrain.cluster.kube.connect`
picks one per connection):

- `ktrain.cluster.http_transport` — the standard library (`socket`, `ssl`, `http.client`):
  what nearly every kubeconfig needs (client certificates, bearer tokens and token files, exec
  credential plugins, in-cluster service accounts, HTTP proxies), without the 0.3-0.5 s that
  importing the `kubernetes` package costs every command;
- `ktrain.cluster.kubernetes_transport` — the `kubernetes` client, for what only it does
  (legacy `auth-provider` plugins, HTTPS and SOCKS proxies).

Both send the same requests and raise the same two kinds of failure, which
`ktrain.cluster.kube.KubeCluster.translate` turns into the same messages: `StatusError` (the
server answered, with a status outside 2xx) and `TransportError` (no answer).
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Protocol

    # A float: the whole request (connect, head and body) must be done within that many seconds,
    # as Go's http.Client.Timeout. A tuple (head, idle): a stream, whose head must come within
    # `head` seconds and whose body may then last for ever, but not go `idle` seconds without a byte.
    Timeout = float | tuple[float, float | None] | None

    class Response(Protocol):
        """An answer whose body has not been read yet."""

        status: int

        def read(self) -> bytes:
            """The whole body (bounded: see `MAX_BODY_BYTES`); the connection is then reusable."""

        def chunks(self, size: int) -> Iterator[bytes]:
            """The body as it arrives (log streams, watches); TransportError when it breaks."""

        def close(self) -> None:
            """Done with it (read or not); the connection is reused only when fully read."""

        def abort(self) -> None:
            """End a stream another thread is reading: its read returns at once."""

    class Transport(Protocol):
        kind: str  # "stdlib" or "kubernetes": which module answered (--debug, tests)

        def request(
            self,
            method: str,
            path: str,
            query: list[tuple[str, str]],
            headers: dict[str, str],
            body: bytes | None,
            timeout: Timeout,
        ) -> Response:
            """Send one request; any status comes back as a Response (StatusError is the caller's)."""


# A JSON answer larger than this is refused rather than read into memory. Lists come in pages of
# LIST_CHUNK objects (kubectl's --chunk-size): 500 pods or JobSets of 10-30 KiB each may pass the
# cap, and such a page is asked for again in smaller pages (`client.list_pages`); one object is at
# most 1.5 MiB (etcd's limit). Decoded, dense JSON takes up to ten times its size in Python objects:
# this cap keeps a command under 200 MB at worst, the `kubernetes` client's own import included.
MAX_BODY_BYTES = 8 * 1024 * 1024
LIST_CHUNK = 500
# A stream (`job logs -f`, a watch) may last for ever, but not this long without a byte: the
# connection is then taken for dead (a log follower reconnects and goes on where it was).
STREAM_IDLE_SECONDS = 300.0


class StatusError(Exception):
    """The server answered with a status outside 2xx; `body` is its (bounded) Status document."""

    def __init__(self, status: int, reason: str, body: bytes) -> None:
        super().__init__(f"HTTP {status} {reason}")
        self.status = status
        self.reason = reason
        self.body = body


class TransportError(Exception):
    """No answer came. `kind` says why, in words both transports map to:

    - "refused", "dns", "tls", "connect-timeout", "unreachable": no connection was made, so the
      request was surely not carried out (`sent` is False);
    - "read-timeout": sent, no whole answer in time (the request's deadline, or a stream's idle limit);
    - "closed": sent, and the connection broke before a whole answer;
    - "protocol": sent, and what came back is not HTTP (a bad status line, framing, too many 1xx);
    - "too-large": sent, and the answer is larger than MAX_BODY_BYTES;
    - "garbled": a 2xx answer that is not JSON; "shape": JSON, but not what was asked for.
    `detail` is for --debug: an exception type or the TLS library's reason, never a header.
    """

    def __init__(self, kind: str, detail: str = "", *, sent: bool) -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        self.sent = sent


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def percent_encode(text: str) -> str:
    """Every byte of `text`'s UTF-8 but RFC 3986's unreserved characters as %XX
    (`urllib.parse.quote(text, safe="")`, without importing urllib.parse and ipaddress)."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8", "surrogatepass"))


def encode_query(query: list[tuple[str, str]]) -> str:
    """`?a=1&b=x%2Cy`, every key and value percent-encoded; "" without parameters."""
    if not query:
        return ""
    return "?" + "&".join(f"{percent_encode(str(k))}={percent_encode(str(v))}" for k, v in query)
