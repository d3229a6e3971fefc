"""The HTTP/1.1 framing ktrain's own client reads (ktrain.cluster.http_wire): what kube-apiserver
sends (Content-Length, chunked watches and logs, close-delimited), and nothing else accepted
beyond its bounds."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.cluster.http_wire import MAX_LINE, Body, ClosedBeforeAnswer, WireError, read_head, request_head


def reader(data: bytes) -> io.BufferedReader:
    return io.BufferedReader(io.BytesIO(data))


def answer(data: bytes, method: str = "GET") -> tuple[int, dict[str, str], Body]:
    r = reader(data)
    status, _, headers, http10 = read_head(r)
    return status, headers, Body(r, headers, empty=method == "HEAD" or status in (204, 304), http10=http10)


def test_a_content_length_body_is_read_exactly_and_the_connection_stays_reusable() -> None:
    status, headers, body = answer(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}NEXT"
    )
    assert status == 200 and headers["content-type"] == "application/json"
    assert body.read(100) == b"{}" and body.done and body.reusable


def test_chunked_bodies_arrive_piece_by_piece_with_extensions_and_trailers() -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: y\r\n\r\n"
    )
    _, _, body = answer(raw)
    assert b"".join(body.pieces(3)) == b"hello world"
    assert body.done and body.reusable


def test_interim_answers_are_skipped_and_connection_close_is_honoured() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    status, _, body = answer(raw)
    assert status == 404 and body.done and not body.reusable


def test_a_body_without_length_ends_with_the_connection() -> None:
    _, _, body = answer(b"HTTP/1.1 200 OK\r\n\r\nall of it")
    assert body.read(100) == b"all of it" and not body.reusable


def test_no_body_for_head_204_and_304() -> None:
    for raw, method in (
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "HEAD"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", "GET"),
    ):
        _, _, body = answer(raw, method)
        assert body.read(100) == b"" and body.done


@pytest.mark.parametrize(
    "raw, why",
    [
        (b"", "closed before an answer"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.1 status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * MAX_LINE + b"\r\n\r\n", "longer than 64 KiB"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 300 + b"\r\n", "more than 256 header lines"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "not a number"),
    ],
)
def test_broken_heads_are_wire_errors(raw: bytes, why: str) -> None:
    with pytest.raises(WireError, match=why):
        answer(raw)
    if not raw:
        with pytest.raises(ClosedBeforeAnswer):
            answer(raw)


@pytest.mark.parametrize(
    "raw, why",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "before the whole body"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n", "not followed by CRLF"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\nabc", "inside a chunk"),
    ],
)
def test_broken_bodies_are_wire_errors(raw: bytes, why: str) -> None:
    _, _, body = answer(raw)
    with pytest.raises(WireError, match=why):
        body.read(1000)


def test_a_body_over_the_limit_is_refused() -> None:
    _, _, body = answer(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100)
    with pytest.raises(WireError, match="larger than 50 bytes"):
        body.read(50)


def test_the_request_head_carries_host_headers_and_length() -> None:
    head = request_head("PATCH", "/apis/x?a=b", "api.example.com:6443", [("Accept", "application/json")], 7)
    assert head == (
        b"PATCH /apis/x?a=b HTTP/1.1\r\nHost: api.example.com:6443\r\nAccept: application/json\r\n"
        b"Content-Length: 7\r\n\r\n"
    )


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048), st.sampled_from(["GET", "HEAD"]))
def test_any_bytes_from_a_server_are_an_answer_or_a_wire_error(data: bytes, method: str) -> None:
    try:
        _, _, body = answer(b"HTTP/1.1 200 OK\r\n" + data, method)
        body.read(4096)
    except WireError:
        pass
