"""`ktrain.service.job_logs.stream_logs`: a job's logs from the double, as `job logs` prints them:
rank 0's by default, every pod's with --all, a pod that has not started named, and followed until the
job ends."""

from __future__ import annotations

from typing import Any

import pytest
from cli.jobs_double import COMPLETED, later, pod, seed

from ktrain.errors import KtrainError
from ktrain.jobs.logs import LogOptions, LogSelection
from ktrain.service.job_logs import stream_logs


def two_ranks(kube: Any, *, second: str = "Running") -> list[str]:
    """A two-node job whose pods printed a line each; returns the pods' names."""
    jobset = seed(kube.srv, "demo", namespace="team-a", nodes=2)
    names = []
    for rank, phase in ((0, "Running"), (1, second)):
        name = pod(kube.srv, jobset, rank=rank, phase=phase)["metadata"]["name"]
        if phase == "Running":
            kube.srv.append_log(name, f"rank {rank} step 1\n", namespace="team-a")
        names.append(name)
    kube.srv.clear_requests()
    return names


def logs(cluster: Any, selection: LogSelection | None = None, options: LogOptions | None = None) -> Any:
    lines: list[tuple[str, str]] = []
    notices: list[str] = []
    stream_logs(
        cluster,
        "demo",
        selection or LogSelection(),
        options or LogOptions(),
        emit=lambda pod, line: lines.append((pod.name, line)),
        notice=notices.append,
        poll=0.05,
    )
    return lines, notices


def test_rank_0s_log_by_default_and_only_its_log_is_read(kube: Any, cluster: Any) -> None:
    names = two_ranks(kube)
    assert logs(cluster) == ([(names[0], "rank 0 step 1")], [])
    (request,) = kube.srv.requests_for("get", "pods/log")
    assert request.name == names[0] and request.query.get("container") == ["node"]


def test_all_pods_logs_each_with_its_pod(kube: Any, cluster: Any) -> None:
    names = two_ranks(kube)
    lines, _ = logs(cluster, LogSelection(all_pods=True))
    assert sorted(lines) == [(names[0], "rank 0 step 1"), (names[1], "rank 1 step 1")]


def test_one_rank_by_its_number(kube: Any, cluster: Any) -> None:
    names = two_ranks(kube)
    assert logs(cluster, LogSelection(rank=1))[0] == [(names[1], "rank 1 step 1")]


def test_tail_goes_to_the_server(kube: Any, cluster: Any) -> None:
    two_ranks(kube)
    logs(cluster, options=LogOptions(tail=5))
    (request,) = kube.srv.requests_for("get", "pods/log")
    assert request.query.get("tailLines") == ["5"]


def test_a_pod_that_has_not_started_is_an_error_alone_and_a_notice_among_all(kube: Any, cluster: Any) -> None:
    names = two_ranks(kube, second="Pending")
    with pytest.raises(KtrainError, match="it has no logs yet") as err:
        logs(cluster, LogSelection(rank=1))
    assert "ktrain job logs demo -f" in (err.value.hint or "")
    lines, notices = logs(cluster, LogSelection(all_pods=True))
    assert lines == [(names[0], "rank 0 step 1")]
    assert len(notices) == 1 and notices[0].endswith("(no logs yet)") and names[1] in notices[0]


def test_follow_prints_what_comes_and_ends_with_the_job(kube: Any, cluster: Any) -> None:
    names = two_ranks(kube)
    thread = later(
        lambda: kube.srv.append_log(names[0], "rank 0 step 2\n", namespace="team-a"),
        lambda: kube.srv.set_status("jobsets", "demo", {"conditions": [COMPLETED]}, namespace="team-a"),
        pause=0.4,
    )
    lines, _ = logs(cluster, options=LogOptions(follow=True))
    thread.join()
    assert [line for name, line in lines if name == names[0]] == ["rank 0 step 1", "rank 0 step 2"]
