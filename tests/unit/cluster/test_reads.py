"""`ktrain.cluster.reads`: the reads the job commands make, against the API-server double: a job's
TrainJob and JobSet, its pods in pages, the namespace's warnings, a container's log and its tail,
and log streams split into lines."""

from __future__ import annotations

from typing import Any

import pytest
from cli.jobs_double import pod, seed

from ktrain.cluster import reads
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.cluster.names import InvalidNameError
from ktrain.errors import KtrainError, NotFoundError
from ktrain.jobs.logs import LogOptions


@pytest.fixture
def cluster(kube: Any) -> Any:
    return connect(ConnectionOptions(kubeconfig=kube.kubeconfig))


def test_find_job_reads_the_trainjob_and_the_jobset_of_that_name(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", namespace="team-a")
    trainjob, jobset = reads.find_job(cluster, "demo")
    assert trainjob is None and jobset is not None and jobset["metadata"]["name"] == "demo"
    assert [(r.verb, r.resource, r.namespace, r.name) for r in kube.srv.requests] == [
        ("get", "trainjobs.trainer.kubeflow.org", "team-a", "demo"),
        ("get", "jobsets.jobset.x-k8s.io", "team-a", "demo"),
    ]


def test_a_job_that_is_not_there_is_not_found_with_where_to_look(kube: Any, cluster: Any) -> None:
    with pytest.raises(NotFoundError) as err:
        reads.find_job(cluster, "ghost")
    assert err.value.message == 'job "ghost" not found in namespace team-a (no TrainJob or JobSet of that name)'
    assert "-n NAMESPACE or -A" in (err.value.hint or "")


def test_a_bad_job_name_sends_nothing(kube: Any, cluster: Any) -> None:
    with pytest.raises(InvalidNameError):
        reads.find_job(cluster, "../x")
    assert kube.srv.requests == []


def test_get_custom_is_none_for_a_missing_object(kube: Any, cluster: Any) -> None:
    assert reads.get_custom(cluster, reads.TRAINJOB, "team-a", "ghost") is None


def test_pods_are_read_in_pages_and_only_the_jobs(kube: Any, cluster: Any) -> None:
    jobset = seed(kube.srv, "demo", namespace="team-a", nodes=5)
    for rank in range(5):
        pod(kube.srv, jobset, rank=rank)
    pod(kube.srv, seed(kube.srv, "other", namespace="team-a", nodes=1))
    kube.srv.clear_requests()
    document = reads.list_pods_document(cluster, "team-a", "jobset.sigs.k8s.io/jobset-name=demo", chunk=2)
    assert sorted(p["metadata"]["name"] for p in document["items"]) == [f"demo-node-0-{r}-x1" for r in range(5)]
    assert document["metadata"].get("resourceVersion")  # to watch from
    pages = kube.srv.requests_for("list", "pods")
    assert len(pages) == 3 and all(r.query.get("limit") == ["2"] for r in pages)
    assert "continue" not in pages[0].query and all(r.query.get("continue") for r in pages[1:])
    assert reads.job_pods(cluster, "other") and len(reads.job_pods(cluster, "other")) == 1


def test_warning_events_are_asked_of_the_server_by_type(kube: Any, cluster: Any) -> None:
    kube.srv.add_event(("Pod", "p"), "FailedScheduling", "0/3 nodes", type="Warning", namespace="team-a")
    kube.srv.add_event(("Pod", "p"), "Scheduled", "assigned", namespace="team-a")
    assert [e["reason"] for e in reads.list_warning_events(cluster, "team-a")] == ["FailedScheduling"]
    assert kube.srv.requests_for("list", "events")[-1].query.get("fieldSelector") == ["type=Warning"]
    assert sorted(e["reason"] for e in reads.list_events(cluster, "team-a")) == ["FailedScheduling", "Scheduled"]


def test_log_tail_is_timestamped_lines_and_nothing_before_the_container_starts(kube: Any, cluster: Any) -> None:
    jobset = seed(kube.srv, "demo", namespace="team-a", nodes=2)
    running = pod(kube.srv, jobset, rank=0)["metadata"]["name"]
    pending = pod(kube.srv, jobset, rank=1, phase="Pending")["metadata"]["name"]
    kube.srv.append_log(running, "step 1\nstep 2\n", namespace="team-a")
    lines = reads.log_tail(cluster, "team-a", running, "node", previous=False)
    assert [text for _, text in lines] == ["step 1", "step 2"]
    assert all(stamp[:4].isdigit() and "T" in stamp for stamp, _ in lines)
    (request,) = kube.srv.requests_for("get", "pods/log")
    assert request.query.get("limitBytes") == [str(reads.LOG_TAIL_BYTES)] and request.query.get("tailLines")
    assert reads.log_tail(cluster, "team-a", pending, "node", previous=False) == []


def test_a_previous_log_of_a_container_that_never_restarted_says_so(kube: Any, cluster: Any) -> None:
    running = pod(kube.srv, seed(kube.srv, "demo", namespace="team-a", nodes=1))
    with pytest.raises(KtrainError, match="the server says") as err:
        reads.read_log(cluster, running, "node", follow=False, options=LogOptions(previous=True), first=True)
    assert "this one has not restarted" in (err.value.hint or "")


class Chunks:
    """A response whose body arrives in the given pieces."""

    def __init__(self, *pieces: bytes) -> None:
        self.pieces = pieces

    def chunks(self, size: int) -> Any:
        return iter(self.pieces)


def test_a_stream_is_split_into_lines_across_chunks_and_long_lines_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    assert list(reads.iter_lines(Chunks(b"a\nb", b"c\n", b"d"))) == ["a", "bc", "d"]
    assert list(reads.iter_lines(Chunks(b"\xff\n"))) == ["\ufffd"]  # not UTF-8: replaced, never an error
    monkeypatch.setattr(reads, "MAX_LOG_LINE", 4)
    assert list(reads.iter_lines(Chunks(b"0123456789", b"\n"))) == ["0123", "4567", "89"]


def test_a_wait_shorter_than_a_second_only_sleeps(kube: Any, cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "POLL_INTERVAL", 0.01)
    reads.await_change(cluster, reads.JOBSET, "team-a", "1", None, name="demo", seconds=0.5)
    reads.await_change(cluster, reads.JOBSET, "team-a", "", None, name="demo", seconds=5)  # no version to watch from
    assert kube.srv.requests == []
