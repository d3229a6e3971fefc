"""The end-to-end suite (tests/e2e) stays runnable: run it against the API-server double, set up
like a bare API server (every CRD, no controllers, no garbage collector)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.both_transports,  # each test runs through both HTTP clients (conftest)
    pytest.mark.double,  # the double runs in the subprocess, where conftest's check does not see it
    pytest.mark.slow,  # the whole e2e suite, twice: ~17 s
]

RUNNER = Path(__file__).resolve().parent / "e2e" / "run_against_double.py"


def test_e2e_suite_passes_against_the_api_server_double() -> None:
    out = subprocess.run([sys.executable, str(RUNNER), "-q"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout and "failed" not in out.stdout
