"""`ktrain.service.job_why.why_job`: the job read as deep as its state requires, and the verdict.

Each case asserts the verdict and the requests it cost: a job is read only as far as the diagnosis
asks (a suspended job: its objects and pods; a running one: rank 0's log; a refused pod: the nodes),
and a read RBAC refuses is listed in `unread` and decided without."""

from __future__ import annotations

from typing import Any

import pytest
from cli.jobs_double import pod, seed, unschedulable

from ktrain.errors import ClusterError, NotFoundError
from ktrain.jobs.why.facts import RUNNING, UNKNOWN
from ktrain.jobs.why.queues import SUSPENDED
from ktrain.jobs.why.scheduling import INSUFFICIENT
from ktrain.service.job_why import why_job

BASE = [("get", "trainjobs.trainer.kubeflow.org"), ("get", "jobsets.jobset.x-k8s.io"), ("list", "pods")]


def reads(srv: Any) -> list[tuple[str, str]]:
    return [(r.verb, r.resource) for r in srv.requests]


def pending_pod(srv: Any, name: str) -> None:
    """A job whose one pod the scheduler refused for its GPUs."""
    jobset = seed(srv, name, namespace="team-a", nodes=1)
    refused = pod(srv, jobset, phase="Pending")
    unschedulable(refused["status"])
    srv.put_object(refused)
    srv.clear_requests()


def test_a_suspended_job_costs_its_objects_and_pods_only(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", namespace="team-a", suspend=True)
    kube.srv.clear_requests()
    facts, verdict = why_job(cluster, "demo")
    assert (verdict.code, verdict.unread) == (SUSPENDED, [])
    assert verdict.message.startswith("job demo is suspended (spec.suspend: true)")
    assert facts.jobset is not None and facts.trainjob is None and facts.pods == []
    assert reads(kube.srv) == BASE


def test_a_running_job_reads_rank_0s_log(kube: Any, cluster: Any) -> None:
    running = pod(kube.srv, seed(kube.srv, "demo", namespace="team-a", nodes=1))
    kube.srv.append_log(running["metadata"]["name"], "epoch 1 loss 0.5\n", namespace="team-a")
    kube.srv.clear_requests()
    _, verdict = why_job(cluster, "demo")
    assert (verdict.code, verdict.message) == (RUNNING, "job demo is running (1 of 1 trainer pods)")
    assert reads(kube.srv) == [*BASE, ("get", "pods/log")]
    (log,) = kube.srv.requests_for("get", "pods/log")
    assert log.name == running["metadata"]["name"]


def test_a_pod_the_scheduler_refused_reads_the_nodes(kube: Any, cluster: Any) -> None:
    pending_pod(kube.srv, "demo")
    _, verdict = why_job(cluster, "demo")
    assert verdict.code == INSUFFICIENT
    assert verdict.message.startswith("3 of 3 nodes lack that much nvidia.com/gpu")
    assert reads(kube.srv) == [*BASE, ("list", "nodes")]


def test_nodes_it_may_not_list_are_named_in_unread_and_decided_without(kube: Any, cluster: Any) -> None:
    pending_pod(kube.srv, "demo")
    kube.srv.forbid("list", "nodes")
    _, verdict = why_job(cluster, "demo")
    assert verdict.code == INSUFFICIENT
    assert "the nodes could not be read" in verdict.message
    (unread,) = verdict.unread
    assert unread.startswith("nodes: forbidden: User ") and 'cannot list resource "nodes"' in unread


def test_pods_it_may_not_list_leave_the_verdict_unknown_and_say_so(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", namespace="team-a")
    kube.srv.forbid("list", "pods")
    _, verdict = why_job(cluster, "demo")
    assert verdict.code == UNKNOWN
    assert "its pods could not be read" in verdict.message
    assert [u.split(" is forbidden")[0] for u in verdict.unread] == ["pods"]


def test_a_job_it_may_read_neither_way_is_an_error_naming_rbac(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", namespace="team-a")
    kube.srv.forbid("get", "trainjobs")
    kube.srv.forbid("get", "jobsets")
    with pytest.raises(ClusterError, match=r'trainjobs\.trainer\.kubeflow\.org "demo" is forbidden') as err:
        why_job(cluster, "demo")
    assert "RBAC" in (err.value.hint or "")
    assert kube.srv.requests_for("list", "pods") == []


def test_a_job_that_is_not_there_is_not_found(kube: Any, cluster: Any) -> None:
    with pytest.raises(NotFoundError, match="ghost"):
        why_job(cluster, "ghost")
