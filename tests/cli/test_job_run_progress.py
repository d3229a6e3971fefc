"""`job run --local` reports progress as the cluster does: the trainer's own reporting code, unchanged
(the Kubeflow SDK's `update_trainjob_status`, a real `transformers.Trainer`), reaches the run's
status endpoint and ktrain shows it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import training_logs

SDK_SCRIPT = """
import kubeflow.trainer.backends.kubernetes.utils as sdk
from kubeflow.trainer import update_trainjob_status
assert update_trainjob_status(progress_percent=45, estimated_remaining_seconds=3600, metrics={"loss": 0.2347})
sdk._last_update_time = 0.0  # the SDK's 5 s throttle, shortened for the test
assert update_trainjob_status(progress_percent=100, estimated_remaining_seconds=0, metrics={"loss": 0.1})
print("reported")
"""


def run_local(tmp_path: Path, script: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text(script)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [
            *[sys.executable, "-m", "ktrain", "job", "run", "--local", "-r", "torch-distributed", "--name", "demo"],
            *["--", sys.executable, str(tmp_path / "train.py"), *args],
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def test_the_sdks_update_trainjob_status_reports_from_a_local_run(tmp_path: Path) -> None:
    pytest.importorskip("kubeflow.trainer")
    done = run_local(tmp_path, SDK_SCRIPT)
    assert done.returncode == 0, done.stderr
    assert "[node-0-0] reported" in done.stdout
    progress = [line for line in done.stderr.splitlines() if line.startswith("progress: ")]
    assert progress == ["progress: 45% ETA 1h00m loss=0.2347 (status)", "progress: 100% ETA 0s loss=0.1 (status)"]


def test_a_tiny_transformers_trainer_reports_from_a_local_run_unchanged(tmp_path: Path) -> None:
    missing = [m for m in ("torch", "transformers", "accelerate") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (a CPU torch, transformers and accelerate)")
    done = run_local(tmp_path, training_logs.TRANSFORMERS, str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    progress = [line for line in done.stderr.splitlines() if line.startswith("progress: ")]
    # transformers' KubeflowCallback registers itself on the variables: 0% first, 100% at the end
    assert progress[0].startswith("progress: 0% ") and progress[-1].startswith("progress: 100% ETA 0s loss=")
    assert all(line.endswith("(status)") for line in progress)
