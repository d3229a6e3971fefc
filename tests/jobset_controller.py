"""The JobSet and Job controllers and the kubelet, played on the API-server double: for JobSets
`ktrain job create` submits (`JobSetController`), and for those the Trainer controller double makes
(tests/trainer_controller.py, which runs them with `run_jobset`).

Each attempt of a JobSet is what the JobSet controller makes of it: one batch/v1 Job per replica of
each trainer replicated job (`<jobset>-<rjob>-<index>`), labelled and annotated with the attempt
(`jobset.sigs.k8s.io/restart-attempt`, pkg/constants `RestartsKey`), each pod's container run for
real, here, one pod after the other (the command, arguments, environment; `torchrun`/`mpirun` as
stubs that run the program once with this pod's rank; ConfigMap volumes laid out as the kubelet
projects them). A failed pod goes through its Job's podFailurePolicy and backoffLimit
(kubernetes pkg/controller/job, modelled in tests/apiserver/jobset_failure.py `job_failure`; a
retried pod is a new pod of the same index); a failed Job gets its Failed condition and the Job
controller's Warning event (job_controller.go `recordJobFinished`), then the JobSet's failure
policy decides (jobset pkg/controllers/failure_policy.go, `jobset_action`):

- a restart adds one to `status.restarts` (and to `status.restartsCountTowardsMax` for
  RestartJobSet, not for RestartJobSetAndIgnoreMaxRestarts), records the action's Warning event on
  the JobSet (the event recorder folds a repeat into `count`), deletes the attempt's Jobs (their pods
  with them) and creates the next attempt's;
- FailJobSet, or RestartJobSet with the budget spent (ReachedMaxRestarts), or a failed Job without a
  failure policy (FailedJobs): the Failed condition, `terminalState: Failed`, and the condition's
  Warning event (jobset_controller.go `setCondition`); the failed Job and its pods stay.

All Jobs succeeding: the Completed condition (`AllJobsCompleted`). `preempt` names pods that are
preempted instead of run, as kube-scheduler's preemption leaves them: Failed, with the
DisruptionTarget condition (reason PreemptionByScheduler) and their container killed (exit 143).
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from apiserver.jobset_failure import RESTART_EVENTS, JobFailure, job_failure, jobset_action
from pod_run import kubelet_expand

from ktrain import constants as c

JSON = dict[str, Any]
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
JOB_NAME = "batch.kubernetes.io/job-name"
MAX_ATTEMPTS = 20  # a double that loops forever would hang the test

TORCHRUN = """#!{python}
import os, sys
argv = sys.argv[1:]
args = argv[next(i for i, a in enumerate(argv) if not a.startswith("--")):]  # torchrun's own options first
os.environ["RANK"] = os.environ.get("PET_NODE_RANK", "0")
os.environ["WORLD_SIZE"] = os.environ.get("PET_NNODES", "1")
os.execv(sys.executable, [sys.executable, *args])
"""
MPIRUN = """#!{python}
import os, sys
argv = sys.argv[1:]
while argv and argv[0].startswith("-"):
    argv = argv[2:] if argv[0] in ("--hostfile", "-np") else argv[1:]
