"""The runtime parse cache: used when the file is unchanged, ignored when stale, corrupt or not to be trusted."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import REPO
from hostile_input import needs_fifo

from ktrain.inputs import documents as loader
from ktrain.inputs import parse_cache as cache
from ktrain.inputs import registry

from .runtime_dirs import RUNTIME, _count_reads, _find


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


def test_an_index_from_another_ktrain_or_corrupt_is_not_used(three_runtimes: Path, monkeypatch) -> None:
    _find(three_runtimes, "cached-rt")
    index = Path(cache._index_path(str(three_runtimes)))
    assert cache.read_runtime_index(str(three_runtimes), registry._yaml_files(str(three_runtimes))) is not None
    monkeypatch.setattr(cache, "RUNTIME_INDEX_FORMAT", cache.RUNTIME_INDEX_FORMAT + 1)
    assert cache.read_runtime_index(str(three_runtimes), registry._yaml_files(str(three_runtimes))) is None
    monkeypatch.undo()
    text = index.read_text()
    index.write_text(text.replace("other-a", "other-c"))  # edited after it was written: its checksum fails
    assert cache.read_runtime_index(str(three_runtimes), registry._yaml_files(str(three_runtimes))) is None
    reads = _count_reads(monkeypatch)
    assert _find(three_runtimes, "other-a") is not None and len(reads) == 3


def test_completion_names_the_runtimes_of_an_indexed_directory_as_it_does_without(three_runtimes: Path) -> None:
    from ktrain.completion import values

    without = values.local_runtimes([], [str(three_runtimes)])
    _find(three_runtimes, "cached-rt")  # writes the index
    assert values.local_runtimes([], [str(three_runtimes)]) == without
    offered = dict(without)
    assert offered["cached-rt"] == offered["other-a"] == "dir" and "torch-distributed" in offered


# -- a cache entry is not trusted: edited, deeply nested, a FIFO or device, a symlink, a directory ----
# -- others may write to (issue #12) -------------------------------------------------------------

TORCH_RUNTIME = (REPO / "runtimes" / "torch-distributed.yaml").read_text()


@pytest.fixture
def torch_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    directory = tmp_path / "runtimes"
    directory.mkdir()
    (directory / "rt.yaml").write_text(TORCH_RUNTIME)
    return directory


def _entry(torch_runtime_dir: Path) -> Path:
    return Path(cache.entry_path("runtimes", str((torch_runtime_dir / "rt.yaml").resolve())))


def _image(torch_runtime_dir: Path) -> str:
    entries = registry.RuntimeRegistry(dirs=[str(torch_runtime_dir)], bundled=False).entries()
    return json.dumps(entries[0].document.data)


def test_edited_cache_entry_is_not_trusted(torch_runtime_dir: Path) -> None:
    _image(torch_runtime_dir)
    entry = _entry(torch_runtime_dir)
    text = entry.read_text()
    assert "pytorch/pytorch" in text
    entry.write_text(text.replace("pytorch/pytorch", "evil/evil"))
    assert "evil/evil" not in _image(torch_runtime_dir)
    assert "evil/evil" not in entry.read_text()  # re-parsed and rewritten


def test_deeply_nested_cache_entry_is_not_trusted(torch_runtime_dir: Path) -> None:
    _image(torch_runtime_dir)
    entry = _entry(torch_runtime_dir)
    header, _, _body = entry.read_text().partition("\n")
    entry.write_text(header + "\n" + "[" * 100_000 + "]" * 100_000)
    assert "pytorch" in _image(torch_runtime_dir)
    entry.write_bytes(cache._HEADER + cache.checksum(b"[" * 100_000).encode() + b"\n" + b"[" * 100_000)
    assert "pytorch" in _image(torch_runtime_dir)  # even with a matching checksum: never a crash


@needs_fifo
def test_fifo_or_device_at_a_cache_entry_is_not_read(torch_runtime_dir: Path) -> None:
    _image(torch_runtime_dir)
    entry = _entry(torch_runtime_dir)
    entry.unlink()
    os.mkfifo(entry)
    assert "pytorch" in _image(torch_runtime_dir)  # did not block
    entry.unlink()
    if os.path.exists("/dev/zero"):
        entry.symlink_to("/dev/zero")
        assert "pytorch" in _image(torch_runtime_dir)  # O_NOFOLLOW: not followed


def test_cache_entry_through_a_symlink_is_not_followed(torch_runtime_dir: Path, tmp_path: Path) -> None:
    _image(torch_runtime_dir)
    entry = _entry(torch_runtime_dir)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(entry.read_bytes().replace(b"pytorch/pytorch", b"evil/evil"))
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert "evil/evil" not in _image(torch_runtime_dir)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_cache_directory_writable_by_others_is_not_used(torch_runtime_dir: Path) -> None:
    _image(torch_runtime_dir)
    entry = _entry(torch_runtime_dir)
    assert entry.parent.stat().st_mode & 0o777 == 0o700
    entry.parent.chmod(0o777)
    assert cache.read_json(str(entry), verified=True) is None  # in doubt: parse again
    assert "pytorch" in _image(torch_runtime_dir)
    entry.parent.chmod(0o700)
    assert cache.read_json(str(entry), verified=True) is not None
