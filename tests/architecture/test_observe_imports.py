"""The job-observing commands keep the render path light, and the job logic (`ktrain.jobs`) stays pure."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

JOBS = Path(__file__).resolve().parents[2] / "ktrain" / "jobs"
# What a module of ktrain.jobs may import: the standard library's pure parts and ktrain's pure layers.
# `re`: matching JobSet's onJobFailureMessagePatterns (ktrain.jobs.restarts, imported where it matches).
PURE = {"__future__", "datetime", "typing", "decimal", "copy", "collections.abc", "re"}
PURE_KTRAIN = ("ktrain.jobs", "ktrain.engine", "ktrain.util", "ktrain.api")


def test_registering_and_helping_the_observe_commands_does_not_import_the_client() -> None:
    code = (
        "import sys\n"
        "from ktrain.cli import main\n"
        "for cmd in ('list', 'get', 'why', 'logs', 'wait'):\n"
        "    main(['job', cmd, '--help'])\n"
        "import ktrain.jobs.state\n"
        "print('HEAVY', [m for m in ('kubernetes', 'ktrain.cluster.reads', 'ktrain.service.job_get') "
        "if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout, out.stdout[-500:] + out.stderr


def test_the_job_logic_is_pure() -> None:
    """State, `job why`'s verdicts (issue #29), the views, the log choice, the plan and the diff's
    normalisation are functions of objects: reads happen in ktrain.cluster, composed by ktrain.service."""
    modules = sorted(JOBS.rglob("*.py"))
    assert len(modules) > 10
    for path in modules:
        text = path.read_text()
        imports = set(re.findall(r"^\s*(?:import|from)\s+([\w.]+)", text, re.M))
        impure = {
            m
            for m in imports
            if m not in PURE
            and m not in ("ktrain", "ktrain.constants", "ktrain.errors")
            and not m.startswith(PURE_KTRAIN)
        }
        assert not impure, (path.name, impure)
        assert not re.search(r"\b(open|print)\(|time\.(time|monotonic|sleep)\(", text), path.name
        if path.parent.name == "why":  # the verdicts take `now` from their caller
            assert ".now(" not in text, path.name
