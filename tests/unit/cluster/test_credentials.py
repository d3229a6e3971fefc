"""`ktrain.cluster.credentials`: who a request says it is: bearer tokens and token files (read
again after a 401), exec credential plugins (cached until they expire, run again after a 401),
impersonation headers, and no credentials at all over plain http (issue #17).

Tests marked both_transports run through ktrain's own client and through the `kubernetes`
client (conftest), against the double in HTTPS mode; what only ktrain's own client does
(exec caching rules, token-file rotation) is tested on it alone. Misbehaving plugins and token
files: tests/unit/cluster/test_credential_bounds.py.
"""

from __future__ import annotations

import base64
import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble

from ktrain.cluster import client as k
from ktrain.cluster import credentials as creds
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.errors import ApiError, ClusterError, UsageError

from .kubeconfigs import TOKEN, auth_of, b64, namespaces, write

# --- tokens and token files ---------------------------------------------------------------------


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


# --- token rotation, impersonation, plain http ---------------------------------------------------


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
