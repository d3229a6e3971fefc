"""`ktrain job watch` on the API-server double: a live view until the job ends, exit codes as `job wait`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from progress_jobs import TRAINER_STATUS, apply_trainer_status, complete_later, running_trainjob


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


def test_job_watch_follows_to_the_end_and_exits_as_job_wait(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    thread = complete_later(srv, "demo")
    result = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "0.2s", "--timeout", "60s")
    thread.join()
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "demo Running pods 2/2 restarts 0 progress 45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)"
    assert lines[-1].startswith("demo Complete") and len(lines) == len(set(lines))


def test_job_watch_of_a_failed_job_exits_1_and_a_timeout_124(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    timed_out = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "0.2s", "--timeout", "0.5s")
    assert timed_out.exit_code == 124
    failed = {"type": "Failed", "status": "True", "reason": "JobSetFailed", "message": "a pod failed"}
    srv.set_status("trainjobs", "demo", {"conditions": [failed]}, group="trainer.kubeflow.org")
    result = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "0.2s")
    assert result.exit_code == 1 and "demo Failed" in result.stdout


def test_a_too_short_interval_is_refused(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    result = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "10ms")
    assert result.exit_code == 2 and "--interval must be at least" in result.stderr
