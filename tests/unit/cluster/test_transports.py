"""How ktrain authenticates and reaches the API server (issue #17): TLS, client certificates,
bearer tokens and token files, exec credential plugins, in-cluster service accounts, proxies.

Tests marked both_transports run through ktrain's own client and through the `kubernetes`
client (conftest), against the double in HTTPS mode; what only ktrain's own client does
(exec caching rules, token-file rotation, connection reuse) is tested on it alone.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble

from ktrain.cluster import client as k
from ktrain.cluster import credentials as creds
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.http_transport import _bypassed, env_proxy
from ktrain.cluster.kube import NotSentError, connect, proxy_of, transport_choice
from ktrain.cluster.kubeconfig import Merged
from ktrain.errors import ApiError, ClusterError, UsageError

TOKEN = "tls-s3cr3t-token"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def auth_of(request: Any) -> str | None:
    """The Authorization header of a recorded request (the Python client spells it in lower case)."""
    return next((v for name, v in request.headers.items() if name.lower() == "authorization"), None)


def namespaces(kubeconfig: Path, **options: Any) -> list[str]:
    cluster = connect(ConnectionOptions(kubeconfig=str(kubeconfig), **options))
    return sorted(o["metadata"]["name"] for o in k.list_objects(cluster, k.NAMESPACE))


@pytest.fixture
def tls_srv():
    with ApiServerDouble(token=TOKEN, tls=True) as double:
        yield double


# --- TLS and credentials, through both transports -----------------------------------------------


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


@pytest.mark.both_transports
def test_a_token_with_a_line_break_is_refused_without_echoing_it(tls_srv, tmp_path: Path) -> None:
    kc = tls_srv.write_kubeconfig(tmp_path / "kc", token=TOKEN + "\r\nX-Injected: 1")
    with pytest.raises(UsageError, match="header ktrain would send holds a line break") as info:
        namespaces(kc)
    assert TOKEN not in str(info.value) and tls_srv.requests == []


@pytest.mark.both_transports
def test_without_credentials_the_server_answers_401_and_no_secret_is_shown(tls_srv, tmp_path: Path) -> None:
    kc = tls_srv.write_kubeconfig(tmp_path / "kc", token="wrong-" + TOKEN)
    with pytest.raises(ApiError) as info:
        namespaces(kc)
    assert info.value.status == 401
    assert TOKEN not in str(info.value) + str(info.value.hint)


@pytest.mark.both_transports
def test_a_token_file_relative_to_the_kubeconfig(tls_srv, tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN)
    doc = tls_srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"tokenFile": "token"}
    assert "default" in namespaces(write(tmp_path / "kc", doc))


def test_a_token_files_trailing_newline_is_not_part_of_the_token(tls_srv, tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN + "\n")  # client-go trims it (strings.TrimSpace)
    doc = tls_srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"tokenFile": "token"}
    assert "default" in namespaces(write(tmp_path / "kc", doc))


# --- exec credential plugins --------------------------------------------------------------------


def plugin(tmp_path: Path, tokens: list[str], *, expires: str | None = None, api: str = "v1") -> Path:
    """An exec plugin that prints tokens[i] on its i-th run (the last one after that) and
    records each run's KUBERNETES_EXEC_INFO."""
    script = tmp_path / "kube-login"
    runs = tmp_path / "runs.jsonl"
    status: dict[str, Any] = {}
    if expires:
        status["expirationTimestamp"] = expires
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"runs = {str(runs)!r}\n"
        "n = sum(1 for _ in open(runs)) if os.path.exists(runs) else 0\n"
        "with open(runs, 'a') as fh:\n"
        "    fh.write(json.dumps({'info': os.environ.get('KUBERNETES_EXEC_INFO'), 'argv': sys.argv[1:],"
        " 'env': os.environ.get('LOGIN_MODE')}) + '\\n')\n"
        f"tokens = {tokens!r}\n"
        f"status = dict({status!r}, token=tokens[min(n, len(tokens) - 1)])\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/{api}', 'kind': 'ExecCredential',"
        " 'status': status}))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def runs_of(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def exec_kubeconfig(srv: ApiServerDouble, tmp_path: Path, command: str, **extra: Any) -> Path:
    doc = srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": command,
            "args": ["get-token", "--cluster", "double"],
            "env": [{"name": "LOGIN_MODE", "value": "test"}],
            "interactiveMode": "Never",
            **extra,
        }
    }
    return write(tmp_path / "kc", doc)


