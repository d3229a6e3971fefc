"""`ktrain.cluster.kube`: which transport a connection takes (the `kubernetes` client for what only
it does, or as forced), and the in-cluster configuration (a pod's service account). Connecting from
a kubeconfig and every failure's message: tests/unit/cluster/test_connection.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain.cluster import client as k
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect, proxy_of, transport_choice
from ktrain.errors import UsageError

from .kubeconfigs import TOKEN, auth_of


@pytest.mark.double  # tls_srv (conftest) starts the double
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
