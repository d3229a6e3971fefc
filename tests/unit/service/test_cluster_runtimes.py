"""The cluster's runtimes read into the registry (the API-server double, tests/conftest.py `kube`):
fetch_runtime_entries, add_cluster_runtimes, find_runtime, runtime_file_notes, portable_metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.cluster.connection import ConnectionOptions
from ktrain.errors import UsageError
from ktrain.inputs.bundled import builtin_runtimes_dir
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.cluster_runtimes import (
    LAST_APPLIED,
    add_cluster_runtimes,
    fetch_runtime_entries,
    find_runtime,
    kubeconfig_available,
    portable_metadata,
    runtime_file_notes,
)


def _runtime(name: str, kind: str = "ClusterTrainingRuntime", namespace: str | None = None) -> dict:
    runtime = yaml.safe_load((builtin_runtimes_dir() / "torch-distributed.yaml").read_text())
    runtime["kind"] = kind
    runtime["metadata"]["name"] = name
    if namespace:
        runtime["metadata"]["namespace"] = namespace
    return runtime


def test_portable_metadata_drops_what_the_server_sets() -> None:
    meta = {
        "name": "rt",
        "uid": "u",
        "resourceVersion": "7",
        "managedFields": [],
        "labels": {"a": "b"},
        "annotations": {LAST_APPLIED: "{}"},
    }
    assert portable_metadata(meta) == {"name": "rt", "labels": {"a": "b"}}
    kept = portable_metadata({"name": "rt", "annotations": {LAST_APPLIED: "{}", "note": "x"}})
    assert kept == {"name": "rt", "annotations": {"note": "x"}}


def test_kubeconfig_available_sees_a_kubeconfig_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert not kubeconfig_available(None)
    (tmp_path / "config").write_text("apiVersion: v1\nkind: Config\n")
    assert kubeconfig_available(str(tmp_path / "config"))


def test_the_clusters_runtimes_are_read_without_server_metadata(cluster: Any, kube: Any) -> None:
    kube.srv.put_object(_runtime("shared-torch"))
    kube.srv.put_object(_runtime("team-torch", "TrainingRuntime", namespace="team-a"))
    kube.srv.put_object(_runtime("elsewhere", "TrainingRuntime", namespace="default"))
    entries, warnings = fetch_runtime_entries(cluster)
    assert warnings == []
    assert sorted((e.runtime.kind, e.runtime.name) for e in entries) == [
        ("ClusterTrainingRuntime", "shared-torch"),
        ("TrainingRuntime", "team-torch"),
    ]
    assert {e.source for e in entries} == {"cluster"}
    assert all(e.runtime.metadata.uid is None for e in entries)


def test_preferred_cluster_runtimes_win_over_the_bundled_ones(cluster: Any, kube: Any) -> None:
    kube.srv.put_object(_runtime("torch-distributed"))
    registry = RuntimeRegistry()
    assert registry.get("torch-distributed").source != "cluster"
    assert add_cluster_runtimes(registry, cluster, prefer=True) == []
    assert registry.get("torch-distributed").source == "cluster"


def test_find_runtime_looks_on_the_cluster_named_by_kubeconfig(kube: Any) -> None:
    kube.srv.put_object(_runtime("only-on-cluster"))
    entry, warnings = find_runtime(RuntimeRegistry(), "only-on-cluster", ConnectionOptions(kubeconfig=kube.kubeconfig))
    assert entry.source == "cluster" and entry.runtime.name == "only-on-cluster"
    assert warnings == []


def test_a_runtime_file_hiding_the_clusters_is_said_and_refused_for_a_trainjob(
    cluster: Any, kube: Any, tmp_path: Path
) -> None:
    kube.srv.put_object(_runtime("torch-distributed"))
    path = tmp_path / "rt.yaml"
    path.write_text(yaml.safe_dump(_runtime("torch-distributed")))
    registry = RuntimeRegistry(files=[str(path)])
    add_cluster_runtimes(registry, cluster, prefer=True)
    entry = registry.get("torch-distributed")
    assert entry.source == "file"
    assert runtime_file_notes(entry, for_controller=False) == [
        f"using ClusterTrainingRuntime torch-distributed from --runtime-file {path}, not the cluster's of the same name"
    ]
    with pytest.raises(UsageError, match="which the Trainer controller would use for this TrainJob"):
        runtime_file_notes(entry, for_controller=True)
    assert runtime_file_notes(RuntimeRegistry().get("jax-distributed"), for_controller=True) == []
