"""TrainJobs on the API-server double as the Trainer controller leaves them, with a
`status.trainerStatus` applied as its status server applies it (tests/cli/test_job_progress.py,
tests/cli/test_job_watch.py)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from apiserver import ApiServerDouble

from ktrain import constants as c
from ktrain.cli.common import registry_from
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

NOW = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
JSON = dict[str, Any]
TRAINER_STATUS = {
    "progressPercentage": 45,
    "estimatedRemainingSeconds": 3600,
    "metrics": [{"name": "loss", "value": "0.2347"}, {"name": "accuracy", "value": "0.9876"}],
    "lastUpdatedTime": NOW,
}
COMPLETED = {"type": "Complete", "status": "True", "reason": "JobSetCompleted", "message": "done"}


def running_trainjob(srv: ApiServerDouble, name: str = "demo", nodes: int = 2) -> JSON:
    """A TrainJob, the JobSet its controller made and its trainer pods, all running."""
    trainjob = srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": nodes}},
        }
    )
    overrides = JobOverrides(runtime="torch-distributed", name=name, nodes=nodes)
    for obj in render_request(RenderRequest(overrides=overrides), registry_from(None, None)).result.objects:
        if obj["kind"] == "JobSet":
            obj["metadata"]["ownerReferences"] = [
                {"apiVersion": c.TRAINER_API_VERSION, "kind": "TrainJob", "name": name}
                | {"uid": trainjob["metadata"]["uid"], "controller": True}
            ]
        jobset = srv.put_object(obj)
    for rank in range(nodes):
        srv.add_pod(
            f"{name}-node-0-{rank}-x{rank}",
            labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
            annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
            phase="Running",
            containers=["node"],
            owner=jobset,
        )
    return trainjob


def apply_trainer_status(srv: ApiServerDouble, name: str, trainer_status: JSON) -> JSON:
    """What the controller's status server does: a server-side apply of status.trainerStatus to the
    status subresource, field manager trainer-status, forced."""
    api = srv.api_client()
    try:
        body = {"apiVersion": c.TRAINER_API_VERSION, "kind": "TrainJob", "metadata": {"name": name}}
        body["status"] = {"trainerStatus": trainer_status}
        answer = api.call_api(
            f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/{name}/status",
            "PATCH",
            query_params=[("fieldManager", "trainer-status"), ("force", "true")],
            header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
            body=body,
            _preload_content=False,
        )
        return json.loads(answer[0].data)  # type: ignore[no-any-return]
    finally:
        api.close()


def complete_later(srv: ApiServerDouble, name: str, after: float = 1.5) -> threading.Thread:
    def finish() -> None:
        time.sleep(after)
        apply_trainer_status(srv, name, {**TRAINER_STATUS, "progressPercentage": 100, "estimatedRemainingSeconds": 0})
        time.sleep(0.5)
        srv.set_status("trainjobs", name, {"conditions": [COMPLETED]}, group="trainer.kubeflow.org")

    thread = threading.Thread(target=finish, daemon=True)
    thread.start()
    return thread
