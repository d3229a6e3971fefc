"""`ktrain.service.job_get`: the job, its pods, warnings, verdict and progress."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from progress_jobs import TRAINER_STATUS, apply_trainer_status, running_trainjob

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.jobs.views import details_document
from ktrain.service.job_get import get_job


@pytest.fixture
def double(tmp_path: Path) -> Iterator[tuple[ApiServerDouble, Any]]:
    with ApiServerDouble() as srv:
        yield srv, connect(ConnectionOptions(kubeconfig=str(srv.write_kubeconfig(tmp_path / "kubeconfig"))))


def test_the_details_carry_the_trainjobs_progress(double: tuple[ApiServerDouble, Any]) -> None:
    srv, cluster = double
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    details = get_job(cluster, "demo")
    assert details.progress is not None and details.progress.progress_percentage == 45
    assert details_document(details)["progress"]["metrics"][0] == {"name": "loss", "value": "0.2347"}


def test_without_logs_no_log_is_read(double: tuple[ApiServerDouble, Any]) -> None:
    srv, cluster = double
    running_trainjob(srv, nodes=1)
    srv.append_log("demo-node-0-0-x0", "KTRAIN_PROGRESS percent=12\n")
    srv.clear_requests()
    assert get_job(cluster, "demo", logs=False).progress is None
    assert not [r for r in srv.requests if r.resource == "pods/log"]
    assert get_job(cluster, "demo").progress is not None
