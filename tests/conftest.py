"""Shared fixtures: where ../shared is, and a CLI runner that captures stdout/stderr."""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CASES = SHARED / "conformance" / "cases"
UPSTREAM = SHARED / "reference" / "upstream"


def need_shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present beside the repository")
    return SHARED


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Tests (and the ktrain processes they start) never read or write the user's ~/.cache."""
    previous = os.environ.get("KTRAIN_CACHE_DIR")
    os.environ["KTRAIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("ktrain-cache"))
    yield
    if previous is None:
        os.environ.pop("KTRAIN_CACHE_DIR", None)
    else:
        os.environ["KTRAIN_CACHE_DIR"] = previous


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `ktrain ARGS...` in-process; returns exit code, stdout and stderr."""
    from ktrain.cli import main

    def run(*args: str, stdin: str = "") -> Result:
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(args))
        monkeypatch.undo()
        return Result(code, out.getvalue(), err.getvalue())

    return run
