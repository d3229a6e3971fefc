"""`ktrain.service.job_watch`: one look costs two GETs and one list of the job's pods (and a log read
only when the TrainJob reports no progress); the verdict is `job why`'s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from progress_jobs import TRAINER_STATUS, apply_trainer_status, running_trainjob

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.service.job_watch import look, verdict


@pytest.fixture
def double(tmp_path: Path) -> Iterator[tuple[ApiServerDouble, Any]]:
    with ApiServerDouble() as srv:
        yield srv, connect(ConnectionOptions(kubeconfig=str(srv.write_kubeconfig(tmp_path / "kubeconfig"))))


def test_a_look_at_a_reporting_job_is_two_gets_and_one_list(double: tuple[ApiServerDouble, Any]) -> None:
    srv, cluster = double
    running_trainjob(srv, nodes=3)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    srv.clear_requests()
    seen = look(cluster, "demo", "default")
    assert seen.summary.state == "Running" and len(seen.pods) == 3
    assert seen.progress is not None and seen.progress.progress_percentage == 45
    assert sorted(r.verb for r in srv.requests) == ["get", "get", "list"]


def test_a_job_without_status_costs_one_log_read_more(double: tuple[ApiServerDouble, Any]) -> None:
    srv, cluster = double
    running_trainjob(srv, nodes=1)
    srv.append_log("demo-node-0-0-x0", "KTRAIN_PROGRESS percent=12 loss=2.5\n")
    srv.clear_requests()
    seen = look(cluster, "demo", "default")
    assert seen.progress is not None and seen.progress.progress_percentage == 12
    assert seen.progress.source == "log (ktrain)"
    assert [r.resource for r in srv.requests if r.verb == "get"].count("pods/log") == 1


def test_the_verdict_of_a_job_that_does_not_run(double: tuple[ApiServerDouble, Any]) -> None:
    srv, cluster = double
    running_trainjob(srv, nodes=1)
    srv.delete_object("pods", "demo-node-0-0-x0")
    seen = look(cluster, "demo", "default")
    assert seen.summary.state == "Created"
    found = verdict(cluster, "demo", "default", seen)
    assert found is not None and found[0] and found[1]
