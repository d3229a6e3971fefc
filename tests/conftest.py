"""Shared fixtures: where ../shared is, and a CLI runner that captures stdout/stderr."""

from __future__ import annotations

import io
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
