"""The values completion offers: contexts and namespaces from kubeconfig files, cluster names from
the cache (`ktrain.completion.values`)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ktrain.completion import values
from ktrain.completion.complete import answer
from unit.completion.trees import FUTURE_TREE, values_of


def _kubeconfig(path: Path, contexts: dict[str, str], current: str) -> Path:
    lines = ["apiVersion: v1", "kind: Config", f"current-context: {current}", "contexts:"]
    for name, ns in contexts.items():
        lines += [f"- name: {name}", "  context:", "    cluster: c", "    user: u", f"    namespace: {ns}"]
    lines += ["users:", "- name: u", "  user:", "    token: s3cr3t-token"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_contexts_and_namespaces_come_from_every_kubeconfig_file(tmp_path: Path, monkeypatch) -> None:
    a = _kubeconfig(tmp_path / "a", {"prod": "ml", "dev": "team-a"}, "prod")
    b = _kubeconfig(tmp_path / "b", {"dev": "ignored", "kind": "default"}, "kind")
    monkeypatch.setenv("KUBECONFIG", f"{a}{os.pathsep}{b}")
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    assert values_of(answer(FUTURE_TREE, "ktrain job logs --context ")) == ["dev", "kind", "prod"]
    # the first file that names a context wins, as in kubectl
    assert dict(answer(FUTURE_TREE, "ktrain job logs --context d").items)["dev"] == "team-a"
    namespaces = values_of(answer(FUTURE_TREE, "ktrain job logs -n "))
    assert {"ml", "team-a", "default"} <= set(namespaces) and "ignored" not in namespaces
    only_b = values_of(answer(FUTURE_TREE, f"ktrain job logs --kubeconfig {b} --context "))
    assert only_b == ["dev", "kind"]
    cached = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert "s3cr3t" not in cached  # names only: credentials never reach the cache


def test_cluster_values_come_from_a_fresh_cache_without_starting_a_refresh(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    kubeconfig = _kubeconfig(tmp_path / "kc", {"prod": "ml"}, "prod")
    given = {"--kubeconfig": [str(kubeconfig)]}
    entry = values._cluster_entry_path(values.connection_args(given))
    Path(entry).parent.mkdir(parents=True)
    Path(entry).write_text(json.dumps({"time": time.time(), "runtimes": ["on-cluster"], "jobs": ["job-a", "job-b"]}))
    started = []
    monkeypatch.setattr(values, "_start_refresh", lambda *a: started.append(a))
    result = answer(FUTURE_TREE, f"ktrain job logs --kubeconfig {kubeconfig} ")
    assert values_of(result) == ["job-a", "job-b"]
    assert "on-cluster" in values_of(answer(FUTURE_TREE, f"ktrain job render --kubeconfig {kubeconfig} --runtime o"))
    assert started == []
    # Stale: the old values are still offered at once, and one background refresh is started.
    Path(entry).write_text(json.dumps({"time": time.time() - 3600, "runtimes": [], "jobs": ["old"]}))
    assert values_of(answer(FUTURE_TREE, f"ktrain job logs --kubeconfig {kubeconfig} ")) == ["old"]
    assert len(started) == 1