@pytest.fixture(autouse=True)
def _fresh_exec_cache():
    creds._EXEC_CACHE.clear()
    yield
    creds._EXEC_CACHE.clear()


@pytest.mark.both_transports
def test_an_exec_plugin_supplies_the_token(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, [TOKEN])), provideClusterInfo=True)
    assert "default" in namespaces(kc)
    run = runs_of(tmp_path)[0]
    assert run["argv"] == ["get-token", "--cluster", "double"] and run["env"] == "test"
    info = json.loads(run["info"])
    assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False
    assert info["spec"]["cluster"]["server"] == tls_srv.url
    assert base64.b64decode(info["spec"]["cluster"]["certificate-authority-data"]) == tls_srv.ca_pem


def test_an_exec_credential_is_reused_until_it_expires(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, [TOKEN], expires="2999-01-01T00:00:00Z")))
    cluster = connect(ConnectionOptions(kubeconfig=str(kc)))
    for _ in range(3):
        k.list_objects(cluster, k.NAMESPACE)
    namespaces(kc)  # a second connection in the same process shares the credential (client-go's cache)
    assert len(runs_of(tmp_path)) == 1


def test_an_expired_exec_credential_is_fetched_again(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, [TOKEN], expires="2001-01-01T00:00:00Z")))
    cluster = connect(ConnectionOptions(kubeconfig=str(kc)))
    k.list_objects(cluster, k.NAMESPACE)
    k.list_objects(cluster, k.NAMESPACE)
    assert len(runs_of(tmp_path)) == 2


def test_a_401_runs_the_plugin_again_and_resends_once(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, ["revoked-token", TOKEN])))
    assert "default" in namespaces(kc)
    assert len(runs_of(tmp_path)) == 2
    statuses = [auth_of(r) for r in tls_srv.requests]
    assert statuses == ["Bearer revoked-token", f"Bearer {TOKEN}"]


def test_a_plugin_that_keeps_failing_authentication_is_a_401_not_a_loop(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, ["bad-1", "bad-2", "bad-3"])))
    with pytest.raises(ApiError) as info:
        namespaces(kc)
    assert info.value.status == 401 and len(runs_of(tmp_path)) == 2


def test_a_missing_plugin_shows_its_install_hint(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, "kube-login-not-installed", installHint="brew install kube-login")
    with pytest.raises(ClusterError, match="'kube-login-not-installed' of the kubeconfig is not installed") as info:
        namespaces(kc)
    assert info.value.hint == "brew install kube-login"
    assert tls_srv.requests == []


def test_plugin_output_is_never_quoted(tls_srv, tmp_path: Path) -> None:
    script = tmp_path / "leaky"
    script.write_text(f"#!{sys.executable}\nprint('not json, but a secret: {TOKEN}')\n")
    script.chmod(0o700)
    with pytest.raises(ClusterError, match="printed something that is not a JSON ExecCredential") as info:
        namespaces(exec_kubeconfig(tls_srv, tmp_path, str(script)))
    assert TOKEN not in str(info.value)


def test_a_failing_plugin_is_an_error_with_its_exit_code(tls_srv, tmp_path: Path) -> None:
    script = tmp_path / "failing"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(3)\n")
    script.chmod(0o700)
    with pytest.raises(ClusterError, match=r"failed \(exit 3\)"):
        namespaces(exec_kubeconfig(tls_srv, tmp_path, str(script)))


