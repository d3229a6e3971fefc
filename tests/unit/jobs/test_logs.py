"""`ktrain.jobs.logs`: which pods and container `job logs` reads (pure: pods as the API serves them),
the server's timestamped lines split, and a resumed stream's cursor."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.errors import KtrainError, NotFoundError, UsageError
from ktrain.jobs.logs import (
    DEFAULT_CONTAINER_ANNOTATION,
    Cursor,
    LogLine,
    LogSelection,
    default_step,
    describe_pod,
    has_started,
    no_pod_error,
    pick_container,
    select_pods,
)

from .why.objects import jobset, pod, running


def launcher_pod(rank: int = 0) -> dict[str, Any]:
    p = pod(rank)
    p["metadata"]["labels"][c.JOBSET_RJOB_NAME_LABEL] = "launcher"
    p["metadata"]["name"] = f"demo-launcher-0-{rank}-x"
    return p


def test_the_default_step_is_the_trainers_and_a_rank_means_a_node() -> None:
    js = jobset()
    assert default_step(js, LogSelection()) == "node"
    mpi = jobset()
    mpi["spec"]["replicatedJobs"] = [
        {"name": "launcher", "template": {"metadata": {"labels": {c.LABEL_ANCESTOR: c.ANCESTOR_TRAINER}}}},
        {"name": "node", "template": {}},
    ]
    assert default_step(mpi, LogSelection()) == "launcher"  # mpirun prints every rank's output there
    assert default_step(mpi, LogSelection(rank=1)) == "node"  # --node N is a node rank
    assert default_step(mpi, LogSelection(step="dataset-initializer")) == "dataset-initializer"
    assert default_step(None, LogSelection()) == "node"


def test_select_pods_picks_the_rank_of_the_step_or_every_pod() -> None:
    pods = [pod(1), launcher_pod(0), pod(0)]
    names = [p["metadata"]["name"] for p in select_pods(pods, LogSelection(), "node")]
    assert names == ["demo-node-0-0-x"]
    assert [p["metadata"]["name"] for p in select_pods(pods, LogSelection(rank=1), "node")] == ["demo-node-0-1-x"]
    assert [p["metadata"]["name"] for p in select_pods(pods, LogSelection(), "launcher")] == ["demo-launcher-0-0-x"]
    assert len(select_pods(pods, LogSelection(all_pods=True), "node")) == 3
    assert select_pods(pods, LogSelection(rank=5), "node") == []


def test_the_container_is_the_asked_one_else_kubectls_default_else_node_else_the_first() -> None:
    p = pod(0)
    p["spec"]["containers"] = [{"name": "sidecar"}, {"name": "node"}]
    p["spec"]["initContainers"] = [{"name": "fetch"}]
    assert pick_container(p, None) == "node"
    assert pick_container(p, "fetch") == "fetch"  # an init container may be asked for
    p["metadata"]["annotations"][DEFAULT_CONTAINER_ANNOTATION] = "sidecar"
    assert pick_container(p, None) == "sidecar"
    with pytest.raises(UsageError, match=r"pod demo-node-0-0-x has no container 'x' \(containers: sidecar, node\)"):
        pick_container(p, "x")
    q = pod(0)
    q["spec"]["containers"] = [{"name": "a"}, {"name": "b"}]
    assert pick_container(q, None) == "a"
    q["spec"]["containers"] = []
    with pytest.raises(KtrainError, match="has no containers"):
        pick_container(q, None)


def test_a_container_has_started_once_it_runs_or_has_run() -> None:
    assert not has_started(pod(0, statuses=running({"waiting": {"reason": "ContainerCreating"}})), "node")
    assert has_started(pod(0, statuses=running()), "node")
    assert has_started(pod(0, statuses=running({"terminated": {"exitCode": 0}})), "node")
    restarted = running({"waiting": {"reason": "CrashLoopBackOff"}}, last={"exitCode": 1})
    assert has_started(pod(0, statuses=restarted), "node")  # its previous run has a log
    assert not has_started(pod(0), "node")  # no status at all yet


def test_describe_pod_says_where_it_is_and_escapes_the_servers_words() -> None:
    p = pod(1, statuses=running({"waiting": {"reason": "ErrImagePull", "message": "bad\x1b[31m"}}))
    text = describe_pod(p)
    assert text.startswith("pod demo-node-0-1-x (node rank 1) is Pending: ErrImagePull - bad")
    assert "\x1b" not in text


def test_log_lines_split_the_servers_timestamp_only() -> None:
    line = LogLine("2026-06-01T12:00:00.123456789Z epoch 1 loss 0.5")
    assert (line.stamp, line.text) == ("2026-06-01T12:00:00.123456789Z", "epoch 1 loss 0.5")
    plain = LogLine("epoch 1 loss 0.5")
    assert (plain.stamp, plain.text) == ("", "epoch 1 loss 0.5")
    assert LogLine("2026 was a year").stamp == ""


def test_no_pod_says_whether_there_are_none_or_which_there_are() -> None:
    none = no_pod_error("demo", [], LogSelection(), "node", "Created")
    assert not isinstance(none, NotFoundError)
    assert str(none.message) == "job demo has no pods yet (state Created)"
    other = no_pod_error("demo", [pod(0), pod(1)], LogSelection(rank=4), "node", "Running")
    assert isinstance(other, NotFoundError)
    assert other.message == "job demo has no pod for step node rank 4 (pods: node 0, node 1)"
    assert other.hint == "pick one with --step and --node"


def test_a_resumed_stream_skips_exactly_the_lines_it_printed() -> None:
    cursor = Cursor()
    shown = [s for s in ["t1", "t2", "t2"] if cursor.fresh(s)]
    assert shown == ["t1", "t2", "t2"]
    cursor.reconnected()  # the server sends everything from t2 again (sinceTime has second precision)
    again = [s for s in ["t1", "t2", "t2", "t2", "t3"] if cursor.fresh(s)]
    assert again == ["t2", "t3"]  # older lines dropped, the two t2 lines shown already skipped
    assert cursor.fresh("")  # a line without a timestamp is always new
