"""`runtime list` (and `runtime show`, `--runtime` resolution) with runtimes read from a cluster."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ktrain.inputs.bundled import builtin_runtimes_dir

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"


def cluster_runtime(
    name: str,
    kind: str = "ClusterTrainingRuntime",
    base: str = "torch-distributed",
    namespace: str | None = None,
    image: str | None = None,
) -> dict:
    runtime = yaml.safe_load((builtin_runtimes_dir() / f"{base}.yaml").read_text())
    runtime["kind"] = kind
    runtime["metadata"]["name"] = name
    if namespace:
        runtime["metadata"]["namespace"] = namespace
    if image:
        runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][
            0
        ]["image"] = image
    return runtime


def test_list_shows_cluster_runtimes_with_source_cluster(cli, kube) -> None:
    kube.srv.put_object(cluster_runtime("team-torch", "TrainingRuntime", namespace=NS))
    kube.srv.put_object(cluster_runtime("shared-torch"))
    kube.srv.put_object(cluster_runtime("elsewhere", "TrainingRuntime", namespace="default"))
    r = cli("runtime", "list", *kube.args(), "-o", "wide")
    assert r.exit_code == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
    assert rows["team-torch"].split()[-1] == "cluster" and "TrainingRuntime" in rows["team-torch"]
    assert rows["shared-torch"].split()[-1] == "cluster"
    assert rows["torch-distributed"].split()[-1] == "bundled"
    assert "elsewhere" not in rows  # another namespace's TrainingRuntime


def test_source_cluster_name_output_is_the_completion_contract(cli, kube) -> None:
    kube.srv.put_object(cluster_runtime("team-torch", "TrainingRuntime", namespace=NS))
    kube.srv.put_object(cluster_runtime("shared-torch"))
    r = cli("runtime", "list", *kube.args(), "--source", "cluster", "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == [
        "clustertrainingruntime.trainer.kubeflow.org/shared-torch",
        "trainingruntime.trainer.kubeflow.org/team-torch",
    ]


def test_cluster_copy_shadows_the_bundled_one(cli, kube) -> None:
    kube.srv.put_object(cluster_runtime("torch-distributed", image="registry.example/t:1"))
    r = cli("runtime", "list", *kube.args())
    (row,) = [line for line in r.stdout.splitlines() if line.startswith("torch-distributed ")]
    assert "registry.example/t:1" in row and row.rstrip().endswith("cluster (shadows bundled)")
    shown = cli("runtime", "show", "torch-distributed", *kube.args(), "-o", "yaml")
    assert "registry.example/t:1" in shown.stdout
    local = cli("runtime", "show", "torch-distributed", *kube.args(), "--source", "local", "-o", "yaml")
    assert "registry.example/t:1" not in local.stdout


def test_unreachable_cluster_warns_once_and_lists_local_runtimes(cli, kube) -> None:
    kube.srv.stop()
    r = cli("runtime", "list", *kube.args())
    assert r.exit_code == 0
    assert r.stderr.count("warning:") == 1 and "cannot reach the API server" in r.stderr
    assert "torch-distributed" in r.stdout


def test_source_cluster_fails_loudly_when_unreachable(cli, kube) -> None:
    kube.srv.stop()
    r = cli("runtime", "list", *kube.args(), "--source", "cluster")
    assert r.exit_code == 5 and "cannot reach" in r.stderr


def test_forbidden_cluster_scope_is_a_warning(cli, kube) -> None:
    kube.srv.forbid("list", "clustertrainingruntimes")
    kube.srv.put_object(cluster_runtime("team-torch", "TrainingRuntime", namespace=NS))
    r = cli("runtime", "list", *kube.args(), "-o", "name")
    assert r.exit_code == 0
    assert "cannot list ClusterTrainingRuntimes" in r.stderr
    assert "trainingruntime.trainer.kubeflow.org/team-torch" in r.stdout


def test_no_kubeconfig_is_silent_and_never_imports_kubernetes(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from ktrain.cli import main\n"
        "main(['runtime', 'list', '-o', 'name'])\n"
        "main(['runtime', 'list', '--source', 'local', '--kubeconfig', sys.argv[1], '-o', 'name'])\n"
        "print('KUBERNETES', 'kubernetes' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "KUBECONFIG": str(tmp_path / "none"), "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "kc")], capture_output=True, text=True, check=True, env=env
    )
    assert out.stderr == ""
    assert "KUBERNETES False" in out.stdout
    assert "clustertrainingruntime.trainer.kubeflow.org/torch-distributed" in out.stdout


def test_render_takes_a_runtime_only_the_cluster_has(cli, kube) -> None:
    kube.srv.put_object(cluster_runtime("team-torch", "TrainingRuntime", namespace=NS, image="registry.example/t:2"))
    import os

    os.environ["KUBECONFIG"] = kube.kubeconfig  # found through $KUBECONFIG, as kubectl would
    r = cli("job", "render", "--runtime", "team-torch", "--name", "x")
    assert r.exit_code == 0, r.stderr
    assert "registry.example/t:2" in r.stdout
    # a local name stays local unless the cluster is named explicitly
    kube.srv.put_object(cluster_runtime("torch-distributed", image="registry.example/t:3"))
    assert "registry.example/t:3" not in cli("job", "render", "--runtime", "torch-distributed").stdout
    explicit = cli("job", "render", "--runtime", "torch-distributed", "--context", "double")
    assert "registry.example/t:3" in explicit.stdout


def test_render_of_an_unknown_runtime_still_says_not_found(cli, kube) -> None:
    r = cli("job", "render", "--runtime", "nope", "--kubeconfig", kube.kubeconfig)
    assert r.exit_code == 4 and "'nope' not found" in r.stderr
