"""`ktrain.cluster.http_transport`: ktrain's own client on the standard library: the server URL
read as urlsplit reads it, TLS as client-go sets it up (the cluster's CA, tls-server-name,
insecure-skip-tls-verify, client certificates), one connection per command, and proxies (the
cluster's proxy-url, the environment's as Go reads them).

Tests marked both_transports run through ktrain's own client and through the `kubernetes`
client (conftest), against the double in HTTPS mode.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster import client as k
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.http_transport import _bypassed, env_proxy, split_server
from ktrain.cluster.kube import NotSentError, connect

from .kubeconfigs import TOKEN, auth_of, b64, namespaces, write

SERVERS = [
    "https://10.0.0.1:6443",
    "https://API.Example.com",
    "https://api.example.com:443/",
    "https://rancher.example.com/k8s/clusters/c-m-abc12/",
    "http://127.0.0.1:8001",
    "https://[::1]:6443",
    "https://[fd00::1]/prefix",
    "https://user:pw@host:1234/p",
    "HTTPS://host",
]


BAD = ["ftp://host", "host:6443", "https://", "https://host:99999", "https://host:12a", "https://[::1", "https://h?x=1"]


@pytest.mark.parametrize("server", SERVERS)
def test_server_urls_are_read_as_urlsplit_reads_them(server: str) -> None:
    parts = urlsplit(server)
    assert split_server(server) == (
        parts.scheme,
        parts.hostname,
        parts.port,
        parts.path.rstrip("/"),
        parts.netloc.rpartition("@")[2],
    )


@pytest.mark.parametrize("server", BAD)
def test_what_is_not_an_http_server_url_is_refused(server: str) -> None:
    assert split_server(server) is None


# --- TLS, through both transports -------------------------------------------------------------


@pytest.mark.both_transports
def test_https_with_the_clusters_ca_and_a_token(tls_srv, tmp_path: Path, kube_transport: str) -> None:
    kc = tls_srv.write_kubeconfig(tmp_path / "kc")
    cluster = connect(ConnectionOptions(kubeconfig=str(kc)))
    assert cluster.transport.kind == kube_transport
    assert "default" in namespaces(kc)
    assert auth_of(tls_srv.requests[-1]) == f"Bearer {TOKEN}"


@pytest.mark.both_transports
def test_a_relative_ca_file_is_relative_to_the_kubeconfig(tls_srv, tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.pem").write_bytes(tls_srv.ca_pem)
    doc = tls_srv.kubeconfig()
    del doc["clusters"][0]["cluster"]["certificate-authority-data"]
    doc["clusters"][0]["cluster"]["certificate-authority"] = "certs/ca.pem"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    kc = write(tmp_path / "kc", doc)
    cwd = os.getcwd()
    os.chdir(elsewhere)
    try:
        assert "default" in namespaces(kc)
    finally:
        os.chdir(cwd)


@pytest.mark.both_transports
def test_a_server_signed_by_another_ca_is_refused_before_anything_is_sent(tls_srv, tmp_path: Path) -> None:
    from apiserver.tls import Authority

    doc = tls_srv.kubeconfig()
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = b64(Authority("other-ca").ca_pem)
    kc = write(tmp_path / "kc", doc)
    before = len(tls_srv.requests)
    with pytest.raises(
        NotSentError, match=r"cannot reach the API server at https://127\.0\.0\.1:\d+ .*TLS verification failed"
    ):
        namespaces(kc)
    assert len(tls_srv.requests) == before


@pytest.mark.both_transports
def test_tls_server_name_picks_the_name_the_certificate_holds(tmp_path: Path) -> None:
    with ApiServerDouble(token=TOKEN, tls=True, server_names=("api.double.test",)) as srv:
        doc = srv.kubeconfig()
        kc = write(tmp_path / "plain", doc)
        with pytest.raises(NotSentError, match="TLS verification failed"):
            namespaces(kc)  # 127.0.0.1 is not in the certificate
        doc["clusters"][0]["cluster"]["tls-server-name"] = "api.double.test"
        assert "default" in namespaces(write(tmp_path / "named", doc))


@pytest.mark.both_transports
def test_insecure_skip_tls_verify_connects_and_warns_once(tmp_path: Path, capsys) -> None:
    with ApiServerDouble(token=TOKEN, tls=True, server_names=("elsewhere.test",)) as srv:
        doc = srv.kubeconfig()
        cluster_entry = doc["clusters"][0]["cluster"]
        del cluster_entry["certificate-authority-data"]
        cluster_entry["insecure-skip-tls-verify"] = True
        kc = write(tmp_path / "kc", doc)
        assert "default" in namespaces(kc)
        k.list_objects(connect(ConnectionOptions(kubeconfig=str(kc))), k.NAMESPACE)
    err = capsys.readouterr().err
    assert err.count("TLS verification is off for context 'double'") == 2  # once per connection
    assert "InsecureRequestWarning" not in err


@pytest.mark.both_transports
def test_client_certificate_data_authenticates_without_a_token(tls_srv, tmp_path: Path) -> None:
    cert, key = tls_srv.client_certificate()
    doc = tls_srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"client-certificate-data": b64(cert), "client-key-data": b64(key)}
    assert "default" in namespaces(write(tmp_path / "kc", doc))
    assert auth_of(tls_srv.requests[-1]) is None


@pytest.mark.both_transports
def test_client_certificate_files_relative_to_the_kubeconfig(tls_srv, tmp_path: Path) -> None:
    cert, key = tls_srv.client_certificate()
    (tmp_path / "user.crt").write_bytes(cert)
    (tmp_path / "user.key").write_bytes(key)
    doc = tls_srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"client-certificate": "user.crt", "client-key": "user.key"}
    assert "default" in namespaces(write(tmp_path / "kc", doc))


# --- connections and proxies -------------------------------------------------------------------


def test_one_connection_serves_a_commands_requests(tls_srv, tmp_path: Path) -> None:
    cluster = connect(ConnectionOptions(kubeconfig=str(tls_srv.write_kubeconfig(tmp_path / "kc"))))
    for _ in range(5):
        k.list_objects(cluster, k.NAMESPACE)
    assert tls_srv._server.counter == 1


class ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1 that records the tunnels it opened."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.tunnels: list[str] = []
        self.auth: list[str | None] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(conn,), daemon=True).start()

    def _tunnel(self, conn: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(4096)
            if not chunk:
                return
            head += chunk
        lines = head.decode().split("\r\n")
        _method, target, _ = lines[0].split(" ")
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        self.auth.append(headers.get("Proxy-Authorization"))
        self.tunnels.append(target)
        host, port = target.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

        def pipe(a: socket.socket, b: socket.socket) -> None:
            try:
                while data := a.recv(65536):
                    b.sendall(data)
            except OSError:
                pass
            finally:
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()
        pipe(conn, upstream)

    def close(self) -> None:
        self.listener.close()


@pytest.mark.both_transports
def test_the_clusters_proxy_url_tunnels_https(tls_srv, tmp_path: Path) -> None:
    proxy = ConnectProxy()
    try:
        doc = tls_srv.kubeconfig()
        doc["clusters"][0]["cluster"]["proxy-url"] = f"http://127.0.0.1:{proxy.port}"
        assert "default" in namespaces(write(tmp_path / "kc", doc))
        assert proxy.tunnels and set(proxy.tunnels) == {f"127.0.0.1:{tls_srv.port}"}
    finally:
        proxy.close()


def test_proxy_credentials_in_the_url_go_to_the_proxy_only(tls_srv, tmp_path: Path) -> None:
    proxy = ConnectProxy()
    try:
        doc = tls_srv.kubeconfig()
        doc["clusters"][0]["cluster"]["proxy-url"] = f"http://alice:pa%24s@127.0.0.1:{proxy.port}"
        namespaces(write(tmp_path / "kc", doc))
        assert proxy.auth[0] == "Basic " + b64(b"alice:pa$s")
        assert "Proxy-Authorization" not in tls_srv.requests[-1].headers
    finally:
        proxy.close()


def test_environment_proxies_follow_go_rules(monkeypatch) -> None:
    for name in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "proxy.corp:3128")
    assert env_proxy("https://api.example.com:6443") == "http://proxy.corp:3128"
    assert env_proxy("https://127.0.0.1:6443") is None  # loopback never goes through a proxy
    assert env_proxy("https://localhost:6443") is None
    assert env_proxy("http://api.example.com") is None  # HTTP_PROXY is for http:// servers
    monkeypatch.setenv("NO_PROXY", ".internal,10.0.0.0/8,api.other.com:6443")
    assert env_proxy("https://k8s.internal:6443") is None
    assert env_proxy("https://10.1.2.3:6443") is None
    assert env_proxy("https://api.other.com:6443") is None
    assert env_proxy("https://api.other.com:443") == "http://proxy.corp:3128"
    assert _bypassed("a.b.example.com", 443, "example.com")
    assert not _bypassed("notexample.com", 443, "example.com")
    assert _bypassed("anything", None, "*")
