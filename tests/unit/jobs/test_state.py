"""The pure job-state rules of ENGINE.md §10, on hand-made API objects."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ktrain.jobs import state as status

JSON = dict[str, Any]


def rjob(
    name: str, *, ancestor: str | None = None, parallelism: int = 1, replicas: int = 1, container: str = "node"
) -> JSON:
    template: JSON = {
        "spec": {"parallelism": parallelism, "template": {"spec": {"containers": [{"name": container, "image": "x"}]}}}
    }
    if ancestor:
        template["metadata"] = {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": ancestor}}
    return {"name": name, "replicas": replicas, "template": template}


def jobset(
    *rjobs: JSON,
    name: str = "job",
    conditions: list[JSON] | None = None,
    suspend: bool = False,
    owner: str | None = None,
) -> JSON:
    meta: JSON = {"name": name, "namespace": "default", "creationTimestamp": "2025-01-01T00:00:00Z"}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": owner, "uid": "u"}
        ]
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": meta,
        "spec": {"replicatedJobs": list(rjobs), "suspend": suspend},
        "status": {"conditions": conditions or []},
    }


def torch(nodes: int = 2, **kwargs: Any) -> JSON:
    return jobset(rjob("node", ancestor="trainer", parallelism=nodes), **kwargs)


def pod(step: str, rank: int, phase: str = "Running", **status_fields: Any) -> JSON:
    return {
        "metadata": {
            "name": f"job-{step}-0-{rank}-abc",
            "labels": {"jobset.sigs.k8s.io/replicatedjob-name": step},
            "annotations": {"batch.kubernetes.io/job-completion-index": str(rank)},
        },
        "spec": {"containers": [{"name": "node"}]},
        "status": {"phase": phase, **status_fields},
    }


def cond(kind: str, value: str = "True", reason: str = "R", message: str = "M") -> JSON:
    return {"type": kind, "status": value, "reason": reason, "message": message}


def test_created_until_every_trainer_pod_runs_or_succeeded() -> None:
    js = torch(nodes=3)
    assert status.derive_state(None, js, [])[0] == status.CREATED
    assert status.derive_state(None, js, [pod("node", 0), pod("node", 1)])[0] == status.CREATED
    three = [pod("node", 0), pod("node", 1, "Succeeded"), pod("node", 2)]
    assert status.derive_state(None, js, three)[0] == status.RUNNING


def test_initializer_pods_do_not_count_as_trainer_pods() -> None:
    js = jobset(rjob("dataset-initializer", ancestor="dataset-initializer"), rjob("node", ancestor="trainer"))
    assert status.derive_state(None, js, [pod("dataset-initializer", 0)])[0] == status.CREATED


def test_mpi_counts_launcher_and_node_pods() -> None:
    js = jobset(rjob("launcher", ancestor="trainer"), rjob("node", parallelism=2))
    assert status.expected_trainer_pods(js) == 3
    assert status.derive_state(None, js, [pod("node", 0), pod("node", 1)])[0] == status.CREATED
    assert status.derive_state(None, js, [pod("launcher", 0), pod("node", 0), pod("node", 1)])[0] == status.RUNNING


@pytest.mark.parametrize("bad", ["2", "abc", None, True, -3, 1.5, {"a": 1}, [2]])
def test_a_count_no_api_server_would_store_counts_as_the_default(bad: Any) -> None:
    """Found by fuzzing the Python API's event selection: a broken server's JobSet whose replicas or
    parallelism is not a count crashed `job get`; it counts as the default (1), as when absent."""
    js = jobset(rjob("node", ancestor="trainer"))
    js["spec"]["replicatedJobs"][0]["replicas"] = bad
    js["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] = bad
    assert status.expected_trainer_pods(js) == 1
    assert status.derive_state(None, js, [pod("node", 0)])[0] == status.RUNNING


def test_terminal_conditions_win_and_carry_reason_and_message() -> None:
    complete = torch(conditions=[cond("Completed", reason="AllJobsCompleted", message="jobset completed successfully")])
    failed = torch(conditions=[cond("Failed", reason="FailedJobs", message="boom")])
    false_failed = torch(conditions=[cond("Failed", "False")])
    assert status.derive_state(None, complete, []) == (
        status.COMPLETE,
        "AllJobsCompleted",
        "jobset completed successfully",
    )
    assert status.derive_state(None, failed, []) == (status.FAILED, "FailedJobs", "boom")
    assert status.derive_state(None, false_failed, [])[0] == status.CREATED


def test_suspended_from_spec_or_condition() -> None:
    assert status.derive_state(None, torch(suspend=True), [])[0] == status.SUSPENDED
    assert status.derive_state(None, torch(conditions=[cond("Suspended")]), [])[0] == status.SUSPENDED
    resumed = torch(conditions=[cond("Suspended", "False", reason="Resumed")])
    assert status.derive_state(None, resumed, [])[0] == status.CREATED


def test_trainjob_conditions_are_authoritative_over_its_jobset() -> None:
    trainjob = {
        "kind": "TrainJob",
        "metadata": {"name": "job"},
        "spec": {"trainer": {"numNodes": 2}},
        "status": {"conditions": [cond("Suspended", "False"), cond("Complete", reason="AllJobsCompleted")]},
    }
    stale = torch(conditions=[cond("Failed")])
    assert status.derive_state(trainjob, stale, [])[0] == status.COMPLETE
    summary = status.summarize(trainjob, stale, [])
    assert (summary.kind, summary.nodes, summary.resource_name) == ("TrainJob", 2, "trainjob.trainer.kubeflow.org/job")


def test_trainjob_without_jobset_uses_num_nodes_for_running() -> None:
    trainjob = {"kind": "TrainJob", "metadata": {"name": "job"}, "spec": {"trainer": {"numNodes": 2}}}
    assert status.derive_state(trainjob, None, [pod("node", 0), pod("node", 1)])[0] == status.RUNNING


def test_nodes_counts_the_launcher_only_when_it_runs_the_node_container() -> None:
    as_node = jobset(rjob("launcher", ancestor="trainer", container="node"), rjob("node", parallelism=3))
    separate = jobset(rjob("launcher", ancestor="trainer", container="launcher"), rjob("node", parallelism=3))
    assert status.jobset_nodes(as_node) == 4
    assert status.jobset_nodes(separate) == 3
    assert status.jobset_nodes(jobset(rjob("web"))) is None


def test_trainer_step_is_the_rjob_labelled_trainer() -> None:
    assert status.trainer_step(torch()) == "node"
    assert status.trainer_step(jobset(rjob("launcher", ancestor="trainer"), rjob("node"))) == "launcher"
    assert status.trainer_step(None) == "node"


def test_pair_jobs_shows_an_owned_jobset_once_and_drops_foreign_jobsets() -> None:
    trainjob = {"kind": "TrainJob", "metadata": {"name": "b", "namespace": "default"}}
    owned = torch(name="b", owner="b")
    plain = torch(name="a")
    foreign = jobset(rjob("web"), name="c")
    pairs = status.pair_jobs([trainjob], [owned, plain, foreign])
    assert [(tj and tj["metadata"]["name"], js and js["metadata"]["name"]) for tj, js in pairs] == [
        (None, "a"),
        ("b", "b"),
    ]


def test_pod_reasons_explain_what_blocks_a_pod() -> None:
    unschedulable = pod(
        "node",
        0,
        "Pending",
        conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}],
    )
    pulling = pod(
        "node",
        1,
        "Pending",
        containerStatuses=[{"name": "node", "state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}}],
    )
    creating = pod(
        "node",
        2,
        "Pending",
        containerStatuses=[{"name": "node", "state": {"waiting": {"reason": "ContainerCreating"}}}],
    )
    oom = pod(
        "node",
        3,
        "Failed",
        containerStatuses=[
            {"name": "node", "restartCount": 2, "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
        ],
    )
    assert status.pod_reason(unschedulable) == ("Unschedulable", "0/3 nodes")
    assert status.pod_reason(pulling) == ("ErrImagePull", "not found")
    assert status.pod_reason(creating) == ("ContainerCreating", None)
    assert status.pod_reason(oom) == ("OOMKilled", "container node exited with code 137")
    assert status.summarize_pod(oom).restarts == 2
    assert status.pod_reason(pod("node", 4)) == (None, None)


def test_pods_sort_by_step_then_rank() -> None:
    pods = [
        status.summarize_pod(p)
        for p in (pod("node", 1), pod("node", 0), pod("launcher", 0), pod("dataset-initializer", 0))
    ]
    assert [(p.step, p.rank) for p in status.sort_pods(pods)] == [
        ("dataset-initializer", 0),
        ("launcher", 0),
        ("node", 0),
        ("node", 1),
    ]


def test_related_warnings_keep_the_jobs_own_objects_newest_last() -> None:
    def event(kind: str, name: str, when: str, type_: str = "Warning") -> JSON:
        return {"type": type_, "involvedObject": {"kind": kind, "name": name}, "lastTimestamp": when}

    events = [
        event("Pod", "job-node-0-0-abc", "2025-01-01T00:00:02Z"),
        event("JobSet", "job", "2025-01-01T00:00:01Z"),
        event("Pod", "jobless-node-0-0-abc", "2025-01-01T00:00:03Z"),  # another job
        event("Pod", "job-node-0-1-abc", "2025-01-01T00:00:04Z", "Normal"),
    ]
    kept = status.related_warnings(events, "job")
    assert [e["involvedObject"]["name"] for e in kept] == ["job", "job-node-0-0-abc"]
    assert len(status.related_warnings(events * 20, "job", limit=5)) == 5


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (59, "59s"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h"),
        (86399, "23h"),
        (86400, "1d"),
        (86400 * 400, "1y"),
        (-0.5, "0s"),
        (-5, "<invalid>"),
    ],
)
def test_ages_print_like_kubectl(seconds: float, text: str) -> None:
    assert status.short_duration(seconds) == text


def test_age_of_a_timestamp() -> None:
    now = dt.datetime(2025, 1, 1, 2, 0, tzinfo=dt.timezone.utc)
    assert status.age("2025-01-01T00:00:00Z", now) == "2h"
    assert status.age(None, now) == "<unknown>"


@pytest.mark.parametrize(
    ("state", "target", "outcome"),
    [
        (status.COMPLETE, "complete", True),
        (status.FAILED, "complete", False),
        (status.RUNNING, "complete", None),
        (status.FAILED, "failed", True),
        (status.COMPLETE, "failed", False),
        (status.RUNNING, "running", True),
        (status.COMPLETE, "running", True),
        (status.FAILED, "running", False),
        (status.SUSPENDED, "running", None),
        (status.CREATED, "running", None),
    ],
)
def test_wait_outcome(state: str, target: str, outcome: bool | None) -> None:
    summary = status.JobSummary(
        kind="JobSet", name="j", namespace="d", state=state, runtime=None, nodes=1, created=None
    )
    assert status.wait_outcome(summary, target) is outcome
