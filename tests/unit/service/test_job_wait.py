"""`ktrain.service.job_wait.wait_for_job`: waiting on the double for a job to reach a state, watching
what the state depends on between two looks; its three ways to end (reached, cannot be reached,
timed out)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from cli.jobs_double import COMPLETED, FAILED, later, pod, seed

from ktrain.errors import ExitCode, JobFailedError, NotFoundError, UsageError, WaitTimeoutError
from ktrain.service.job_wait import wait_for_job


def test_a_job_already_complete_returns_at_the_first_look(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", namespace="team-a")
    kube.srv.set_status("jobsets", "demo", {"conditions": [COMPLETED]}, namespace="team-a")
    kube.srv.clear_requests()
    summary = wait_for_job(cluster, "demo", "complete", timeout=5)
    assert (summary.name, summary.state) == ("demo", "Complete")
    assert not [r for r in kube.srv.requests if r.query.get("watch") == ["true"]]  # nothing to wait for


def test_the_wait_wakes_when_the_job_changes_and_hears_each_state(kube: Any, cluster: Any) -> None:
    jobset = seed(kube.srv, "demo", namespace="team-a", nodes=1)
    pod(kube.srv, jobset)
    thread = later(
        lambda: kube.srv.set_status("jobsets", "demo", {"conditions": [COMPLETED]}, namespace="team-a"), pause=0.5
    )
    heard: list[str] = []
    started = time.monotonic()
    summary = wait_for_job(cluster, "demo", "complete", timeout=20, on_change=lambda s: heard.append(s.state))
    thread.join()
    assert summary.state == "Complete" and heard == ["Running", "Complete"]
    assert time.monotonic() - started < 10  # woken by the watch, not by a timeout
    assert [r for r in kube.srv.requests if r.query.get("watch") == ["true"] and r.resource.startswith("jobsets")]


def test_a_job_that_failed_will_not_complete(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", namespace="team-a")
    kube.srv.set_status("jobsets", "demo", {"conditions": [FAILED]}, namespace="team-a")
    with pytest.raises(JobFailedError, match="job demo is Failed, it will not become") as err:
        wait_for_job(cluster, "demo", "complete", timeout=5)
    assert err.value.exit_code == ExitCode.ERROR
    assert err.value.summary is not None and err.value.summary.state == "Failed"


def test_a_job_that_does_not_get_there_in_time_times_out_with_its_state(kube: Any, cluster: Any) -> None:
    pod(kube.srv, seed(kube.srv, "demo", namespace="team-a", nodes=1))
    started = time.monotonic()
    with pytest.raises(WaitTimeoutError, match=r"timed out after .* waiting for job demo .*\(it is Running") as err:
        wait_for_job(cluster, "demo", "complete", timeout=0.5)
    assert err.value.exit_code == ExitCode.TIMEOUT
    assert time.monotonic() - started < 5


def test_a_job_that_is_not_there_is_not_found(kube: Any, cluster: Any) -> None:
    with pytest.raises(NotFoundError, match="ghost"):
        wait_for_job(cluster, "ghost", "complete", timeout=1)


def test_an_unknown_target_is_refused_before_any_request(kube: Any, cluster: Any) -> None:
    with pytest.raises(UsageError, match="--for 'done': use one of"):
        wait_for_job(cluster, "demo", "done", timeout=1)
    assert kube.srv.requests == []
