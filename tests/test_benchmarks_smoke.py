"""`benchmarks/run.py` runs (the benchmark itself is not part of the test suite: only --quick)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


@pytest.mark.skipif(not SCRIPT.is_file(), reason="benchmarks/ is not in this tree")
def test_quick_benchmark_prints_every_figure_and_writes_json(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(target)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(target.read_text())
    cold = result["cold"]
    for row in (
        "render torch 4 nodes",
        "render -f MPI job file",
        "completion --runtime <TAB>",
        "runtime list",
        "--help",
    ):
        assert cold[row]["exit_codes"] == [0], (row, cold[row])
        assert cold[row]["median_ms"] > 0 and cold[row]["peak_rss_mib"] > 0
        assert row in out.stdout
    assert set(result["in_process"]) == {"torch 4 nodes", "deepspeed 16 nodes (--ssh-secret)"}
    assert {"1", "64", "1024"} <= set(result["scaling"])
    assert "status" in result["job_create"] and "job create" in out.stdout
    assert "targets:" in out.stdout
