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


def progress_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("progress: ")]


TQDM_SCRIPT = """
import sys, time
from tqdm import tqdm
for i in tqdm(range(int(sys.argv[1])), mininterval=0, miniters=1, postfix={"loss": 0.5}):
    if i == 45:
        time.sleep(3)  # a slow step: the bar at 45% is shown meanwhile (a timer, 1 s at most)
    time.sleep(float(sys.argv[2]))
print("trained")
"""


def test_a_local_run_shows_a_tqdm_bars_progress_from_the_log(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    done = run_local(tmp_path, TQDM_SCRIPT, "100", "0.01")
    assert done.returncode == 0, done.stderr
    lines = progress_lines(done)
    assert any(line.startswith("progress: 45% ETA ") and line.endswith(" loss=0.5 (log (tqdm))") for line in lines), (
        lines
    )
    assert lines[-1] == "progress: 100% ETA 0s loss=0.5 (log (tqdm))"
    assert all(set(line) & {"\r", "\x1b", "\x08"} == set() for line in done.stderr.splitlines())
    assert "[node-0-0] trained" in done.stdout


def test_ten_thousand_bar_redraws_make_a_few_progress_lines(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    done = run_local(tmp_path, TQDM_SCRIPT.replace("if i == 45", "if False"), "10000", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("it/s") >= 10000  # every redraw reached the run, and was printed
    lines = progress_lines(done)
    assert 1 <= len(lines) <= 4, lines  # one a second at most, and the last
    assert lines[-1] == "progress: 100% ETA 0s loss=0.5 (log (tqdm))"


KTRAIN_LINE_SCRIPT = """
import time
print("KTRAIN_PROGRESS percent=45 eta=3600 loss=0.23", flush=True)
time.sleep(1.5)
print("KTRAIN_PROGRESS percent=100 eta=0 loss=0.1", flush=True)
"""


def test_a_local_run_shows_the_ktrain_progress_line(tmp_path: Path) -> None:
    done = run_local(tmp_path, KTRAIN_LINE_SCRIPT)
    assert done.returncode == 0, done.stderr
    assert progress_lines(done) == [
        "progress: 45% ETA 1h00m loss=0.23 (log (ktrain))",
        "progress: 100% ETA 0s loss=0.1 (log (ktrain))",
    ]


STATUS_AND_LOG_SCRIPT = """
import time
print("KTRAIN_PROGRESS percent=10 eta=60", flush=True)
time.sleep(1.2)
from kubeflow.trainer import update_trainjob_status
assert update_trainjob_status(progress_percent=45, estimated_remaining_seconds=3600, metrics={"loss": 0.2347})
for percent in (80, 90, 99):
    print(f"KTRAIN_PROGRESS percent={percent} eta=1", flush=True)
    time.sleep(0.6)
"""


def test_the_status_endpoint_beats_the_log(tmp_path: Path) -> None:
    pytest.importorskip("kubeflow.trainer")
    done = run_local(tmp_path, STATUS_AND_LOG_SCRIPT)
    assert done.returncode == 0, done.stderr
    # the log spoke first; once the trainer reports, the log's later lines are not shown
    assert progress_lines(done) == [
        "progress: 10% ETA 1m00s (log (ktrain))",
        "progress: 45% ETA 1h00m loss=0.2347 (status)",
    ]
