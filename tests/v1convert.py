"""What the tests of ktrain/convert share: the upstream CRDs' schemas, what the API server does on
write, converting a v1 job given as text or as a dict, rendering it, and the v1 jobs several
homes convert."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from conftest import UPSTREAM

from ktrain.convert import convert_documents
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest

CRDS = {
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): "trainer/crds/trainer.kubeflow.org_trainjobs.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): "trainer/crds/trainer.kubeflow.org_trainingruntimes.yaml",
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"): (
        "trainer/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"
    ),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "jobset/jobset.x-k8s.io_jobsets.yaml",
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "scheduler-plugins/scheduling.x-k8s.io_podgroups.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "volcano/scheduling.volcano.sh_podgroups.yaml",
}


@functools.cache
def _validator(api_version: str, kind: str) -> Any:
    import jsonschema

    rel = CRDS.get((api_version, kind))
    if rel is None:
        return None
    crd = yaml.load((UPSTREAM / rel).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    version = api_version.split("/")[1]
    schema = next(v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"] if v["name"] == version)
    return jsonschema.Draft7Validator(schema)


def crd_validate(obj: dict[str, Any]) -> None:
    validator = _validator(obj["apiVersion"], obj["kind"])
    if validator is not None:
        import jsonschema

        error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
        if error is not None:
            raise error


def server_accepts(obj: dict[str, Any]) -> None:
    """What the API server does to a custom resource on write (tests/apiserver/schema.py, from
    the CRDs in ../shared): no field the schema does not declare, then the schema holds."""
    from apiserver.schema import crd_schema

    rel = CRDS.get((obj["apiVersion"], obj["kind"]))
    if rel is None:
        return  # a core object (Secret, ConfigMap)
    schema = crd_schema(UPSTREAM / rel, obj["apiVersion"].split("/")[1])
    normalised, unknown = schema.normalise(obj)
    assert unknown == [], f"{obj['kind']} {obj['metadata']['name']}: fields not declared in schema: {unknown}"
    assert schema.validate(normalised) == [], obj["kind"]


def convert_text(text: str, file: str = "job.yaml", runtime: str | None = None):
    return convert_documents(load_documents(text, file), runtime=runtime)


def one(job: str | dict[str, Any], **kw: Any):
    """The one conversion of a job given as YAML text or as a dict (dumped as `job.yaml`)."""
    (conv,) = convert_text(job if isinstance(job, str) else yaml.safe_dump(job), **kw)
    return conv


def fields(conv) -> dict[str, tuple[str, str]]:
    return {r.field: (r.status, r.target) for r in conv.rows}


TF_FULL = """\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf, namespace: team}
spec:
  tfReplicaSpecs:
    Chief:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers: [{name: tensorflow, image: tf:1, command: [python, train.py]}]
    PS:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            image: tf:1
            command: [python, train.py]
            ports: [{name: tfjob-port, containerPort: 2223}]
    Worker:
      replicas: 3
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: tensorflow, image: tf:1, command: [python, train.py]}]
    Evaluator:
      replicas: 1
      template:
        spec:
          containers: [{name: tensorflow, image: tf:1, command: [python, train.py]}]
"""


ELASTIC = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: elastic}
spec:
  nprocPerNode: "4"
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 1
    maxReplicas: 4
    maxRestarts: 10
    metrics: []
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: torch:1
            command: [torchrun, train.py]
            env: [{name: LR, value: "0.1"}]
            resources: {limits: {nvidia.com/gpu: 4}}
            volumeMounts: [{name: data, mountPath: /data}]
          volumes: [{name: data, emptyDir: {}}]
          tolerations: [{key: gpu, operator: Exists}]
"""


FULL_RUN_POLICY = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: rp, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  runPolicy:
    cleanPodPolicy: None
    ttlSecondsAfterFinished: 600
    activeDeadlineSeconds: 3600
    backoffLimit: 3
    suspend: true
    managedBy: kueue.x-k8s.io/multikueue
    schedulingPolicy:
      minAvailable: 3
      queue: research
      minResources: {cpu: "8"}
      priorityClass: high
      scheduleTimeoutSeconds: 120
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: torch:1, command: [python, train.py]}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: torch:1, command: [python, train.py]}]
"""


def rendered(job: dict[str, Any], tmp_path: Path, **kw: Any) -> list[dict[str, Any]]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return render_request(RenderRequest(file=str(path), **kw), RuntimeRegistry()).result.objects


def kind_of(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind)


def rows(conv: Any) -> dict[str, tuple[str, str, str]]:
    return {r.field: (r.status, r.target, r.note) for r in conv.rows}


def pytorch(
    labels: dict[str, str] | None = None,
    run_policy: dict[str, Any] | None = None,
    restart: str | None = None,
    container: dict[str, Any] | None = None,
    workers: int = 2,
) -> dict[str, Any]:
    cont = container or {"name": "pytorch", "image": "torch:2", "command": ["torchrun", "train.py"]}
    replica: dict[str, Any] = {"replicas": workers, "template": {"spec": {"containers": [cont]}}}
    if restart:
        replica["restartPolicy"] = restart
    spec: dict[str, Any] = {"pytorchReplicaSpecs": {"Worker": replica}}
    if run_policy:
        spec["runPolicy"] = run_policy
    meta: dict[str, Any] = {"name": "pt", "namespace": "ml"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta, "spec": spec}


def replica(n: int, image: str = "tf:2", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "tensorflow", "image": image, "command": ["python", "t.py"]}]}
    spec.update(extra)
    return {"replicas": n, "template": {"spec": spec}}


def tfjob(specs: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": "ml"},
        "spec": {"tfReplicaSpecs": specs},
    }


def env_of(objects: list[dict[str, Any]], step: str) -> dict[str, Any]:
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    rjob = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == step)
    (cont,) = [c for c in rjob["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"]
    return {e["name"]: e.get("value") for e in cont.get("env", [])}
