"""The Trainer controller, the JobSet and Job controllers and the kubelet, played on the API-server
double, for tests that submit TrainJobs and then read their status and logs (the Kubeflow SDK's
getting-started flow, tests/test_python_notebook.py).

For every TrainJob it finds it does what the cluster would: the Trainer controller's JobSet
(rendered by ktrain's engine, which is what ktrain is held to produce: ENGINE.md, the conformance
cases), one pod per trainer node, and each pod's trainer container run for real, here, with the
pod's command, arguments and environment: the container's `node` command runs with the local `sh`,
`bash` and `python`, `torchrun` and `mpirun` replaced by stubs that run the program once (this
pod's rank, from the Job completion index, as the real launchers would give it), `python -m pip`
recorded instead of installing, and ConfigMap volumes laid out as the kubelet projects them. What
the container prints becomes the pod's log; its exit code the pod's phase, then the TrainJob's
Complete or Failed condition.
"""

from __future__ import annotations

import base64
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from pod_run import kubelet_expand

from ktrain import constants as c

JSON = dict[str, Any]

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
COMPLETE = {
    "type": "Complete",
    "status": "True",
    "reason": "JobsCompleted",
    "message": "jobs completed",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}
FAILED = {
    "type": "Failed",
    "status": "True",
    "reason": "JobsFailed",
    "message": "a job failed",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}


def _write_exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


