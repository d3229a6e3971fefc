"""Fixtures of the tests of `ktrain.inputs`: directories of runtime files, with a cache of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from .runtime_dirs import RUNTIME


@pytest.fixture
def runtimes_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    directory = tmp_path / "runtimes"
    directory.mkdir()
    (directory / "rt.yaml").write_text(RUNTIME)
    return directory


@pytest.fixture
def three_runtimes(runtimes_dir: Path) -> Path:
    for name in ("other-a", "other-b"):
        (runtimes_dir / f"{name}.yaml").write_text(RUNTIME.replace("cached-rt", name))
    return runtimes_dir
