"""`ktrain.cluster.progress_read`: a job's progress is its status's, else its rank-0 log's, read
bounded. On the API-server double."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.cluster.progress_read import (
    LOG_LINES,
    LOG_READ_BYTES,
    job_progress,
    log_progress,
    rank_zero,
    status_progress,
)
from ktrain.progress.logs import MAX_TAIL_BYTES

TRAINJOB = {"status": {"trainerStatus": {"progressPercentage": 45, "lastUpdatedTime": "2026-06-12T03:00:00Z"}}}


def _summary(*pods: tuple[str, str, int | None, str]) -> object:
    steps = [
        SimpleNamespace(name="node", ancestor="trainer"),
        SimpleNamespace(name="init", ancestor="dataset-initializer"),
    ]
    return SimpleNamespace(
        namespace="default",
        steps=steps,
        pods=[SimpleNamespace(name=n, step=s, rank=r, phase=ph) for n, s, r, ph in pods],
    )


def test_the_status_wins_and_no_log_is_read() -> None:
    found = job_progress(None, TRAINJOB, _summary())
    assert found is not None and found.progress_percentage == 45 and found.source == "status"
    assert status_progress({"status": {}}) is None and status_progress(None) is None


def test_rank_zero_is_the_trainer_steps_first_pod_that_ran() -> None:
    summary = _summary(
        ("i-0", "init", 0, "Succeeded"),
        ("n-1", "node", 1, "Running"),
        ("n-0-old", "node", 0, "Pending"),
        ("n-0", "node", 0, "Running"),
    )
    assert rank_zero(summary).name == "n-0"  # type: ignore[attr-defined]
    assert rank_zero(_summary(("n-0", "node", 0, "Pending"))) is None


@pytest.fixture
def double() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as srv:
        yield srv


def test_a_bar_redrawn_without_newlines_is_read_at_its_end(double: ApiServerDouble, tmp_path: object) -> None:
    redraws = "".join(f"\r{p:3d}%|#         | {p}/100 [00:01<00:09, 9.9it/s]" for p in range(1, 100)) * 40
    double.add_pod("n-0", containers=["node"])
    double.append_log("n-0", redraws + "\r 77%|#######7  | 77/100 [00:07<00:02, 9.9it/s]")
    path = double.write_kubeconfig(tmp_path / "kubeconfig")  # type: ignore[operator]
    found = log_progress(connect(ConnectionOptions(kubeconfig=str(path))), "default", "n-0")
    assert len(redraws) > 2 * MAX_TAIL_BYTES and found is not None and found.progress_percentage == 77


def test_the_log_tail_is_read_bounded(double: ApiServerDouble, tmp_path: object) -> None:
    double.add_pod("n-0", containers=["node"])
    double.append_log("n-0", "x" * (3 * MAX_TAIL_BYTES) + "\n 45%|####5     | 45/100 [00:04<00:05, 9.9it/s]\n")
    path = double.write_kubeconfig(tmp_path / "kubeconfig")  # type: ignore[operator]
    cluster = connect(ConnectionOptions(kubeconfig=str(path)))
    found = log_progress(cluster, "default", "n-0")
    assert found is not None and found.progress_percentage == 45
    (request,) = double.requests_for(resource="pods/log")
    assert request.query["limitBytes"] == [str(LOG_READ_BYTES)] and request.query["tailLines"] == [str(LOG_LINES)]
    assert request.query["container"] == ["node"]
    assert log_progress(cluster, "default", "missing") is None
