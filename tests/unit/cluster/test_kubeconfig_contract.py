"""One table of kubeconfig fields, run through both transports against the API-server double
(HTTPS), and through kubectl where it is installed (issue #37): every field either works the same
on both (the same requests, the same identity at the server) or is refused the same way before a
request, and ktrain accepts a kubeconfig exactly when kubectl does.

Without kubectl the comparison is with client-go's rules as read from its source (clientcmd's
`validation.go` and v1 conversion, `transport.TLSConfigFor`, `rest`'s impersonating round tripper,
the API server's impersonation filter): the `kubectl` column of the table says what kubectl
1.32 answered for each row.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
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
from ktrain.errors import KtrainError

TOKEN = "contract-s3cr3t"
KUBECTL = shutil.which("kubectl")
ALL_IMPERSONATION = {("users", "*"), ("groups", "*"), ("userextras", "*"), ("uids", "*"), ("serviceaccounts", "*")}


def _user(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["users"][0]["user"]


def _cluster(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["clusters"][0]["cluster"]


def _exec_plugin(tmp: Path) -> str:
    script = tmp / "plugin"
    script.write_text(
        f"#!{sys.executable}\nimport json\nprint(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1',"
        f" 'kind': 'ExecCredential', 'status': {{'token': {TOKEN!r}}}}}))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _no_token(doc: dict[str, Any]) -> None:
    _user(doc).pop("token", None)


# name -> (mutation of the double's kubeconfig, whether the double lets the user impersonate, kubectl accepts)
ROWS: dict[str, tuple[Any, bool, bool]] = {
    "token": (lambda d, t: None, False, True),
    "wrong-token": (lambda d, t: _user(d).update(token="nope"), False, False),
    "token-file": (lambda d, t: (_no_token(d), _user(d).update(tokenFile=str(t / "tok"))), False, True),
    "basic-auth-refused-by-the-server": (
        lambda d, t: (_no_token(d), _user(d).update(username="u", password="p")),
        False,
        False,
    ),
    "exec-plugin": (
        lambda d, t: (
            _no_token(d),
            _user(d).update(
                exec={
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": _exec_plugin(t),
                    "interactiveMode": "Never",
                }
            ),
        ),
        False,
        True,
    ),
    "as-without-rights": (lambda d, t: _user(d).update({"as": "jane"}), False, False),
    "as-serviceaccount-without-rights": (
        lambda d, t: _user(d).update({"as": "system:serviceaccount:team:bot"}),
        False,
        False,
    ),
    "as-everything-allowed": (
        lambda d, t: _user(d).update(
            {
                "as": "jane",
                "as-uid": "uid-1",
                "as-groups": ["dev", "ops"],
                "as-user-extra": {"example.com/Scopes!": ["a", "b"], "reason": ["on call"]},
            }
        ),
        True,
        True,
    ),
    "as-groups-without-as": (lambda d, t: _user(d).update({"as-groups": ["dev"]}), True, False),
    "as-groups-not-a-list": (lambda d, t: _user(d).update({"as": "jane", "as-groups": 5}), True, False),
    "as-user-extra-not-lists": (lambda d, t: _user(d).update({"as": "jane", "as-user-extra": {"k": "v"}}), True, False),
    "token-not-a-string": (lambda d, t: _user(d).update(token=12345), False, False),
    "insecure-beside-a-ca": (lambda d, t: _cluster(d).update({"insecure-skip-tls-verify": True}), False, False),
    "insecure-not-a-bool": (lambda d, t: _cluster(d).update({"insecure-skip-tls-verify": "yes"}), False, False),
    "ca-data-not-base64": (
        lambda d, t: _cluster(d).update({"certificate-authority-data": "@@not base64@@"}),
        False,
        False,
    ),
    "client-cert-data-not-base64": (
        lambda d, t: _user(d).update({"client-certificate-data": "%%%", "client-key-data": "%%%"}),
        False,
        False,
    ),
    "client-cert-without-key": (lambda d, t: _user(d).update({"client-certificate": str(t / "tok")}), False, False),
    "proxy-url-file-scheme": (lambda d, t: _cluster(d).update({"proxy-url": "file:///x"}), False, False),
    "proxy-url-unparsable": (lambda d, t: _cluster(d).update({"proxy-url": "http://[::1"}), False, False),
    "duplicate-user-name": (lambda d, t: d["users"].append({"name": d["users"][0]["name"], "user": {}}), False, False),
    "duplicate-cluster-name": (
        lambda d, t: d["clusters"].append({"name": d["clusters"][0]["name"], "cluster": {"server": "https://x"}}),
        False,
        False,
    ),
    "duplicate-context-name": (lambda d, t: d["contexts"].append(dict(d["contexts"][0])), False, False),
    "auth-provider-gcp-without-access-token": (
        lambda d, t: (
            _no_token(d),
            _user(d).update({"auth-provider": {"name": "gcp", "config": {"id-token": "i", "refresh-token": "r"}}}),
        ),
        False,
        False,
    ),
    "socks5-proxy": (lambda d, t: _cluster(d).update({"proxy-url": "socks5://127.0.0.1:9"}), False, False),
    "exec-beside-auth-provider": (
        lambda d, t: _user(d).update(
            {
                "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x"},
                "auth-provider": {"name": "oidc"},
            }
        ),
        False,
        False,
    ),
}


# What only the kubernetes client does: ktrain picks it for these (auth-provider users, SOCKS and
# HTTPS proxies); KTRAIN_KUBE_CLIENT=stdlib must then refuse to start rather than drop the field.
ONLY_THE_KUBERNETES_CLIENT = {"auth-provider-gcp-without-access-token", "socks5-proxy"}


def _outcome(srv: ApiServerDouble, kubeconfig: Path) -> tuple[str, ...]:
    """What a namespace list came to: ("ok", Authorization, identity) or ("error", type, message)."""
    creds._EXEC_CACHE.clear()
    before = len(srv.requests)
    try:
        cluster = connect(ConnectionOptions(kubeconfig=str(kubeconfig), request_timeout=10))
        k.list_objects(cluster, k.NAMESPACE)
    except KtrainError as exc:
        return ("error", type(exc).__name__, str(exc), str(len(srv.requests) > before))
    last = srv.requests[-1]
    auth = next((v for n, v in last.headers.items() if n.lower() == "authorization"), "")
    return ("ok", auth, repr(srv.acted_as[-1] if srv.acted_as else None))


def _kubeconfig(srv: ApiServerDouble, tmp_path: Path, name: str) -> Path:
    (tmp_path / "tok").write_text(TOKEN)
    doc = srv.kubeconfig()
    mutate, _, _ = ROWS[name]
    mutate(doc, tmp_path)
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def double():
    with ApiServerDouble(token=TOKEN, tls=True) as srv:
        yield srv


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_kubeconfig_field_means_the_same_on_both_transports(
    double, tmp_path: Path, name: str, monkeypatch
) -> None:
    _, allowed, kubectl_accepts = ROWS[name]
    double.impersonable = set(ALL_IMPERSONATION) if allowed else set()
    double.acted_as.clear()
    kubeconfig = _kubeconfig(double, tmp_path, name)
    outcomes = {}
    for transport in ("stdlib", "kubernetes"):
        monkeypatch.setenv("KTRAIN_KUBE_CLIENT", transport)
        outcomes[transport] = _outcome(double, kubeconfig)
    if name in ONLY_THE_KUBERNETES_CLIENT:  # forced onto stdlib, it refuses to start, with the reason
        kind, _, message, sent = outcomes.pop("stdlib")
        assert (kind, sent) == ("error", "False") and ("kubernetes client" in message or "http:// proxies" in message)
    else:
        assert outcomes["stdlib"] == outcomes["kubernetes"]
    for outcome in outcomes.values():
        assert (outcome[0] == "ok") == kubectl_accepts, outcome
        if outcome[0] == "error":
            assert TOKEN not in outcome[2] and "Traceback" not in outcome[2]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed: the table's kubectl column holds its answers")
@pytest.mark.parametrize("name", sorted(ROWS))
def test_ktrain_accepts_a_kubeconfig_exactly_when_kubectl_does(double, tmp_path: Path, name: str) -> None:
    _, allowed, kubectl_accepts = ROWS[name]
    double.impersonable = set(ALL_IMPERSONATION) if allowed else set()
    kubeconfig = _kubeconfig(double, tmp_path, name)
    assert KUBECTL is not None
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    run = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "namespaces", "-o", "name", "--request-timeout", "10s"],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(tmp_path)},
        timeout=30,
        check=False,
    )
    assert (run.returncode == 0) == kubectl_accepts, run.stderr


def test_impersonation_reaches_the_server_as_kubectl_sends_it(double, tmp_path: Path, monkeypatch) -> None:
    """client-go's impersonating round tripper: one Impersonate-Group per group, one
    Impersonate-Extra-<escaped key> per value; the server acts as that identity."""
    double.impersonable = set(ALL_IMPERSONATION)
    double.acted_as.clear()
    kubeconfig = _kubeconfig(double, tmp_path, "as-everything-allowed")
    for transport in ("stdlib", "kubernetes"):
        monkeypatch.setenv("KTRAIN_KUBE_CLIENT", transport)
        k.list_objects(connect(ConnectionOptions(kubeconfig=str(kubeconfig))), k.NAMESPACE)
        assert double.acted_as[-1] == {
            "user": "jane",
            "groups": ["dev", "ops"],
            "extra": {"example.com/scopes!": ["a", "b"], "reason": ["on call"]},
            "uid": "uid-1",
        }
    assert creds.header_key_escape("example.com/Scopes!") == "example.com%2FScopes!"
    assert creds.header_key_escape("100%") == "100%25"


def test_a_user_without_impersonate_rights_gets_the_real_servers_403(double, tmp_path: Path) -> None:
    double.impersonable = set()
    with pytest.raises(KtrainError) as info:
        k.list_objects(
            connect(ConnectionOptions(kubeconfig=str(_kubeconfig(double, tmp_path, "as-without-rights")))), k.NAMESPACE
        )
    assert str(info.value) == (
        'users "jane" is forbidden: User "system:serviceaccount:default:ktrain" cannot impersonate resource '
        '"users" in API group "" at the cluster scope'
    )


def test_insecure_beside_a_ca_is_refused_with_client_gos_words(double, tmp_path: Path) -> None:
    with pytest.raises(KtrainError, match="specifying a root certificates file with the insecure flag is not allowed"):
        connect(ConnectionOptions(kubeconfig=str(_kubeconfig(double, tmp_path, "insecure-beside-a-ca"))))


def test_non_base64_data_is_refused_without_quoting_it(double, tmp_path: Path) -> None:
    with pytest.raises(KtrainError, match=r"`client-certificate-data` of user .* is not valid base64") as info:
        connect(ConnectionOptions(kubeconfig=str(_kubeconfig(double, tmp_path, "client-cert-data-not-base64"))))
    assert "%%%" not in str(info.value)
