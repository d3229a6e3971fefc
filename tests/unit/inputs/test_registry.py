"""`ktrain.inputs.registry`, the runtimes by name: the runtime index of a directory, so that a lookup by
name reads only the file holding that name, what a runtime shadows, and errors as without the index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ktrain.inputs import registry

from .runtime_dirs import RUNTIME, _count_reads, _find


def test_a_lookup_reads_every_file_once_then_only_the_one_holding_the_name(three_runtimes: Path, monkeypatch) -> None:
    reads = _count_reads(monkeypatch)
    assert _find(three_runtimes, "cached-rt") is not None
    assert sorted(reads) == ["other-a.yaml", "other-b.yaml", "rt.yaml"]  # no index yet: every file
    reads.clear()
    entry = _find(three_runtimes, "cached-rt")
    assert entry is not None and entry.runtime.spec.ml_policy.num_nodes == 2
    assert reads == ["rt.yaml"]
    reads.clear()
    assert _find(three_runtimes, "nowhere") is None and reads == []


def test_the_index_notes_what_a_file_shadows(three_runtimes: Path, monkeypatch, tmp_path: Path) -> None:
    higher = tmp_path / "higher"
    higher.mkdir()
    (higher / "mine.yaml").write_text(RUNTIME.replace("numNodes: 2", "numNodes: 5"))
    for _ in range(2):  # without, then with the indexes
        entry = registry.RuntimeRegistry(dirs=[str(higher), str(three_runtimes)], bundled=False).find("cached-rt")
        assert entry is not None and entry.runtime.spec.ml_policy.num_nodes == 5
        assert entry.shadows == [f"dir:{three_runtimes / 'rt.yaml'}"]


@pytest.mark.parametrize("change", ["edit", "same-size-and-mtime", "add", "remove", "rename"])
def test_a_changed_directory_is_read_whole_again(three_runtimes: Path, monkeypatch, change: str) -> None:
    _find(three_runtimes, "cached-rt")  # writes the index
    path = three_runtimes / "other-a.yaml"
    stat = path.stat()
    if change == "edit":
        path.write_text(RUNTIME.replace("cached-rt", "renamed-rt"))
    elif change == "same-size-and-mtime":
        path.write_text(RUNTIME.replace("cached-rt", "cached-xx").replace("other-a", "cached-rt"))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    elif change == "add":
        (three_runtimes / "new.yaml").write_text(RUNTIME.replace("cached-rt", "renamed-rt"))
    elif change == "remove":
        path.unlink()
    else:
        path.rename(three_runtimes / "zz.yaml")
    reads = _count_reads(monkeypatch)
    _find(three_runtimes, "renamed-rt")
    assert len(reads) == len(os.listdir(three_runtimes))  # every file again
    if change in ("edit", "add"):
        assert _find(three_runtimes, "renamed-rt") is not None


def test_a_broken_file_fails_every_lookup_as_before(three_runtimes: Path) -> None:
    from ktrain.errors import KtrainError

    _find(three_runtimes, "cached-rt")
    (three_runtimes / "other-b.yaml").write_text(RUNTIME.replace("numNodes: 2", "numNodes: many"))
    for _ in range(2):  # an index is only written for a directory read without error
        with pytest.raises(KtrainError):
            _find(three_runtimes, "cached-rt")