def test_a_plugin_answering_in_another_api_version_is_refused(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, [TOKEN], api="v1beta1")))
    with pytest.raises(ClusterError, match=r"apiVersion 'client\.authentication\.k8s\.io/v1beta1'"):
        namespaces(kc)


def test_interactive_mode_always_needs_a_terminal(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, [TOKEN])), interactiveMode="Always")
    with pytest.raises(ClusterError, match="needs a terminal"):
        namespaces(kc)
    assert runs_of(tmp_path) == []


def test_v1_plugins_must_say_their_interactive_mode(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, str(plugin(tmp_path, [TOKEN])), interactiveMode=None)
    with pytest.raises(UsageError, match="must set interactiveMode"):
        connect(ConnectionOptions(kubeconfig=str(kc)))


def test_a_relative_plugin_path_is_relative_to_the_kubeconfig(tls_srv, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    script = plugin(tmp_path, [TOKEN])
    script.rename(tmp_path / "bin" / "kube-login")
    assert "default" in namespaces(exec_kubeconfig(tls_srv, tmp_path, "./bin/kube-login"))


def test_a_static_token_wins_over_an_exec_plugin(tls_srv, tmp_path: Path) -> None:
    kc = exec_kubeconfig(tls_srv, tmp_path, "kube-login-not-installed")
    doc = yaml.safe_load(kc.read_text())
    doc["users"][0]["user"]["token"] = TOKEN
    assert "default" in namespaces(write(kc, doc))


# --- token files, in-cluster -----------------------------------------------------------------


def test_a_rotated_token_file_is_read_again_after_a_401(tls_srv, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    doc = tls_srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"tokenFile": str(token_file)}
    cluster = connect(ConnectionOptions(kubeconfig=str(write(tmp_path / "kc", doc))))
    k.list_objects(cluster, k.NAMESPACE)
    tls_srv.token = "rotated-" + TOKEN
    token_file.write_text("rotated-" + TOKEN)
    k.list_objects(cluster, k.NAMESPACE)  # within the minute: the 401 makes it read the file again
    assert auth_of(tls_srv.requests[-1]) == f"Bearer rotated-{TOKEN}"


@pytest.mark.both_transports
def test_in_cluster_service_account(tls_srv, tmp_path: Path, monkeypatch) -> None:
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(TOKEN)
    (sa / "ca.crt").write_bytes(tls_srv.ca_pem)
    (sa / "namespace").write_text("team-a\n")
    monkeypatch.setattr("ktrain.cluster.kube.SERVICE_ACCOUNT_DIR", str(sa))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(tls_srv.port))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    cluster = connect(ConnectionOptions())
    assert cluster.namespace == "team-a" and cluster.context is None
    assert "default" in [o["metadata"]["name"] for o in k.list_objects(cluster, k.NAMESPACE)]
    assert (auth_of(tls_srv.requests[-1]) or "").lower() == f"bearer {TOKEN}"


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


def test_the_kubernetes_client_answers_what_only_it_can() -> None:
    server = {"server": "https://api.example.com"}
    assert transport_choice({"token": "x"}, proxy_of(server)) == "stdlib"
    assert transport_choice({"auth-provider": {"name": "oidc"}}, proxy_of(server)) == "kubernetes"
    assert transport_choice({}, proxy_of({**server, "proxy-url": "socks5://127.0.0.1:1080"})) == "kubernetes"
    assert transport_choice({}, proxy_of({**server, "proxy-url": "https://proxy:443"})) == "kubernetes"
    assert transport_choice({}, proxy_of({**server, "proxy-url": "http://proxy:3128"})) == "stdlib"


