"""The runtime parse cache: used when the file is unchanged, ignored when stale or corrupt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ktrain.inputs import documents as loader
from ktrain.inputs import parse_cache as cache
from ktrain.inputs import registry

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: cached-rt
spec:
  mlPolicy:
    numNodes: 2
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: img:1
"""


@pytest.fixture
def runtimes_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    directory = tmp_path / "runtimes"
    directory.mkdir()
    (directory / "rt.yaml").write_text(RUNTIME)
    return directory


def _load(directory: Path) -> list[registry.RuntimeEntry]:
    return registry.RuntimeRegistry(dirs=[str(directory)], bundled=False).entries()


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = loader.load_documents

    def counting(text: str, file: str):  # type: ignore[no-untyped-def]
        calls.append(file)
        return real(text, file)

    monkeypatch.setattr(registry, "load_documents", counting)
    return calls


def test_unchanged_file_is_read_from_the_cache_with_its_positions(runtimes_dir: Path, monkeypatch) -> None:
    calls = _count_parses(monkeypatch)
    first = _load(runtimes_dir)
    second = _load(runtimes_dir)
    assert len(calls) == 1  # the second registry did not parse the YAML again
    assert first[0].runtime == second[0].runtime
    assert first[0].document.positions == second[0].document.positions
    assert second[0].document.locate(("spec", "mlPolicy", "numNodes")) == (7, 15)


def test_a_changed_file_with_the_same_size_and_mtime_is_parsed_again(runtimes_dir: Path, monkeypatch) -> None:
    calls = _count_parses(monkeypatch)
    path = runtimes_dir / "rt.yaml"
    _load(runtimes_dir)
    stat = path.stat()
    path.write_text(RUNTIME.replace("numNodes: 2", "numNodes: 3"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # e.g. `cp -p`, or a coarse clock
    entries = _load(runtimes_dir)
    assert len(calls) == 2
    assert entries[0].runtime.spec.ml_policy.num_nodes == 3


def test_a_corrupt_cache_entry_is_ignored_and_replaced(runtimes_dir: Path, monkeypatch) -> None:
    calls = _count_parses(monkeypatch)
    _load(runtimes_dir)
    entry = Path(cache.entry_path("runtimes", str((runtimes_dir / "rt.yaml").resolve())))
    for garbage in ('{"format": 1, "path": 3', '{"format": 1}', "[]", '{"documents": "x"}'):
        entry.write_text(garbage)
        assert _load(runtimes_dir)[0].runtime.name == "cached-rt"
    assert len(calls) == 5
    assert cache.read_json(str(entry), verified=True)["format"] == cache.RUNTIME_CACHE_FORMAT  # rewritten


def test_an_unwritable_cache_is_not_an_error(runtimes_dir: Path, monkeypatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(blocker / "cache"))
    assert _load(runtimes_dir)[0].runtime.name == "cached-rt"


def test_cache_location_follows_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KTRAIN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == str(tmp_path / "xdg" / "ktrain")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == str(tmp_path / ".cache" / "ktrain")
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.cache_dir() == str(tmp_path / "mine")
