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

from pathlib import Path
from typing import Any

import yaml
from jobset_controller import JobSetController

from ktrain import constants as c

JSON = dict[str, Any]
TRAINJOB_TYPES = {"Completed": "Complete", "Failed": "Failed"}


class TrainerController(JobSetController):
    """Start with `with TrainerController(srv, namespace): ...`; `handled` names the TrainJobs run."""

    def reconcile_all(self) -> None:
        for trainjob in self.srv.objects("trainjobs", self.namespace):
            if trainjob["metadata"]["name"] not in self.handled:
                self.handled.append(trainjob["metadata"]["name"])
                self.reconcile(trainjob)

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
        ended = self.run_jobset(stored)
        done = {**ended, "type": TRAINJOB_TYPES[ended["type"]]}
        self.srv.set_status("trainjobs", name, {"conditions": [done]}, namespace=self.namespace)
