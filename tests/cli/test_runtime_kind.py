"""The runtime lookup honours `runtimeRef.kind` as the TrainJob webhook does (issue #13): upstream
picks the runtime by apiGroup+kind (`pkg/webhooks/trainjob_webhook.go`) and gets it by name
(ClusterTrainingRuntime) or namespace/name (TrainingRuntime) in `pkg/runtime/core/*ValidateObjects`,
so a runtime of the same name under the other kind is "not found"."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ktrain.errors import ExitCode
from ktrain.inputs.bundled import builtin_runtimes_dir

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"
CTR_NOT_FOUND = "specified clusterTrainingRuntime must be created before the TrainJob is created"
TR_NOT_FOUND = "specified trainingRuntime must be created before the TrainJob is created"


def runtime(name: str, kind: str, image: str, namespace: str | None = None) -> dict:
    data = yaml.safe_load((builtin_runtimes_dir() / "torch-distributed.yaml").read_text())
    data["kind"] = kind
    data["metadata"] = {"name": name, **({"namespace": namespace} if namespace else {})}
    pod = data["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["image"] = image
    return data


def write(path: Path, *docs: dict) -> str:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


def job(tmp_path: Path, name: str, kind: str | None) -> str:
    ref = f"\n    kind: {kind}" if kind else ""
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: j\n  namespace: default\n"
        f"spec:\n  runtimeRef:\n    name: {name}{ref}\n  trainer:\n    numNodes: 1\n"
    )
    return str(path)


def test_runtime_file_of_the_other_kind_refuses_instead_of_the_bundled_runtime(cli, tmp_path) -> None:
    rt = write(tmp_path / "rt.yaml", runtime("torch-distributed", "TrainingRuntime", "mine", "default"))
    r = cli("job", "render", "-f", job(tmp_path, "torch-distributed", "ClusterTrainingRuntime"), "--runtime-file", rt)
    assert r.exit_code == ExitCode.NOT_FOUND, r.stdout
    assert "job.yaml:9:11: ClusterTrainingRuntime 'torch-distributed' not found" in r.stderr
    assert 'spec.RuntimeRef: Invalid value: "torch-distributed"' in r.stderr and CTR_NOT_FOUND in r.stderr
    assert f"hint: {rt} holds a TrainingRuntime named 'torch-distributed', not a ClusterTrainingRuntime" in r.stderr
    # the same job without a kind: the CRD default ClusterTrainingRuntime, said in the hint
    r = cli("job", "validate", "-f", job(tmp_path, "torch-distributed", None), "--runtime-file", rt)
    assert r.exit_code == ExitCode.NOT_FOUND and CTR_NOT_FOUND in r.stderr
    assert "(runtimeRef.kind defaults to ClusterTrainingRuntime)" in r.stderr
    assert "job.yaml:8:5:" in r.stderr  # no kind line: the runtimeRef mapping


def test_runtime_file_of_the_asked_kind_renders(cli, tmp_path) -> None:
    rt = write(tmp_path / "rt.yaml", runtime("torch-distributed", "TrainingRuntime", "mine", "default"))
    r = cli("job", "render", "-f", job(tmp_path, "torch-distributed", "TrainingRuntime"), "--runtime-file", rt)
    assert r.exit_code == 0, r.stderr
    assert "image: mine" in r.stdout


def test_clustertrainingruntime_file_refuses_a_trainingruntime_ref(cli, tmp_path) -> None:
    rt = write(tmp_path / "rt.yaml", runtime("shared", "ClusterTrainingRuntime", "mine"))
    r = cli("job", "render", "-f", job(tmp_path, "shared", "TrainingRuntime"), "--runtime-file", rt)
    assert r.exit_code == ExitCode.NOT_FOUND
    assert 'spec.runtimeRef: Invalid value: "shared"' in r.stderr and TR_NOT_FOUND in r.stderr
    assert "set spec.runtimeRef.kind: ClusterTrainingRuntime" in r.stderr


def test_runtimes_dir_runtime_of_the_other_kind_does_not_hide_the_asked_kind(cli, tmp_path) -> None:
    """Both kinds may exist side by side in a cluster: only a --runtime-file decides the name."""
    d = tmp_path / "rts"
    d.mkdir()
    write(d / "a.yaml", runtime("torch-distributed", "TrainingRuntime", "mine", "default"))
    r = cli("job", "render", "-f", job(tmp_path, "torch-distributed", None), "--runtimes-dir", str(d))
    assert r.exit_code == 0, r.stderr
    assert "image: mine" not in r.stdout  # the bundled ClusterTrainingRuntime
    write(d / "b.yaml", runtime("team-only", "TrainingRuntime", "mine", "default"))
    r = cli("job", "render", "-f", job(tmp_path, "team-only", "ClusterTrainingRuntime"), "--runtimes-dir", str(d))
    assert r.exit_code == ExitCode.NOT_FOUND and CTR_NOT_FOUND in r.stderr
    assert f"there is (dir:{d / 'b.yaml'}) a TrainingRuntime named 'team-only'" in r.stderr


def test_runtime_name_takes_the_highest_source_unless_the_kind_is_set(cli, tmp_path) -> None:
    rt = write(tmp_path / "rt.yaml", runtime("torch-distributed", "TrainingRuntime", "mine", "default"))
    r = cli("job", "render", "--runtime", "torch-distributed", "--runtime-file", rt, "-o", "yaml")
    assert r.exit_code == 0, r.stderr
    assert "image: mine" in r.stdout  # not the bundled ClusterTrainingRuntime, which sorts first
    r = cli("job", "render", "--runtime", "torch-distributed", "--set", "runtimeRef.kind=ClusterTrainingRuntime")
    assert r.exit_code == 0, r.stderr
    r = cli(
        "job",
        "render",
        "--runtime",
        "torch-distributed",
        "--runtime-file",
        rt,
        "--set",
        "runtimeRef.kind=ClusterTrainingRuntime",
    )
    assert r.exit_code == ExitCode.NOT_FOUND and CTR_NOT_FOUND in r.stderr


def test_cluster_runtimes_are_looked_up_by_kind(cli, kube, tmp_path) -> None:
    kube.srv.put_object(runtime("team-torch", "TrainingRuntime", "cluster-tr", NS))
    kube.srv.put_object(runtime("shared", "ClusterTrainingRuntime", "cluster-ctr"))
    tj = tmp_path / "tj.yaml"
    tj.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j}\n"
        "spec:\n  runtimeRef: {name: team-torch, kind: ClusterTrainingRuntime}\n"
    )
    r = cli("job", "render", "-f", str(tj), *kube.args())
    assert r.exit_code == ExitCode.NOT_FOUND and CTR_NOT_FOUND in r.stderr
    assert "there is (cluster) a TrainingRuntime named 'team-torch'" in r.stderr
    tj.write_text(tj.read_text().replace("team-torch, kind: ClusterTrainingRuntime", "shared"))
    r = cli("job", "render", "-f", str(tj), *kube.args())
    assert r.exit_code == 0, r.stderr
    assert "cluster-ctr" in r.stdout


def test_a_local_runtime_of_the_other_kind_lets_the_cluster_fallback_find_the_asked_kind(
    cli, kube, tmp_path, monkeypatch
) -> None:
    """Without --kubeconfig/--context, local runtimes come first and the cluster is asked only for
    what is not found locally: a local TrainingRuntime does not stop that for a ClusterTrainingRuntime."""
    d = tmp_path / "rts"
    d.mkdir()
    write(d / "a.yaml", runtime("shared", "TrainingRuntime", "local-tr", NS))
    kube.srv.put_object(runtime("shared", "ClusterTrainingRuntime", "cluster-ctr"))
    monkeypatch.setenv("KUBECONFIG", kube.kubeconfig)
    tj = tmp_path / "tj.yaml"
    tj.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j, namespace: team-a}\n"
        "spec:\n  runtimeRef: {name: shared}\n"
    )
    r = cli("job", "render", "-f", str(tj), "--runtimes-dir", str(d))
    assert r.exit_code == 0, r.stderr
    assert "cluster-ctr" in r.stdout and "local-tr" not in r.stdout
