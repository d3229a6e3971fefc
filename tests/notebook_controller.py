"""The Trainer controller, JobSet, Job controllers and kubelet for notebooks, played on the API-server
double without running anything (tests/test_sdk_notebooks.py).

The upstream notebooks' training functions need GPUs, TPUs, datasets and models from the network;
what a notebook shows of a job is its status, steps, devices and logs. So, for every TrainJob in
the namespaces it watches, this controller renders the JobSet with ktrain's engine (as
tests/trainer_controller.py: what ktrain is held to produce, ENGINE.md and the conformance
cases), makes every pod the JobSet's replicated jobs would have (initializers, launcher, nodes),
with the containers' resources and env, Running, each container's log a fixed line; after `hold`
seconds (long enough for a `wait_for_job_status(status={"Running"})` polling every 2 s to see
it) the containers terminate with 0, the pods succeed and the TrainJob gets its Complete
condition. A TrainJob the engine cannot render gets the Failed condition, with the error.

`TrainJobWebhook` is the Trainer's TrainJob validating webhook (ENGINE.md §11.2), played by the
engine's validation: a create it refuses is answered as the API server answers a webhook's denial.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from ktrain import constants as c

JSON = dict[str, Any]
COMPLETE = {
    "type": "Complete",
    "status": "True",
    "reason": "JobsCompleted",
    "message": "jobs completed",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}


def _stored_runtime(srv: Any, trainjob: JSON) -> JSON | None:
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    namespace = (trainjob.get("metadata") or {}).get("namespace")
    if ref.get("kind", c.CLUSTER_TRAINING_RUNTIME_KIND) == c.TRAINING_RUNTIME_KIND:
        runtime = srv.get_object("trainingruntimes", ref.get("name"), namespace)
    else:
        runtime = srv.get_object("clustertrainingruntimes", ref.get("name"), None)
    if runtime is None:
        return None
    out = {key: runtime[key] for key in ("apiVersion", "kind", "spec")}
    out["metadata"] = {k: v for k, v in runtime["metadata"].items() if k in ("name", "namespace", "labels")}
    return out


def render_jobset(srv: Any, trainjob: JSON, workdir: Path) -> JSON:
    """The JobSet ktrain's engine renders for a stored TrainJob and its runtime on the double
    (raises ktrain's error when it cannot)."""
    from ktrain.errors import NotFoundError
    from ktrain.inputs.registry import RuntimeRegistry
    from ktrain.service.render import render_request
    from ktrain.service.requests import RenderRequest

    name = trainjob["metadata"]["name"]
    runtime = _stored_runtime(srv, trainjob)
    if runtime is None:
        raise NotFoundError(f"runtime {trainjob['spec']['runtimeRef'].get('name')} is not on the cluster")
    job = {key: trainjob[key] for key in ("apiVersion", "kind", "spec")}
    job["metadata"] = {k: v for k, v in trainjob["metadata"].items() if k in ("name", "namespace", "labels")}
    job_file = workdir / f"{job['metadata'].get('namespace')}-{name}.yaml"
    runtime_file = workdir / f"{job['metadata'].get('namespace')}-{name}-runtime.yaml"
    job_file.write_text(yaml.safe_dump(job))
    runtime_file.write_text(yaml.safe_dump(runtime))
    registry = RuntimeRegistry(files=[str(runtime_file)], bundled=False)
    objects = render_request(RenderRequest(file=str(job_file)), registry).result.objects
    return next(o for o in objects if o["kind"] == c.JOBSET_KIND)


class TrainJobWebhook:
    """`validator.trainjob.trainer.kubeflow.org` on the double: a TrainJob create the engine's
    validation refuses is denied (403, the webhook's message), nothing stored."""

    def __init__(self, srv: Any, workdir: Path) -> None:
        self.srv = srv
        self.workdir = workdir

    def __call__(self, kind: str, obj: JSON, old: JSON | None) -> None:
        from apiserver.errors import ApiError

        from ktrain.errors import ValidationFailedError

        if kind != c.TRAINJOB_KIND or old is not None:
            return
        if _stored_runtime(self.srv, obj) is None:
            return  # the webhook reports a missing runtime too; the notebooks never meet it
        try:
            render_jobset(self.srv, obj, self.workdir)
        except ValidationFailedError as exc:
            errors = [f"{e.path}: Invalid value: {e.message}" for e in exc.errors] or [str(exc)]
            message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            raise ApiError(
                403,
                f'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: {message}',
                "Forbidden",
            ) from None


class NotebookController:
    """`with NotebookController(srv, namespaces): ...`; `created` lists (namespace, TrainJob name)."""

    def __init__(self, srv: Any, namespaces: list[str], hold: float = 2.5, workdir: Path | None = None) -> None:
        self.srv = srv
        self.namespaces = namespaces
        self.hold = hold
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="notebook-controller-"))
        self.created: list[tuple[str, str]] = []
        self.errors: list[BaseException] = []
        self._running: dict[tuple[str, str], tuple[float, list[tuple[str, list[str]]]]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="notebook-controller", daemon=True)

    def __enter__(self) -> NotebookController:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        if self.errors:
            raise self.errors[0]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for namespace in self.namespaces:
                    for trainjob in self.srv.objects("trainjobs", namespace):
                        key = (namespace, trainjob["metadata"]["name"])
                        if key not in self.created:
                            self.created.append(key)
                            self.start(trainjob)
                now = time.monotonic()
                for key, (since, pods) in list(self._running.items()):
                    if now - since >= self.hold:
                        del self._running[key]
                        self.complete(key, pods)
            except BaseException as exc:  # reported by __exit__: a test must not pass on a broken controller
                self.errors.append(exc)
                return
            time.sleep(0.05)

    def start(self, trainjob: JSON) -> None:
        from ktrain.errors import KtrainError

        namespace, name = trainjob["metadata"]["namespace"], trainjob["metadata"]["name"]
        try:
            jobset = render_jobset(self.srv, trainjob, self.workdir)
        except KtrainError as exc:
            failed = {**COMPLETE, "type": "Failed", "reason": "RenderFailed", "message": str(exc)}
            self.srv.set_status("trainjobs", name, {"conditions": [failed]}, namespace=namespace)
            return
        jobset["metadata"]["namespace"] = namespace
        jobset["metadata"]["ownerReferences"] = [
            {
                "apiVersion": c.TRAINER_API_VERSION,
                "kind": c.TRAINJOB_KIND,
                "name": name,
                "uid": trainjob["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        stored = self.srv.put_object(jobset)
        pods = []
        for rjob in jobset["spec"]["replicatedJobs"]:
            job_spec = rjob["template"]["spec"]
            pod_spec = job_spec["template"]["spec"]
            for replica in range(int(rjob.get("replicas") or 1)):
                for index in range(int(job_spec.get("parallelism") or 1)):
                    pod = f"{name}-{rjob['name']}-{replica}-{index}-pod00"
                    containers = [
                        {k: v for k, v in ct.items() if k in ("name", "image", "resources", "env")}
                        for ct in pod_spec["containers"]
                    ]
                    self.srv.add_pod(
                        pod,
                        namespace,
                        labels={
                            c.JOBSET_NAME_LABEL: name,
                            c.JOBSET_RJOB_NAME_LABEL: rjob["name"],
                            c.JOBSET_JOB_INDEX_LABEL: str(replica),
                            c.JOB_COMPLETION_INDEX_ANNOTATION: str(index),
                        },
                        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(index)},
                        phase="Running",
                        containers=containers,
                        owner=stored,
                    )
                    names = [ct["name"] for ct in containers]
                    for container in names:
                        self.srv.append_log(
                            pod,
                            f"{rjob['name']} {replica}-{index}: {container} started\n",
                            container=container,
                            namespace=namespace,
                        )
                    pods.append((pod, names))
        self._running[(namespace, name)] = (time.monotonic(), pods)

    def complete(self, key: tuple[str, str], pods: list[tuple[str, list[str]]]) -> None:
        namespace, name = key
        if self.srv.get_object("trainjobs", name, namespace) is None:
            return  # deleted meanwhile
        for pod, containers in pods:
            if self.srv.get_object("pods", pod, namespace) is None:
                continue
            for container in containers:
                self.srv.append_log(pod, f"{container} done\n", container=container, namespace=namespace)
                self.srv.terminate_container(pod, container, namespace=namespace, exit_code=0)
        self.srv.set_status("trainjobs", name, {"conditions": [COMPLETE]}, namespace=namespace)
