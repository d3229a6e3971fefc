"""`ruff check .` and `ruff format --check .` stay at zero (rules: `[tool.ruff.lint]` in pyproject.toml).

So the README's test command, `python -m pytest -q`, also runs the linter and the formatter check.
Fix findings with `ruff check --fix .` (read the diff) and `ruff format .`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _ruff() -> list[str]:
    beside = Path(sys.executable).parent / "ruff"
    found = str(beside) if beside.is_file() else shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    return [found]


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff_finds_nothing(args: list[str]) -> None:
    out = subprocess.run([*_ruff(), *args], cwd=REPO, capture_output=True, text=True, check=False)
    assert out.returncode == 0, f"ruff {' '.join(args)}:\n{out.stdout}{out.stderr}"
