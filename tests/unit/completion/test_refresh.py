"""The background refresh of cluster values for completion (`ktrain.completion.refresh`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ktrain.completion.refresh import refresh


def test_refresh_reads_the_cli_name_output_and_treats_failure_as_no_values(tmp_path: Path) -> None:
    fake = tmp_path / "fake-ktrain"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = runtime ]; then\n'
        "  echo clustertrainingruntime.trainer.kubeflow.org/big-torch\n"
        "  echo trainingruntime.trainer.kubeflow.org/team-rt\n"
        "  exit 0\nfi\n"
        "exit 2\n"
    )
    fake.chmod(0o755)
    entry = tmp_path / "entry.json"
    result = refresh(str(entry), ["--context", "prod"], cli=[str(fake)])
    assert result["runtimes"] == ["big-torch", "team-rt"] and result["jobs"] == []
    assert json.loads(entry.read_text())["runtimes"] == ["big-torch", "team-rt"]


def test_a_slow_cluster_cannot_hang_the_refresh(tmp_path: Path, monkeypatch) -> None:
    from ktrain.completion import refresh as refresh_module

    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setattr(refresh_module, "TIME_LIMIT", 0.5)
    started = time.monotonic()
    result = refresh(str(tmp_path / "e.json"), [], cli=[str(slow)])
    assert time.monotonic() - started < 5
    assert result["runtimes"] == [] and result["jobs"] == []