os.execvp(argv[0], argv)
"""
PYTHON = """#!/bin/sh
# `python -m pip install ...` is recorded, anything else runs the real interpreter.
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> "$PIP_LOG"; exit 0; fi
exec {python} "$@"
"""
# jobset pkg/constants
COMPLETED = {
    "type": "Completed",
    "status": "True",
    "reason": "AllJobsCompleted",
    "message": "jobset completed successfully",
}
# kube-scheduler pkg/scheduler/framework/preemption: the condition it puts on a victim
PREEMPTED = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "PreemptionByScheduler",
    "message": "DefaultPreemption: preempting to accommodate a higher priority pod",
}


def _write_exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class JobSetController:
    """`with JobSetController(srv, namespace): ...` runs every JobSet of the namespace that no
    TrainJob owns; `handled` names them, in order. `preempt` holds (attempt, rjob, rank) of pods
    to preempt; `pause` (seconds) is slept between attempts, so a test can look at a restart."""

    def __init__(
        self,
        srv: Any,
        namespace: str,
        workdir: Path | None = None,
        *,
        preempt: set[tuple[int, str, int]] | None = None,
        pause: float = 0.0,
    ) -> None:
        self.srv = srv
        self.namespace = namespace
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="jobset-controller-"))
        self.handled: list[str] = []
        self.errors: list[BaseException] = []
        self.preempt = set(preempt or ())
        self.pause = pause
        self.pip_log = self.workdir / "pip.log"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)
        # Events a second apart, in order (the API server's timestamps have one-second resolution).
        self._clock = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)
        bin_dir = self.workdir / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        _write_exe(bin_dir / "torchrun", TORCHRUN.format(python=sys.executable))
        _write_exe(bin_dir / "mpirun", MPIRUN.format(python=sys.executable))
        for name in ("python", "python3"):
            _write_exe(bin_dir / name, PYTHON.format(python=sys.executable))
        self.bin_dir = bin_dir

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        if self.errors:
            raise self.errors[0]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.reconcile_all()
            except BaseException as exc:  # reported by __exit__: a test must not pass on a broken controller
                self.errors.append(exc)
                return
            time.sleep(0.05)

    def reconcile_all(self) -> None:
        for jobset in self.srv.objects("jobsets", self.namespace):
            owned = any(ref.get("kind") == c.TRAINJOB_KIND for ref in jobset["metadata"].get("ownerReferences") or [])
            if not owned and jobset["metadata"]["name"] not in self.handled and not jobset["spec"].get("suspend"):
                self.handled.append(jobset["metadata"]["name"])
                self.run_jobset(jobset)

    # -- the JobSet controller ---------------------------------------------------------------------

    def _event(self, involved: JSON, type_: str, reason: str, message: str) -> None:
        """An Event as client-go's recorder sends it: a repeat of one (same object, reason and
        message) is folded into its `count`."""
        self._clock += dt.timedelta(seconds=1)
        uid = involved["metadata"].get("uid")
        with self.srv.cluster.lock:
            for ev in self.srv.objects("events", self.namespace):
                inv = ev.get("involvedObject") or {}
                if (inv.get("uid"), ev.get("reason"), ev.get("message")) == (uid, reason, message):
                    ev["count"] = int(ev.get("count") or 1) + 1
                    ev["lastTimestamp"] = self._clock.strftime("%Y-%m-%dT%H:%M:%SZ")
                    self.srv.put_object(ev)
                    return
        self.srv.add_event(involved, reason, message, type=type_, component="jobset-controller", timestamp=self._clock)

    def _jobset_status(self, name: str, update: JSON) -> JSON:
        with self.srv.cluster.lock:
            stored = self.srv.get_object("jobsets", name, self.namespace)
            stored.setdefault("status", {}).update(update)
            return self.srv.put_object(stored)

    def run_jobset(self, jobset: JSON) -> JSON:
        """Run the JobSet to its end, attempt after attempt; returns its final condition."""
        name = jobset["metadata"]["name"]
        for _ in range(MAX_ATTEMPTS):
            stored = self.srv.get_object("jobsets", name, self.namespace)
            attempt = int((stored.get("status") or {}).get("restarts") or 0)
            failed = self._run_attempt(stored, attempt)
            if failed is None:
                condition = {**COMPLETED, "lastTransitionTime": _now()}
                stored = self._jobset_status(name, {"conditions": [condition], "terminalState": "Completed"})
                self._event(stored, "Normal", condition["reason"], condition["message"])
                return condition
            rjob, job, failure = failed
            decision = jobset_action(stored, rjob, failure, job["metadata"]["name"])
            if decision.failed is not None:
                reason, message = decision.failed
                condition = {
                    "type": "Failed",
                    "status": "True",
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": _now(),
                }
                stored = self._jobset_status(name, {"conditions": [condition], "terminalState": "Failed"})
                self._event(stored, "Warning", reason, message)
                return condition

            status = stored.get("status") or {}
            counted = int(status.get("restartsCountTowardsMax") or 0) + (1 if decision.counts else 0)
            stored = self._jobset_status(name, {"restarts": attempt + 1, "restartsCountTowardsMax": counted})
            reason, message = RESTART_EVENTS[decision.action]
            self._event(stored, "Warning", reason, f"{message} (first failed job: {job['metadata']['name']})")
            for old in self.srv.objects("jobs", self.namespace):
                if old["metadata"].get("labels", {}).get(c.JOBSET_NAME_LABEL) == name:
                    self.srv.delete_object("jobs", old["metadata"]["name"], self.namespace, propagation="Background")
            if self._stop.wait(self.pause):  # the test is over
                return {}
        raise AssertionError(f"JobSet {name} still restarting after {MAX_ATTEMPTS} attempts")

    @staticmethod
    def trainer_rjobs(jobset: JSON) -> list[JSON]:
        """The replicated jobs whose pods run the trainer (initializers are not run)."""
        out = []
        for rjob in jobset["spec"]["replicatedJobs"]:
            labels = rjob["template"].get("metadata", {}).get("labels", {})
            if labels.get(c.LABEL_ANCESTOR) == c.ANCESTOR_TRAINER or rjob["name"] == c.LAUNCHER:
                out.append(rjob)
        return out

    def _run_attempt(self, jobset: JSON, attempt: int) -> tuple[str, JSON, JobFailure] | None:
        """One attempt: (replicated job, Job, its failure) of the first Job that failed, or None."""
        for rjob in self.trainer_rjobs(jobset):
            for index in range(int(rjob.get("replicas") or 1)):
                job = self._create_job(jobset, rjob, index, attempt)
                failure = self._run_job(jobset, rjob, job, attempt)
                if failure is not None:
                    return rjob["name"], job, failure
        return None

    # -- the Job controller ------------------------------------------------------------------------

    def _create_job(self, jobset: JSON, rjob: JSON, index: int, attempt: int) -> JSON:
        name = jobset["metadata"]["name"]
        labels = {
            **(rjob["template"].get("metadata", {}).get("labels") or {}),
            c.JOBSET_NAME_LABEL: name,
            c.JOBSET_RJOB_NAME_LABEL: rjob["name"],
            c.JOBSET_JOB_INDEX_LABEL: str(index),
            RESTART_ATTEMPT: str(attempt),
        }
        return self.srv.put_object(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"{name}-{rjob['name']}-{index}",
                    "namespace": self.namespace,
                    "labels": labels,
                    "annotations": dict(labels),
                    "ownerReferences": [
                        {
                            "apiVersion": jobset["apiVersion"],
                            "kind": "JobSet",
                            "name": name,
                            "uid": jobset["metadata"]["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": rjob["template"]["spec"],
                "status": {"active": 0, "failed": 0, "succeeded": 0},
            }
        )

    def _run_job(self, jobset: JSON, rjob: JSON, job: JSON, attempt: int) -> JobFailure | None:
        spec = job["spec"]
        failed = 0
        for rank in range(int(spec.get("parallelism") or 1)):
            for retry in range(int(spec.get("backoffLimit", 6)) + 1):
                pod = self._run_pod(jobset, rjob, job, rank, attempt, retry)
                if pod["status"]["phase"] == "Succeeded":
                    break
                failure = job_failure(spec, pod, failed)
                failed += 1
                if failure is not None:
                    self._fail_job(job, failure, failed)
                    return failure
        self._set_job_status(
            job,
            {
                "succeeded": int(spec.get("completions") or 1),
                "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": _now()}],
            },
        )
        return None

    def _set_job_status(self, job: JSON, status: JSON) -> None:
        with self.srv.cluster.lock:
            stored = self.srv.get_object("jobs", job["metadata"]["name"], self.namespace)
            if stored is not None:
                stored["status"] = {**stored.get("status", {}), **status}
                self.srv.put_object(stored)

    def _fail_job(self, job: JSON, failure: JobFailure, failed: int) -> None:
        condition = {
            "type": "Failed",
            "status": "True",
            "reason": failure.reason,
            "message": failure.message,
            "lastTransitionTime": _now(),
        }
        self._set_job_status(job, {"failed": failed, "conditions": [condition]})
        self._event(job, "Warning", failure.reason, failure.message)

    # -- the kubelet -------------------------------------------------------------------------------

    def _volumes(self, pod: JSON, root: Path) -> dict[str, Path]:
        """volume name -> a local directory holding what the kubelet would project there (ConfigMaps,
        emptyDirs)."""
        by_volume: dict[str, Path] = {}
        for volume in pod.get("volumes") or []:
            if "emptyDir" in volume:  # e.g. the writable copy of --code's files
                (root / volume["name"]).mkdir(parents=True, exist_ok=True)
                by_volume[volume["name"]] = root / volume["name"]
                continue
            sources = (volume.get("projected") or {}).get("sources") or []
            if volume.get("configMap"):
                sources = [{"configMap": volume["configMap"]}]
            if not sources or not all("configMap" in s for s in sources):
                continue
            target = root / volume["name"]
            for source in sources:
                ref = source["configMap"]
                cm = self.srv.get_object("configmaps", ref["name"], self.namespace)
                assert cm is not None, f"ConfigMap {ref['name']} is not on the double"
                items = ref.get("items") or [{"key": k, "path": k} for k in (cm.get("data") or {})]
                for item in items:
                    path = target / item["path"]
                    path.parent.mkdir(parents=True, exist_ok=True)
                    if item["key"] in (cm.get("data") or {}):
                        path.write_text(cm["data"][item["key"]])
                    else:
                        path.write_bytes(base64.b64decode(cm["binaryData"][item["key"]]))
            by_volume[volume["name"]] = target
        return by_volume

    def pod_name(self, job: JSON, rank: int, attempt: int, retry: int) -> str:
        # The Job controller's `<job>-<index>-<random>`; the random part says which run it is.
        suffix = f"x{len(self.handled)}" + (f"r{attempt}" if attempt else "") + (f"p{retry}" if retry else "")
        return f"{job['metadata']['name']}-{rank}-{suffix}"

    def _run_pod(self, jobset: JSON, rjob: JSON, job: JSON, rank: int, attempt: int, retry: int) -> JSON:
        pod_spec = rjob["template"]["spec"]["template"]["spec"]
        container = next(ct for ct in pod_spec["containers"] if ct["name"] == c.NODE)
        pod_name = self.pod_name(job, rank, attempt, retry)
        labels = {
            c.JOBSET_NAME_LABEL: jobset["metadata"]["name"],
            c.JOBSET_RJOB_NAME_LABEL: rjob["name"],
            c.JOBSET_JOB_INDEX_LABEL: job["metadata"]["labels"][c.JOBSET_JOB_INDEX_LABEL],
            c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank),
            JOB_NAME: job["metadata"]["name"],
            RESTART_ATTEMPT: str(attempt),
        }
        root = self.workdir / pod_name
        root.mkdir(parents=True, exist_ok=True)
        self.srv.add_pod(
            pod_name,
            self.namespace,
            labels=labels,
            annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank), RESTART_ATTEMPT: str(attempt)},
            phase="Running",
            containers=[{k: v for k, v in container.items() if k in ("name", "image", "resources", "env")}],
            owner=job,
        )
        if (attempt, rjob["name"], rank) in self.preempt:
            return self._end_pod(pod_name, 143, "Error", condition={**PREEMPTED, "lastTransitionTime": _now()})
        local = self._volumes(pod_spec, root)
        mounts = {m["mountPath"]: local[m["name"]] for m in container.get("volumeMounts") or [] if m["name"] in local}
        argv = [*container.get("command", []), *container.get("args", [])]
        # longest first: /opt/ktrain/code-src before /opt/ktrain/code
        for mount_path, directory in sorted(mounts.items(), key=lambda m: -len(m[0])):
            argv = [word.replace(mount_path, str(directory)) for word in argv]
        env = {"PATH": f"{self.bin_dir}:{os.environ['PATH']}", "HOME": str(root), "PIP_LOG": str(self.pip_log)}
        for var in container.get("env") or []:
            field_path = str(((var.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath", ""))
            if "value" in var:
                env[var["name"]] = str(var["value"])
            elif c.JOB_COMPLETION_INDEX_ANNOTATION in field_path:
                env[var["name"]] = str(rank)
            elif field_path == f"metadata.labels['{RESTART_ATTEMPT}']":
                env[var["name"]] = str(attempt)
        env["JOB_COMPLETION_INDEX"] = str(rank)
        # the kubelet expands $(VAR) in command and args ($$ is a literal $), as tests/pod_run.py does
        pod_env = {var["name"]: str(var["value"]) for var in container.get("env") or [] if "value" in var}
        argv = [kubelet_expand(word, pod_env) for word in argv]
        run = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, timeout=120, check=False)
        self.srv.append_log(pod_name, run.stdout + run.stderr, container=c.NODE, namespace=self.namespace)
        return self._end_pod(pod_name, run.returncode, "Completed" if run.returncode == 0 else "Error")

    def _end_pod(self, pod_name: str, code: int, reason: str, condition: JSON | None = None) -> JSON:
        with self.srv.cluster.lock:
            pod = self.srv.get_object("pods", pod_name, self.namespace)
            pod["status"]["phase"] = "Succeeded" if code == 0 else "Failed"
            pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": code, "reason": reason}}
            if condition is not None:
                pod["status"].setdefault("conditions", []).append(condition)
            return self.srv.put_object(pod)