class TrainerController:
    """Start with `with TrainerController(srv, namespace): ...`; `handled` names the TrainJobs run."""

    def __init__(self, srv: Any, namespace: str, workdir: Path | None = None) -> None:
        self.srv = srv
        self.namespace = namespace
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="trainer-controller-"))
        self.handled: list[str] = []
        self.errors: list[BaseException] = []
        self.pip_log = self.workdir / "pip.log"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="trainer-controller", daemon=True)
        bin_dir = self.workdir / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        _write_exe(bin_dir / "torchrun", TORCHRUN.format(python=sys.executable))
        _write_exe(bin_dir / "mpirun", MPIRUN.format(python=sys.executable))
        for name in ("python", "python3"):
            _write_exe(bin_dir / name, PYTHON.format(python=sys.executable))
        self.bin_dir = bin_dir

    def __enter__(self) -> TrainerController:
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
                for trainjob in self.srv.objects("trainjobs", self.namespace):
                    if trainjob["metadata"]["name"] not in self.handled:
                        self.handled.append(trainjob["metadata"]["name"])
                        self.reconcile(trainjob)
            except BaseException as exc:  # reported by __exit__: a test must not pass on a broken controller
                self.errors.append(exc)
                return
            time.sleep(0.05)

    # -- the Trainer controller ------------------------------------------------------------------

    def _runtime_file(self, trainjob: JSON) -> Path:
        ref = trainjob["spec"]["runtimeRef"]
        kind = ref.get("kind", "ClusterTrainingRuntime")
        if kind == "TrainingRuntime":
            runtime = self.srv.get_object("trainingruntimes", ref["name"], self.namespace)
        else:
            runtime = self.srv.get_object("clustertrainingruntimes", ref["name"], None)
        assert runtime is not None, f"runtime {kind} {ref['name']} is not on the double"
        runtime = {key: runtime[key] for key in ("apiVersion", "kind", "metadata", "spec")}
        runtime["metadata"] = {k: v for k, v in runtime["metadata"].items() if k in ("name", "namespace", "labels")}
        path = self.workdir / f"runtime-{ref['name']}.yaml"
        path.write_text(yaml.safe_dump(runtime))
        return path

    def reconcile(self, trainjob: JSON) -> None:
        from ktrain.inputs.registry import RuntimeRegistry
        from ktrain.service.render import render_request
        from ktrain.service.requests import RenderRequest

        name = trainjob["metadata"]["name"]
        job = {key: trainjob[key] for key in ("apiVersion", "kind", "spec")}
        job["metadata"] = {k: v for k, v in trainjob["metadata"].items() if k in ("name", "namespace", "labels")}
        job_file = self.workdir / f"{name}.yaml"
        job_file.write_text(yaml.safe_dump(job))
        registry = RuntimeRegistry(files=[str(self._runtime_file(trainjob))], bundled=False)
        objects = render_request(RenderRequest(file=str(job_file)), registry).result.objects
        jobset = next(o for o in objects if o["kind"] == c.JOBSET_KIND)
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
        codes = [self._run_pod(stored, rjob, rank) for rjob, rank in self._trainer_pods(jobset)]
        done = COMPLETE if all(code == 0 for code in codes) else FAILED
        self.srv.set_status("trainjobs", name, {"conditions": [done]}, namespace=self.namespace)

    @staticmethod
    def _trainer_pods(jobset: JSON) -> list[tuple[JSON, int]]:
        pods = []
        for rjob in jobset["spec"]["replicatedJobs"]:
            labels = rjob["template"].get("metadata", {}).get("labels", {})
            if labels.get(c.LABEL_ANCESTOR) != c.ANCESTOR_TRAINER and rjob["name"] != c.LAUNCHER:
                continue
            for rank in range(int(rjob["template"]["spec"].get("parallelism") or 1)):
                pods.append((rjob, rank))
        return pods

    # -- the Job controller and the kubelet --------------------------------------------------------

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

    def _run_pod(self, jobset: JSON, rjob: JSON, rank: int) -> int:
        name = jobset["metadata"]["name"]
        pod_spec = rjob["template"]["spec"]["template"]["spec"]
        container = next(ct for ct in pod_spec["containers"] if ct["name"] == c.NODE)
        pod_name = f"{name}-{rjob['name']}-0-{rank}-x{len(self.handled)}"
        root = self.workdir / pod_name
        root.mkdir(parents=True, exist_ok=True)
        local = self._volumes(pod_spec, root)
        mounts = {m["mountPath"]: local[m["name"]] for m in container.get("volumeMounts") or [] if m["name"] in local}
        argv = [*container.get("command", []), *container.get("args", [])]
        # longest first: /opt/ktrain/code-src before /opt/ktrain/code
        for mount_path, directory in sorted(mounts.items(), key=lambda m: -len(m[0])):
            argv = [word.replace(mount_path, str(directory)) for word in argv]
        env = {"PATH": f"{self.bin_dir}:{os.environ['PATH']}", "HOME": str(root), "PIP_LOG": str(self.pip_log)}
        for var in container.get("env") or []:
            if "value" in var:
                env[var["name"]] = str(var["value"])
            elif c.JOB_COMPLETION_INDEX_ANNOTATION in str((var.get("valueFrom") or {}).get("fieldRef", {})):
                env[var["name"]] = str(rank)
        env["JOB_COMPLETION_INDEX"] = str(rank)
        # the kubelet expands $(VAR) in command and args ($$ is a literal $), as tests/pod_run.py does
        pod_env = {var["name"]: str(var["value"]) for var in container.get("env") or [] if "value" in var}
        argv = [kubelet_expand(word, pod_env) for word in argv]
        self.srv.add_pod(
            pod_name,
            self.namespace,
            labels={
                c.JOBSET_NAME_LABEL: name,
                c.JOBSET_RJOB_NAME_LABEL: rjob["name"],
                c.JOBSET_JOB_INDEX_LABEL: "0",
                c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank),
            },
            annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
            phase="Running",
            containers=[{k: v for k, v in container.items() if k in ("name", "image", "resources", "env")}],
            owner=jobset,
        )
        run = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, timeout=120, check=False)
        self.srv.append_log(pod_name, run.stdout + run.stderr, container=c.NODE, namespace=self.namespace)
        with self.srv.cluster.lock:
            pod = self.srv.get_object("pods", pod_name, self.namespace)
            pod["status"]["phase"] = "Succeeded" if run.returncode == 0 else "Failed"
            pod["status"]["containerStatuses"][0]["state"] = {
                "terminated": {"exitCode": run.returncode, "reason": "Completed" if run.returncode == 0 else "Error"}
            }
            self.srv.put_object(pod)
        return run.returncode
