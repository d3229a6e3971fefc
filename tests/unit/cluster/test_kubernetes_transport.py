"""`ktrain.cluster.kubernetes_transport`: the `kubernetes` client as a transport: urllib3's and the
client's failures mapped to the same `TransportError` kinds as ktrain's own client (so messages do
not depend on the path taken), and answers read with the same bound. Requests through it against
the double: the `both_transports` tests (tests/unit/cluster/test_http_transport.py, ...)."""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest
from kubernetes import client
from urllib3 import exceptions as u3

from ktrain.cluster import client as k
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.cluster.kubernetes_transport import KubernetesTransport, _Response, transport_error
from ktrain.cluster.transport import MAX_BODY_BYTES, TransportError
from ktrain.errors import ClusterUnreachableError

URL = "/api/v1/namespaces"


def kind_of(exc: BaseException) -> tuple[str, str, bool]:
    out = transport_error(exc)
    assert isinstance(out, TransportError), out
    return out.kind, out.detail, out.sent


def test_no_connection_made_is_not_sent() -> None:
    refused = u3.NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")
    assert kind_of(refused) == ("refused", "", False)
    assert kind_of(u3.MaxRetryError(None, URL, reason=refused)) == ("refused", "", False)  # urllib3 wraps it
    unknown = u3.NewConnectionError(None, "Failed to resolve: [Errno -2] Name or service not known")
    assert kind_of(unknown)[:1] == ("dns",)
    assert kind_of(u3.ConnectTimeoutError(None, "timed out")) == ("connect-timeout", "", False)
    assert kind_of(u3.ProxyError("Unable to connect to proxy", OSError("no route")))[0::2] == ("proxy", False)


def test_a_certificate_the_client_refuses_is_tls_with_the_reason() -> None:
    exc = client.ApiException(
        status=0,
        reason="SSLError\n[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate "
        "in certificate chain (_ssl.c:1000)",
    )
    assert kind_of(exc) == ("tls", "self-signed certificate in certificate chain", False)


def test_an_answer_that_never_came_whole_was_sent() -> None:
    assert kind_of(u3.ReadTimeoutError(None, URL, "Read timed out."))[0::2] == ("read-timeout", True)
    assert kind_of(TimeoutError())[0::2] == ("read-timeout", True)
    reset = u3.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset"))
    assert kind_of(reset) == ("closed", "ConnectionResetError", True)
    garbage = u3.ProtocolError("Connection aborted.", http.client.BadStatusLine("SSH-2.0-OpenSSH"))
    assert kind_of(garbage)[0::2] == ("protocol", True)
    assert kind_of(http.client.IncompleteRead(b"x"))[0::2] == ("protocol", True)


class Raw:
    """urllib3's HTTPResponse as far as `_Response` reads it."""

    def __init__(self, body: bytes, length: str | None = None) -> None:
        self.status, self.reason = 200, "OK\x1b[31m"
        self.headers = {"content-length": length} if length is not None else {}
        self.body = body
        self.closed = self.released = False

    def read(self, size: int, decode_content: bool) -> bytes:
        piece, self.body = self.body[:size], self.body[size:]
        return piece

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        self.released = True


def test_an_answer_is_read_whole_and_its_reason_printable() -> None:
    raw = Raw(b"x" * 200_000)
    answer = _Response(raw, deadline=None)
    assert answer.read() == b"x" * 200_000 and raw.released and not raw.closed
    assert answer.reason == "OK\\x1b[31m"


@pytest.mark.parametrize("raw", [Raw(b"", length=str(MAX_BODY_BYTES + 1)), Raw(b"x" * (MAX_BODY_BYTES + 1))])
def test_an_answer_larger_than_the_bound_is_refused_and_its_connection_dropped(raw: Raw) -> None:
    with pytest.raises(TransportError) as err:
        _Response(raw, deadline=None).read()
    assert err.value.kind == "too-large" and err.value.sent
    assert "ktrain reads at most 8 MiB" in err.value.detail
    assert raw.closed  # unread bytes never reach the next request on that connection


@pytest.mark.double
def test_forced_it_carries_the_requests_and_a_server_gone_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apiserver import ApiServerDouble

    monkeypatch.setenv("KTRAIN_KUBE_CLIENT", "kubernetes")
    with ApiServerDouble() as srv:
        kubeconfig = str(srv.write_kubeconfig(tmp_path / "kc"))
        cluster = connect(ConnectionOptions(kubeconfig=kubeconfig))
        assert isinstance(cluster.transport, KubernetesTransport)
        assert "default" in [o["metadata"]["name"] for o in k.list_objects(cluster, k.NAMESPACE)]
        assert [(r.verb, r.resource) for r in srv.requests_for("list")] == [("list", "namespaces")]
    with pytest.raises(ClusterUnreachableError, match="refused"):
        k.list_objects(connect(ConnectionOptions(kubeconfig=kubeconfig)), k.NAMESPACE)
