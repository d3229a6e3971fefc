"""The Trainer controller, JobSet, Job controllers and kubelet for notebooks, played on the API-server
double without running anything (tests/test_sdk_notebooks.py).

The upstream notebooks' training functions need GPUs, TPUs, datasets and models from the network;
what a notebook shows of a job is its status, steps, devices and logs. So this controller renders
each TrainJob's JobSet with ktrain's engine (as tests/trainer_controller.py: what ktrain is held to
produce, ENGINE.md and the conformance cases) and makes every pod its replicated jobs would have
(initializers, launcher, nodes) with the containers' resources and env, each container's log a
fixed line; nothing runs.

Time is the clients' reads, not the clock (but for SAME_LOOK), so that two runs of a notebook (the SDK's, ktrain's)
see the same states whatever the machine's load: a job is Created until the second read of its
pods (a pods list in its namespace, or with its JobSet's label), which is answered with its pods
Running; the third read after that, or a request to follow one of its pods' logs, is answered with
the containers terminated (exit 0), the pods Succeeded and the TrainJob Complete. So a
`wait_for_job_status(status={"Running"})` sees Created, then Running; a followed log ends. A
TrainJob the engine cannot render gets the Failed condition, with the error.

`TrainJobWebhook` is the Trainer's TrainJob validating webhook (ENGINE.md §11.2), played by the
engine's validation: a create it refuses is answered as the API server answers a webhook's denial.
"""

from __future__ import annotations

import copy
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
        self.admitted: dict[str, list[JSON]] = {}  # namespace -> the TrainJobs created there, in order

    def __call__(self, kind: str, obj: JSON, old: JSON | None) -> None:
        if kind != c.TRAINJOB_KIND or old is not None:
            return
        if _stored_runtime(self.srv, obj) is not None:  # (the webhook reports a missing one; no notebook meets it)
            self._validate(obj)
        self.admitted.setdefault(obj["metadata"].get("namespace") or "", []).append(copy.deepcopy(obj))

    def _validate(self, obj: JSON) -> None:
        from apiserver.errors import ApiError

        from ktrain.errors import ValidationFailedError

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
    """`with NotebookController(srv, namespaces): ...` (a request hook on the double); `created`
    lists (namespace, TrainJob name) in the order the jobs were seen."""

    RUNNING_READS = 3  # the read that completes a running job
    # ktrain's list_jobs lists every pod twice, back to back (the SDK lists each job's): lists of
    # every pod in a namespace this close together are one look.
    SAME_LOOK = 0.5

    def __init__(self, srv: Any, namespaces: list[str], workdir: Path | None = None) -> None:
        self.srv = srv
        self.namespaces = set(namespaces)
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="notebook-controller-"))
        self.created: list[tuple[str, str]] = []
        self.errors: list[BaseException] = []
        self._reads: dict[tuple[str, str], int] = {}
        self._pods: dict[tuple[str, str], list[tuple[str, list[str]]]] = {}
        self._done: set[tuple[str, str]] = set()
        self._wide: dict[str, float] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> NotebookController:
        self.srv.request_hooks.append(self.on_request)
        return self

    def __exit__(self, *exc: object) -> None:
        self.srv.request_hooks.remove(self.on_request)
        if self.errors:
            raise self.errors[0]

    def on_request(self, req: Any) -> None:
        if req.namespace not in self.namespaces:
            return
        try:
            with self._lock:
                if req.resource == "pods" and req.verb == "list":
                    terms = (req.param("labelSelector") or "").replace(" ", "").split(",")
                    named = {t.split("=", 1)[1] for t in terms if t.startswith(f"{c.JOBSET_NAME_LABEL}=")}
                    now = time.monotonic()
                    if not named:  # a list of every job's pods: one look however many lists a call makes
                        if now - self._wide.get(req.namespace, -1.0) < self.SAME_LOOK:
                            self._wide[req.namespace] = now
                            return
                        self._wide[req.namespace] = now
                    for name in self._jobs(req.namespace):
                        if not named or name in named:
                            self._read((req.namespace, name))
                elif req.resource == "pods/log" and (req.param("follow") or "").lower() in ("true", "1"):
                    for key, pods in self._pods.items():
                        if key[0] == req.namespace and key not in self._done and any(p == req.name for p, _ in pods):
                            self.complete(key)
        except BaseException as exc:  # reported by __exit__: a test must not pass on a broken controller
            self.errors.append(exc)

    def _jobs(self, namespace: str) -> list[str]:
        names = []
        for trainjob in self.srv.objects("trainjobs", namespace):
            key = (namespace, trainjob["metadata"]["name"])
            if key not in self.created:
                self.created.append(key)
            names.append(key[1])
        return names

    def _read(self, key: tuple[str, str]) -> None:
        reads = self._reads[key] = self._reads.get(key, 0) + 1
        if reads == 2:
            trainjob = self.srv.get_object("trainjobs", key[1], key[0])
            if trainjob is not None:
                self.start(trainjob)
        elif reads == 1 + self.RUNNING_READS and key in self._pods and key not in self._done:
            self.complete(key)

    def start(self, trainjob: JSON) -> None:
        from ktrain.errors import KtrainError

        namespace, name = trainjob["metadata"]["namespace"], trainjob["metadata"]["name"]
        try:
            jobset = render_jobset(self.srv, trainjob, self.workdir)
        except KtrainError as exc:
            failed = {**COMPLETE, "type": "Failed", "reason": "RenderFailed", "message": str(exc)}
            self.srv.set_status("trainjobs", name, {"conditions": [failed]}, namespace=namespace)
            self._done.add((namespace, name))
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
                        line = f"{rjob['name']} {replica}-{index}: {container} started\n"
                        self.srv.append_log(pod, line, container=container, namespace=namespace)
                    pods.append((pod, names))
        self._pods[(namespace, name)] = pods

    def complete(self, key: tuple[str, str]) -> None:
        namespace, name = key
        self._done.add(key)
        if self.srv.get_object("trainjobs", name, namespace) is None:
            return  # deleted meanwhile
        for pod, containers in self._pods.get(key, []):
            if self.srv.get_object("pods", pod, namespace) is None:
                continue
            for container in containers:
                self.srv.append_log(pod, f"{container} done\n", container=container, namespace=namespace)
                self.srv.terminate_container(pod, container, namespace=namespace, exit_code=0)
        self.srv.set_status("trainjobs", name, {"conditions": [COMPLETE]}, namespace=namespace)
