"""Training Operator v1 jobs -> TrainJob (+ runtime): the 36 upstream examples, shapes they miss,
the report's coverage of every v1 field, and errors at file:line:col.

Golden expectations name the v1 controller code they were checked against by hand.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import UPSTREAM

from ktrain.convert import convert_documents, kinds
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.errors import InputError
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest
from ktrain.service.validate import validate_request

EXAMPLES = UPSTREAM / "training-operator" / "examples"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml")) if EXAMPLES.is_dir() else []
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


def one(text: str, **kw: Any):
    (conv,) = convert_text(text, **kw)
    return conv


def fields(conv) -> dict[str, tuple[str, str]]:
    return {r.field: (r.status, r.target) for r in conv.rows}


# --------------------------------------------------------------------------- the upstream examples


@pytest.mark.shared
@pytest.mark.parametrize("name", EXAMPLE_FILES or ["<no ../shared>"])
def test_every_upstream_example_converts_renders_and_passes_the_crd_schemas(name: str, tmp_path: Path) -> None:
    path = EXAMPLES / name
    (conv,) = convert_text(path.read_text(), str(path))
    crd_validate(conv.trainjob)
    if conv.runtime is not None:
        mpi = conv.runtime["spec"]["mlPolicy"].get("mpi") or {}
        if mpi.get("mpiImplementation") in ("Intel", "MPICH"):
            # the ktrain extension (--allow-extensions): the v2.3 CRD knows OpenMPI only, and the
            # report says so
            import jsonschema

            with pytest.raises(jsonschema.ValidationError, match="is not one of"):
                crd_validate(conv.runtime)
            row = next(r for r in conv.rows if r.field == "spec.mpiImplementation")
            assert row.status == APPROXIMATED and "--allow-extensions" in row.note
            crd_validate({**conv.runtime, "spec": {**conv.runtime["spec"], "mlPolicy": {"mpi": {}}}})
        else:
            crd_validate(conv.runtime)
    # `job render -f v1.yaml`: converted in memory, generated runtime registered first
    request = RenderRequest(file=str(path), allow_extensions=True)
    outcome = render_request(request, RuntimeRegistry())
    assert request.notes and conv.kind in request.notes[0]
    assert outcome.runtime.runtime.name == conv.runtime_name
    for obj in outcome.result.objects:
        crd_validate(obj)
        server_accepts(obj)
    # nothing silent: every row says where the field went or why it did not
    assert all(r.status in (KEPT, APPROXIMATED, DROPPED) and (r.target or r.note) for r in conv.rows)
    assert all(r.note for r in conv.rows if r.status != KEPT)
    # the round trip: convert, then render the printed documents
    from ktrain.output.yamltext import dump_all

    out = tmp_path / "converted.yaml"
    out.write_text(dump_all([conv.trainjob] + ([conv.runtime] if conv.runtime else [])))
    again = render_request(RenderRequest(file=str(out), allow_extensions=True), RuntimeRegistry())
    assert _without_keys(again.result.objects) == _without_keys(outcome.result.objects)


def _without_keys(objects: list[dict]) -> list[dict]:
    """The SSH key pair is fresh for each render."""
    return [
        {**o, "data": "<key>"} if o["kind"] == "Secret" and o.get("type") == "kubernetes.io/ssh-auth" else o
        for o in objects
    ]


# --------------------------------------------------------------------------- golden shapes


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


def test_tf_with_chief_ps_and_evaluator() -> None:
    """Checked against tensorflow.go genClusterSpec (evaluator not in the cluster, ports per type
    from the tfjob-port container port, 2222 by default) and tfjob_controller.go (TF_CONFIG on the
    tensorflow container only; success = the chief's)."""
    conv = one(TF_FULL)
    rt = conv.runtime
    assert rt["kind"] == "TrainingRuntime" and rt["metadata"] == {
        "name": "tf-v1",
        "labels": {"trainer.kubeflow.org/framework": "tensorflow", "ktrain.io/converted-from": "tfjob"},
        "namespace": "team",
    }
    rjobs = {r["name"]: r for r in rt["spec"]["template"]["spec"]["replicatedJobs"]}
    assert list(rjobs) == ["chief", "ps", "node", "evaluator"]
    assert rjobs["ps"]["template"]["spec"]["parallelism"] == 2
    assert rjobs["node"]["template"]["metadata"]["labels"] == {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
    assert rt["spec"]["template"]["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["chief"]}
    assert rt["spec"]["mlPolicy"] == {"numNodes": 3}
    assert conv.trainjob["spec"] == {
        "runtimeRef": {"name": "tf-v1", "kind": "TrainingRuntime"},
        "trainer": {"numNodes": 3},
    }
    ev = rjobs["evaluator"]["template"]["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in ev["containers"][0]["env"]}
    expected_cluster = {
        "chief": ["$(KTRAIN_JOBSET)-chief-0-0.$(KTRAIN_JOBSET):2222"],
        "ps": [f"$(KTRAIN_JOBSET)-ps-0-{i}.$(KTRAIN_JOBSET):2223" for i in range(2)],
        "worker": [f"$(KTRAIN_JOBSET)-node-0-{i}.$(KTRAIN_JOBSET):2222" for i in range(3)],
    }
    config = env["TF_CONFIG"].replace("$(KTRAIN_POD_INDEX)", "0")
    assert json.loads(config) == {
        "cluster": expected_cluster,
        "task": {"type": "evaluator", "index": 0},
        "environment": "cloud",
    }
    # the image's command is kept (no wrapper needed with fixed counts)
    assert ev["containers"][0]["command"] == ["python", "train.py"] and ev["containers"][0]["name"] == "node"
    assert ev["restartPolicy"] == "Never"  # v1's TFJob default restart policy is Never; unset -> JobSet's
    assert fields(conv)["spec.tfReplicaSpecs.Worker.restartPolicy"][0] == KEPT


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


def test_pytorch_elastic_policy_runs_on_fixed_nodes_on_torch_distributed() -> None:
    """pytorch envvar.go setPodEnv (v1.7+): without a Master v1 set no MASTER_ADDR/RANK, only
    PYTHONUNBUFFERED=1 and elastic.go's rendezvous: PET_RDZV_ENDPOINT = worker 0 (here node 0) at
    the Worker's pytorchjob-port (23456 by default), PET_RDZV_BACKEND, PET_MAX_RESTARTS. PET_NNODES
    (v1: MIN:MAX) is the torch policy's node count, reserved for it."""
    conv = one(ELASTIC)
    assert conv.runtime is None and conv.runtime_name == "torch-distributed"
    spec = conv.trainjob["spec"]
    assert spec["trainer"] == {
        "numNodes": 2,
        "numProcPerNode": 4,
        "image": "torch:1",
        "command": ["torchrun", "train.py"],
        "env": [
            {"name": "LR", "value": "0.1"},
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "PET_RDZV_ENDPOINT", "value": "elastic-node-0-0.elastic:23456"},
            {"name": "PET_RDZV_BACKEND", "value": "c10d"},
            {"name": "PET_MAX_RESTARTS", "value": "10"},
        ],
        "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}},
    }
    patch = spec["runtimePatches"][0]
    assert patch["manager"] == "ktrain.io/convert"
    pod = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod == {
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
        "containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
    }
    f = fields(conv)
    for key in ("rdzvBackend", "maxRestarts"):
        assert f[f"spec.elasticPolicy.{key}"][0] == KEPT
    assert f["spec.elasticPolicy.metrics"][0] == DROPPED
    assert f["spec.elasticPolicy.minReplicas"][0] == APPROXIMATED
    assert f["spec.nprocPerNode"] == (KEPT, "TrainJob spec.trainer.numProcPerNode (PET_NPROC_PER_NODE), WORLD_SIZE")


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


def test_full_run_policy() -> None:
    """runPolicy of kubeflow.org/v1 RunPolicy; MASTER_ADDR/WORLD_SIZE/RANK as pytorch envvar.go
    sets them when a Master exists (rank = index, Master first; port pytorchjob-port default 23456).
    OnFailure (PyTorch's default) restarts up to runPolicy.backoffLimit (common/job.go
    PastBackoffLimit); a Volcano queue makes the pods name the volcano scheduler (common/pod.go
    createNewPod, gang scheduling); the Kueue queue label reaches the JobSet."""
    conv = one(FULL_RUN_POLICY)
    assert conv.runtime is not None  # backoffLimit and gang scheduling need a runtime
    spec = conv.trainjob["spec"]
    assert conv.trainjob["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "q"}
    assert spec["activeDeadlineSeconds"] == 3600 and spec["suspend"] is True
    assert spec["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert spec["runtimePatches"] == [
        {
            "manager": "ktrain.io/convert",
            "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "q"}}}},
        }
    ]
    rt = conv.runtime["spec"]
    assert "torch" not in rt["mlPolicy"]  # with a Master, v1's PET_* values, not the torch policy's
    assert rt["podGroupPolicy"] == {"volcano": {}}
    assert rt["template"]["metadata"] == {"annotations": {"scheduling.volcano.sh/queue-name": "research"}}
    (node,) = rt["template"]["spec"]["replicatedJobs"]
    assert node["template"]["spec"]["backoffLimit"] == 3
    pod = node["template"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "high" and pod["schedulerName"] == "volcano"
    assert pod["restartPolicy"] == "OnFailure"
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == "rp-node-0-0.rp" and env["MASTER_PORT"] == "23456" and env["WORLD_SIZE"] == "3"
    assert env["PYTHONUNBUFFERED"] == "1" and env["PET_NNODES"] == "3" and env["PET_MASTER_PORT"] == "23456"
    # node 0 is the Master: the node Job succeeds with its pod 0, as v1's job with the Master
    assert node["template"]["spec"]["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    f = fields(conv)
    assert f["spec.runPolicy.cleanPodPolicy"][0] == DROPPED
    assert f["spec.runPolicy.ttlSecondsAfterFinished"][0] == DROPPED
    assert f["spec.runPolicy.backoffLimit"][0] == APPROXIMATED
    assert f["spec.runPolicy.schedulingPolicy.minAvailable"][0] == APPROXIMATED
    assert f["spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds"][0] == DROPPED  # Volcano has none


def test_kind_list_converts_every_item() -> None:
    items = [yaml.safe_load(ELASTIC), yaml.safe_load(TF_FULL)]
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}})
    convs = convert_text(text)
    assert [(c.kind, c.name, c.base) for c in convs] == [
        ("PyTorchJob", "elastic", ("items", 0)),
        ("TFJob", "tf", ("items", 1)),
    ]


def test_multi_document_file_and_render_refuses_two_jobs(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(ELASTIC + "---\n" + TF_FULL)
    assert len(convert_text(path.read_text())) == 2
    with pytest.raises(InputError, match="more than one job") as exc:
        render_request(RenderRequest(file=str(path)), RuntimeRegistry())
    assert exc.value.line == ELASTIC.count("\n") + 2


def test_master_with_different_args_on_node_0() -> None:
    """Master and Worker differing only in their command: one node step whose pod 0 runs the
    Master's command (v1's rank 0 is master-0, pytorch envvar.go)."""
    job = yaml.safe_load(ELASTIC)
    del job["spec"]["elasticPolicy"], job["spec"]["nprocPerNode"]
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
    master = copy.deepcopy(worker)
    master["replicas"] = 1
    master["template"]["spec"]["containers"][0]["command"] = ["python", "master.py", "--save"]
    job["spec"]["pytorchReplicaSpecs"]["Master"] = master
    conv = one(yaml.safe_dump(job))
    trainer = conv.trainjob["spec"]["trainer"]
    assert trainer["numNodes"] == 3
    assert trainer["command"][3:] == ["ktrain-role", "3", "python", "master.py", "--save", "torchrun", "train.py"]
    import subprocess

    for index, expected in ((0, b"python|master.py|--save|"), (2, b"torchrun|train.py|")):
        script = [*trainer["command"][:4], "5", "printf", "%s|", "python", "master.py", "--save"]
        script += ["printf", "%s|", "torchrun", "train.py"]
        got = subprocess.run(script, env={"PATH": "/usr/bin:/bin", "KTRAIN_POD_INDEX": str(index)}, capture_output=True)
        assert got.stdout == expected


# --------------------------------------------------------------------------- the report covers every field


POD = {"containers": [{"name": "{c}", "image": "img:1", "command": ["run"]}]}


def _full_job(kind: str, api: str) -> dict[str, Any]:
    info = kinds.KINDS[kind]
    spec: dict[str, Any] = {}
    roles = {
        "PyTorchJob": ["Master", "Worker"],
        "TFJob": ["Chief", "PS", "Worker", "Evaluator"],
        "MPIJob": ["Launcher", "Worker"],
        "XGBoostJob": ["Master", "Worker"],
        "JAXJob": ["Worker"],
        "PaddleJob": ["Master", "Worker"],
        "MXJob": ["Scheduler", "Server", "Worker"],
    }[kind]
    pod = json.loads(json.dumps(POD).replace("{c}", info.container))
    pod["containers"][0].update({"env": [{"name": "A", "value": "1"}], "resources": {"limits": {"cpu": "1"}}})
    pod["nodeSelector"] = {"pool": "a"}
    spec[info.replica_key] = {
        r: {
            "replicas": 1 if r in ("Master", "Chief", "Launcher", "Scheduler") else 2,
            "restartPolicy": "OnFailure",
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": copy.deepcopy(pod)},
        }
        for r in roles
    }
    spec["runPolicy"] = {
        "cleanPodPolicy": "None",
        "ttlSecondsAfterFinished": 1,
        "activeDeadlineSeconds": 2,
        "backoffLimit": 3,
        "suspend": False,
        "managedBy": "kubeflow.org/training-operator",
        "schedulingPolicy": {
            "minAvailable": 1,
            "queue": "q",
            "minResources": {"cpu": "1"},
            "priorityClass": "p",
            "scheduleTimeoutSeconds": 5,
        },
    }
    extra = {
        "PyTorchJob": {
            "nprocPerNode": "2",
            "elasticPolicy": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "rdzvBackend": "c10d",
                "rdzvPort": 1,
                "rdzvHost": "h",
                "rdzvId": "i",
                "rdzvConf": [],
                "standalone": False,
                "nProcPerNode": 2,
                "maxRestarts": 1,
                "metrics": [],
            },
        },
        "TFJob": {"successPolicy": "AllWorkers", "enableDynamicWorker": True},
        "PaddleJob": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": 2, "maxRestarts": 1, "metrics": []}},
        "MXJob": {"jobMode": "MXTrain"},
        "MPIJob": {
            "slotsPerWorker": 2,
            "runLauncherAsWorker": True,
            "sshAuthMountPath": "/home/u/.ssh",
            "launcherCreationPolicy": "WaitForWorkersReady",
            "mpiImplementation": "OpenMPI",
        }
        if api != kinds.V1
        else {"slotsPerWorker": 2, "cleanPodPolicy": "None", "mainContainer": "mpi"},
    }.get(kind, {})
    spec.update(extra)
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "full", "namespace": "ns", "labels": {"x": "y"}, "annotations": {"z": "w"}, "uid": "u"},
        "spec": spec,
        "status": {"conditions": []},
    }


CASES = [(k, a) for k, info in kinds.KINDS.items() for a in info.api_versions]


@pytest.mark.parametrize(("kind", "api"), CASES, ids=[f"{k}-{a.split('/')[1]}" for k, a in CASES])
def test_every_v1_field_set_appears_in_the_report(kind: str, api: str) -> None:
    """Every field of the v1 API types (kinds.py: spec, runPolicy, schedulingPolicy, elasticPolicy,
    replica specs) that a job sets gets a report row; and the result renders."""
    job = _full_job(kind, api)
    assert set(job["spec"]) - {kinds.KINDS[kind].replica_key} | {kinds.KINDS[kind].replica_key} == set(
        kinds.spec_fields(kinds.KINDS[kind], api)
    )
    conv = one(yaml.safe_dump(job))
    rows = [r.field for r in conv.rows]

    def covered(path: str) -> bool:
        return any(r == path or r.startswith(path + ".") or r.startswith(path + "[") for r in rows)

    expected = ["apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.labels"]
    expected += ["metadata.annotations", "metadata.uid", "status"]
    for key, value in job["spec"].items():
        if key == kinds.KINDS[kind].replica_key:
            for role, rspec in value.items():
                for rkey in rspec:
                    expected.append(f"spec.{key}.{role}.{rkey}")
        elif isinstance(value, dict) and value:
            for sub, subvalue in value.items():
                if isinstance(subvalue, dict) and subvalue and sub == "schedulingPolicy":
                    expected += [f"spec.{key}.{sub}.{s}" for s in subvalue]
                else:
                    expected.append(f"spec.{key}.{sub}")
        else:
            expected.append(f"spec.{key}")
    missing = [p for p in expected if not covered(p)]
    assert not missing, missing
    for r in conv.rows:
        assert r.status in (KEPT, APPROXIMATED, DROPPED)
        if r.status != KEPT:
            assert r.note, r


# --------------------------------------------------------------------------- errors


def test_unknown_kind_lists_the_supported_ones() -> None:
    with pytest.raises(InputError) as exc:
        one("apiVersion: kubeflow.org/v1\nkind: CaffeJob\nmetadata: {name: x}\nspec: {}\n")
    assert "unsupported kind 'CaffeJob'" in exc.value.message and "PyTorchJob (kubeflow.org/v1)" in exc.value.message
    assert (exc.value.line, exc.value.column) == (2, 7)


def test_unknown_api_version() -> None:
    with pytest.raises(InputError, match=re.escape("unsupported apiVersion 'kubeflow.org/v1beta2' for TFJob")) as exc:
        one(TF_FULL.replace("kubeflow.org/v1", "kubeflow.org/v1beta2"))
    assert exc.value.line == 1


def test_wrong_type_points_at_the_field() -> None:
    text = TF_FULL.replace("replicas: 2\n", "replicas: two\n")
    with pytest.raises(InputError, match=r"spec.tfReplicaSpecs.PS.replicas must be an integer, got str 'two'") as exc:
        one(text, file="tf.yaml")
    assert (exc.value.file, exc.value.line, exc.value.column) == ("tf.yaml", 13, 17)


def test_unknown_field_suggests_the_right_one() -> None:
    with pytest.raises(InputError, match=re.escape('unknown field "spec.runPolicy.backofLimit"')) as exc:
        one(FULL_RUN_POLICY.replace("backoffLimit", "backofLimit"))
    assert exc.value.hint == "did you mean 'backoffLimit'?" and exc.value.line == 9


def test_two_containers_and_none_named_as_expected_is_an_error_naming_the_container() -> None:
    text = ELASTIC.replace(
        "          - name: pytorch\n", "          - name: sidecar\n            image: s:1\n          - name: trainer\n"
    )
    with pytest.raises(InputError, match="none is named 'pytorch'") as exc:
        one(text)
    assert exc.value.hint == "name the framework container 'pytorch'"
    assert exc.value.line == 19  # the containers list


def test_two_containers_one_named_pytorch_needs_a_runtime_for_the_sidecar() -> None:
    text = ELASTIC.replace(
        "          - name: pytorch\n", "          - name: sidecar\n            image: s:1\n          - name: pytorch\n"
    )
    conv = one(text)
    assert conv.runtime is not None and "sidecar containers need a runtime" in conv.reason
    containers = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert [c["name"] for c in containers["spec"]["containers"]] == ["sidecar", "node"]


def test_onto_an_existing_runtime_reports_what_it_cannot_carry() -> None:
    conv = one(FULL_RUN_POLICY, runtime="my-runtime")
    assert conv.runtime is None and conv.trainjob["spec"]["runtimeRef"] == {"name": "my-runtime"}
    f = fields(conv)
    assert f["spec.runPolicy.backoffLimit"][0] == DROPPED
    assert "my-runtime decides" in next(r.note for r in conv.rows if r.field == "spec.runPolicy.backoffLimit")


def test_validate_accepts_a_converted_job(tmp_path: Path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TF_FULL)
    outcome = validate_request(RenderRequest(file=str(path)), RuntimeRegistry())
    assert outcome.job.name == "tf"


def test_a_render_error_in_a_converted_job_points_into_the_v1_file(tmp_path: Path) -> None:
    from ktrain.errors import ValidationFailedError

    path = tmp_path / "bad.yaml"
    path.write_text(ELASTIC.replace("limits: {nvidia.com/gpu: 4}", "limits: {cpu: lots}"))
    with pytest.raises(ValidationFailedError) as exc:
        render_request(RenderRequest(file=str(path)), RuntimeRegistry())
    located = list(exc.value.locations.values())
    assert located and located[0].file == str(path) and (located[0].line, located[0].column) == (23, 24)


@pytest.mark.shared
@pytest.mark.parametrize("name", ["tensorflow-distributed", "paddle-distributed", "mxnet-distributed"])
def test_bundled_v1_framework_runtimes_pass_the_real_crd_schema(name: str) -> None:
    """No new mlPolicy fields: the real Trainer CRD accepts these runtimes as they are."""
    entry = RuntimeRegistry().get(name)
    assert entry.document is not None
    crd_validate(entry.document.data)
    assert set(entry.document.data["spec"]["mlPolicy"]) == {"numNodes", "torch"}


def test_a_generated_runtime_points_back_at_the_v1_pod_templates() -> None:
    from ktrain.service.conversion import converted_runtime_entry

    conv = one(TF_FULL, file="tf.yaml")
    entry = converted_runtime_entry(conv)
    assert entry is not None and entry.document is not None
    rjobs = [r["name"] for r in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]]
    k = rjobs.index("ps")
    image = ("spec", "template", "spec", "replicatedJobs", k, "template", "spec", "template", "spec", "containers", 0)
    # the PS container's image is on line 18 of TF_FULL, its value at column 20
    assert entry.document.file == "tf.yaml"
    assert entry.document.locate((*image, "image")) == (18, 20)
