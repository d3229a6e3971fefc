"""Jobs on the API-server double (fixtures `srv`, `kc`, `fast_polling`), seeded the way they reach
a cluster: bundled runtimes rendered by ktrain, the objects stored, then status, pods, logs and
events set as the JobSet controller and kubelet would (the cluster commands' CLI tests,
tests/cli/test_job_*.py, and the Python API's)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble

from ktrain import constants as c
from ktrain.cli.common import registry_from
from ktrain.cluster import reads
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

JSON = dict[str, Any]


COMPLETED = {
    "type": "Completed",
    "status": "True",
    "reason": "AllJobsCompleted",
    "message": "jobset completed successfully",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}


FAILED = {
    "type": "Failed",
    "status": "True",
    "reason": "FailedJobs",
    "message": "jobset failed due to one or more job failures",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}


def seed(
    srv: ApiServerDouble,
    name: str = "demo",
    runtime: str = "torch-distributed",
    nodes: int = 2,
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    suspend: bool | None = None,
) -> JSON:
    """Render a bundled runtime and store its objects; returns the stored JobSet."""
    overrides = JobOverrides(
        runtime=runtime, name=name, nodes=nodes, namespace=namespace, labels=dict(labels or {}), suspend=suspend
    )
    outcome = render_request(RenderRequest(overrides=overrides), registry_from(None, None))
    jobset = None
    for obj in outcome.result.objects:
        stored = srv.put_object(obj)
        if obj["kind"] == "JobSet":
            jobset = stored
    assert jobset is not None
    return jobset


def pod(
    srv: ApiServerDouble,
    jobset: JSON,
    rjob: str = "node",
    rank: int = 0,
    phase: str = "Running",
    suffix: str = "x1",
    **kwargs: Any,
) -> JSON:
    """A pod as the Job controller names and labels it."""
    name = jobset["metadata"]["name"]
    namespace = jobset["metadata"].get("namespace", "default")
    return srv.add_pod(
        f"{name}-{rjob}-0-{rank}-{suffix}",
        namespace,
        labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: rjob, c.JOBSET_JOB_INDEX_LABEL: "0"},
        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
        phase=phase,
        containers=kwargs.pop("containers", ["node"]),
        owner=jobset,
        **kwargs,
    )


def set_pod_status(srv: ApiServerDouble, name: str, change: Callable[[JSON], None]) -> JSON:
    with srv.cluster.lock:
        obj = srv.get_object("pods", name)
        assert obj is not None
        change(obj["status"])
        return srv.put_object(obj)


def unschedulable(status: JSON) -> None:
    status["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        }
    ]


def image_pull_backoff(status: JSON) -> None:
    status["containerStatuses"][0]["state"] = {
        "waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "trainer:missing"'}
    }


def start(status: JSON) -> None:
    status["phase"] = "Running"
    status["containerStatuses"][0]["state"] = {"running": {"startedAt": "2025-01-01T00:00:00Z"}}


def crash(status: JSON) -> None:
    """The container exits 1 and the kubelet will restart it (restartPolicy OnFailure)."""
    status["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 1, "reason": "Error"}}


def restart(srv: ApiServerDouble, name: str, container: str = "node") -> None:
    """The kubelet restarts the container: its log becomes the previous one, a new run starts."""
    with srv.cluster.lock:
        logs = srv.cluster.logs
        logs[("default", name, container, True)] = logs.pop(("default", name, container, False), [])

        def rerun(status: JSON) -> None:
            cs = status["containerStatuses"][0]
            cs["lastState"] = {"terminated": cs["state"].get("terminated", {"exitCode": 1})}
            cs["state"] = {"running": {"startedAt": "2025-01-01T00:01:00Z"}}
            cs["restartCount"] = int(cs.get("restartCount") or 0) + 1

        set_pod_status(srv, name, rerun)


def later(*steps: Callable[[], Any], pause: float = 0.3, srv: ApiServerDouble | None = None) -> threading.Thread:
    """Run `steps` in the background, `pause` seconds apart (the cluster moving on); with `srv`,
    only once the command has looked at the job's pods (so "later" means after it started)."""

    def run() -> None:
        deadline = time.monotonic() + 10
        while srv is not None and not srv.requests_for(verb="list", resource="pods") and time.monotonic() < deadline:
            time.sleep(0.01)
        for step in steps:
            time.sleep(pause)
            step()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def owned_by_trainjob(srv: ApiServerDouble, name: str, runtime: str, nodes: int, conditions: list[JSON]) -> JSON:
    trainjob = srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"runtimeRef": {"name": runtime}, "trainer": {"numNodes": nodes}},
        }
    )
    srv.set_status("trainjobs", name, {"conditions": conditions})
    jobset = seed(srv, name, nodes=nodes)
    jobset["metadata"]["ownerReferences"] = [
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "name": name,
            "uid": trainjob["metadata"]["uid"],
            "controller": True,
        }
    ]
    return srv.put_object(jobset)


# --- fixtures (imported by the tests that use them) ---------------------------------------------


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "POLL_INTERVAL", 0.05)
