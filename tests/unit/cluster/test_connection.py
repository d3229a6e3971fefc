"""Connecting as kubectl would, and every client failure turned into a one-line cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster.client import open_get
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import ApiNotFoundError, connect, kubeconfig_paths
from ktrain.errors import ApiError, ClusterUnreachableError, ExitCode, UsageError

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

TOKEN = "s3cr3t-token-value"


@pytest.fixture
def srv():
    with ApiServerDouble(token=TOKEN, tls=True) as double:
        yield double


def test_namespace_comes_from_flag_then_context_then_default(srv, tmp_path: Path) -> None:
    kc = srv.write_kubeconfig(tmp_path / "kc", namespace="team-a")
    assert connect(ConnectionOptions(kubeconfig=str(kc))).namespace == "team-a"
    assert connect(ConnectionOptions(kubeconfig=str(kc), namespace="other")).namespace == "other"
    plain = srv.kubeconfig()
    del plain["contexts"][0]["context"]["namespace"]
    import yaml

    (tmp_path / "kc2").write_text(yaml.safe_dump(plain))
    assert connect(ConnectionOptions(kubeconfig=str(tmp_path / "kc2"))).namespace == "default"


def test_an_empty_namespace_flag_means_the_contexts_namespace_as_in_kubectl(srv, tmp_path: Path, cli) -> None:
    """`-n ''` once meant `default`, so a delete went to the wrong namespace (issue #25)."""
    kc = srv.write_kubeconfig(tmp_path / "kc", namespace="team-a")
    assert connect(ConnectionOptions(kubeconfig=str(kc), namespace="")).namespace == "team-a"
    srv.add_namespace("team-a")
    for ns in ("team-a", "default"):
        srv.put_object(
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "metadata": {"name": "x", "namespace": ns},
                "spec": {"replicatedJobs": [{"name": "node", "template": {}}]},
            }
        )
    r = cli("job", "delete", "x", "-n", "", "--yes", "--force", "--kubeconfig", str(kc))
    assert r.exit_code == 0, r.stderr
    assert srv.get_object("jobsets", "x", "team-a", group="jobset.x-k8s.io") is None
    assert srv.get_object("jobsets", "x", "default", group="jobset.x-k8s.io") is not None


def test_kubeconfig_env_with_several_files_is_merged(srv, tmp_path: Path, monkeypatch) -> None:
    first = srv.write_kubeconfig(tmp_path / "a", context="alpha", namespace="ns-alpha")
    second = srv.write_kubeconfig(tmp_path / "b", context="beta", namespace="ns-beta")
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    assert kubeconfig_paths(None) == [str(first), str(second)]
    cluster = connect(ConnectionOptions(context="beta"))
    assert (cluster.context, cluster.namespace) == ("beta", "ns-beta")
    # the first file's current-context wins, as in kubectl
    assert connect(ConnectionOptions()).context == "alpha"
    assert json.loads(cluster.call(open_get, cluster, "/api/v1/namespaces").read())["items"]


def test_unknown_context_lists_the_known_ones(srv, tmp_path: Path) -> None:
    kc = srv.write_kubeconfig(tmp_path / "kc", context="prod")
    with pytest.raises(UsageError, match=r"context 'staging' not found in kubeconfig \(known: prod\)"):
        connect(ConnectionOptions(kubeconfig=str(kc), context="staging"))


def test_missing_kubeconfig_says_where_it_looked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ClusterUnreachableError, match="no kubeconfig found") as info:
        connect(ConnectionOptions(kubeconfig=str(tmp_path / "missing")))
    assert str(tmp_path / "missing") in str(info.value)
    assert "--kubeconfig" in (info.value.hint or "")


def test_server_down_is_connection_refused_not_a_timeout(tmp_path: Path) -> None:
    srv = ApiServerDouble(token=TOKEN, tls=True).start()
    kc = srv.write_kubeconfig(tmp_path / "kc")
    srv.stop()
    cluster = connect(ConnectionOptions(kubeconfig=str(kc)))
    with pytest.raises(ClusterUnreachableError, match="connection refused") as info:
        cluster.call(open_get, cluster, "/api/v1/namespaces")
    assert info.value.exit_code == ExitCode.CLUSTER


def test_slow_server_times_out_with_the_limit_in_the_message(srv, tmp_path: Path) -> None:
    kc = srv.write_kubeconfig(tmp_path / "kc")
    srv.slow(2.0, resource="namespaces")
    cluster = connect(ConnectionOptions(kubeconfig=str(kc), request_timeout=0.3))
    with pytest.raises(ClusterUnreachableError, match=r"did not answer within 0.3s"):
        cluster.call(open_get, cluster, "/api/v1/namespaces")


def test_rejected_token_is_401_and_never_echoed(srv, tmp_path: Path) -> None:
    kc = srv.write_kubeconfig(tmp_path / "kc", token="wrong-" + TOKEN)
    cluster = connect(ConnectionOptions(kubeconfig=str(kc)))
    with pytest.raises(ApiError) as info:
        cluster.call(open_get, cluster, "/api/v1/namespaces")
    assert info.value.status == 401
    assert TOKEN not in str(info.value) and TOKEN not in (info.value.hint or "")


def test_403_keeps_the_server_message_and_404_exits_not_found(srv, tmp_path: Path) -> None:
    kc = srv.write_kubeconfig(tmp_path / "kc")
    cluster = connect(ConnectionOptions(kubeconfig=str(kc)))
    srv.forbid("list", "configmaps")
    with pytest.raises(ApiError, match="forbidden") as info:
        cluster.call(open_get, cluster, "/api/v1/namespaces/default/configmaps", what="ConfigMaps in default")
    assert info.value.status == 403 and "RBAC" in (info.value.hint or "")
    with pytest.raises(ApiNotFoundError, match='"nope" not found') as missing:
        cluster.call(
            open_get,
            cluster,
            "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/nope",
            what="JobSet default/nope",
        )
    assert missing.value.exit_code == ExitCode.NOT_FOUND