def test_the_transport_can_be_forced_and_a_wrong_value_is_an_error(monkeypatch) -> None:
    monkeypatch.setenv("KTRAIN_KUBE_CLIENT", "kubernetes")
    assert transport_choice({}, None) == "kubernetes"
    monkeypatch.setenv("KTRAIN_KUBE_CLIENT", "curl")
    with pytest.raises(UsageError, match="must be `stdlib` or `kubernetes`"):
        transport_choice({}, None)


# --- kubeconfig merging (clientcmd's rules) ----------------------------------------------------


def config(name: str, server: str, *, current: str | None = None, namespace: str | None = None) -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": name, "user": name}
    if namespace:
        context["namespace"] = namespace
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority": "ca.pem"}}],
        "users": [{"name": name, "user": {"token": f"token-of-{server}"}}],
        "contexts": [{"name": name, "context": context}],
    }
    if current:
        doc["current-context"] = current
    return doc


def test_the_first_file_to_define_a_name_wins_it_whole(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write(tmp_path / "a" / "config", config("shared", "https://first"))
    second = write(tmp_path / "b" / "config", config("shared", "https://second", current="shared", namespace="x"))
    selected = Merged([str(first), str(second)]).select(None)  # current-context from the second file
    assert selected.cluster["server"] == "https://first"
    assert selected.cluster["certificate-authority"] == str(tmp_path / "a" / "ca.pem")
    assert selected.user == {"token": "token-of-https://first"}
    assert selected.namespace is None  # the first file's context, which sets no namespace


def test_current_context_comes_from_the_first_file_that_sets_one(tmp_path: Path) -> None:
    one = write(tmp_path / "one", config("one", "https://one"))
    two = write(tmp_path / "two", config("two", "https://two", current="two"))
    three = write(tmp_path / "three", config("three", "https://three", current="three"))
    assert Merged([str(one), str(two), str(three)]).select(None).context == "two"


def test_a_context_naming_an_undefined_cluster_or_user_says_which(tmp_path: Path) -> None:
    doc = config("c", "https://c", current="c")
    doc["contexts"][0]["context"]["user"] = "ghost"
    with pytest.raises(UsageError, match="context 'c' uses user 'ghost', which the kubeconfig does not define"):
        Merged([str(write(tmp_path / "kc", doc))]).select(None)
    doc["contexts"][0]["context"]["cluster"] = "nowhere"
    with pytest.raises(UsageError, match="uses cluster 'nowhere'"):
        Merged([str(write(tmp_path / "kc", doc))]).select(None)


def test_a_broken_kubeconfig_names_the_line_and_quotes_no_value(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text(f"apiVersion: v1\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n   bad: [\n")
    with pytest.raises(UsageError, match=rf"cannot read kubeconfig {path}:\d+") as info:
        Merged([str(path)])
    assert TOKEN not in str(info.value)


def test_impersonation_sends_one_header_per_group() -> None:
    headers = creds.Credentials(
        {"token": "t", "as": "jane", "as-groups": ["dev", "ops"], "as-user-extra": {"scopes": ["a", "b"]}}
    ).for_request()[0]
    assert headers == [
        ("Impersonate-User", "jane"),
        ("Impersonate-Group", "dev"),
        ("Impersonate-Group", "ops"),
        ("Impersonate-Extra-scopes", "a"),
        ("Impersonate-Extra-scopes", "b"),
        ("Authorization", "Bearer t"),
    ]


@pytest.mark.both_transports
def test_no_credentials_travel_to_a_plain_http_server(tmp_path: Path) -> None:
    """client-go reads a user's credentials only for a TLS server; over http:// none is sent."""
    with ApiServerDouble() as srv:
        cert, key = srv.client_certificate()
        doc = srv.kubeconfig(token=TOKEN)
        doc["users"][0]["user"]["client-certificate-data"] = b64(cert)
        doc["users"][0]["user"]["client-key-data"] = b64(key)
        assert "default" in namespaces(write(tmp_path / "kc", doc))
        assert auth_of(srv.requests[-1]) is None
