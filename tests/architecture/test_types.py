"""The package type-checks: `mypy` (configured in pyproject.toml: strict) reports no error.

Run it yourself from the repository root: `.venv/bin/mypy` (it reads [tool.mypy], which
checks all of ktrain).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Packages whose mypy errors are not counted yet (none: the whole package is held to zero).
NOT_YET_CLEAN: tuple[str, ...] = ()

ERROR = re.compile(r"^(?P<file>[^:\s]+):\d+(?::\d+)?: error: ")


@pytest.mark.slow  # mypy over the whole package: ~15 s
def test_mypy_reports_no_errors() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the test extra: pip install -e '.[test]')")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    # 0: clean, 1: errors found; anything else is mypy failing to run (bad config, crash).
    assert out.returncode in (0, 1), out.stdout + out.stderr
    errors = [
        line
        for line in out.stdout.splitlines()
        if (match := ERROR.match(line)) and not match["file"].replace("\\", "/").startswith(NOT_YET_CLEAN)
    ]
    assert not errors, "mypy (see [tool.mypy] in pyproject.toml):\n" + "\n".join(errors)


def test_the_trainer_api_version_spelled_out_for_the_type_checker_is_group_and_version() -> None:
    from ktrain import constants as c

    assert f"{c.TRAINER_GROUP}/{c.TRAINER_VERSION}" == c.TRAINER_API_VERSION
