"""v1 jobs keep their meaning (issue #26): queue labels, distinct ranks, retries, pull policy,
the report, pruned templates. Each golden case names the v1 (or Kubernetes) code it was checked
against by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import UPSTREAM

from ktrain.convert import convert_documents
from ktrain.convert.common import default_pull_policy
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.errors import InputError
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest


def one(job: dict[str, Any]) -> Any:
    (conv,) = convert_documents(load_documents(yaml.safe_dump(job), "job.yaml"))
    return conv


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


# --------------------------------------------------------------------------- 1. queues


QUEUED = {"kueue.x-k8s.io/queue-name": "team-q", "kueue.x-k8s.io/priority-class": "high"}


@pytest.mark.parametrize("restart", [None, "Never"], ids=["bundled", "generated"])
def test_kueue_labels_reach_the_jobset_and_suspend_is_kept(restart: str | None, tmp_path: Path) -> None:
    """Kueue's guide for v1 jobs ("Run a Kubeflow job", kueue.sigs.k8s.io): the queue and priority
    labels on the job, runPolicy.suspend true. With --target jobset the JobSet is what Kueue
    admits, so it carries both labels (ENGINE.md §4.1: labels reach the JobSet through a runtime
    patch) and stays suspended until Kueue resumes it."""
    job = pytorch(QUEUED, {"suspend": True}, restart)
    objects = rendered(job, tmp_path)
    jobset = kind_of(objects, "JobSet")
    assert jobset["metadata"]["labels"] == QUEUED
    assert jobset["spec"]["suspend"] is True
    conv = one(job)
    assert conv.trainjob["metadata"]["labels"] == QUEUED  # --target trainjob: Kueue reads the TrainJob
    for key in QUEUED:
        assert rows(conv)[f"metadata.labels.{key}"][0] == KEPT


def test_kai_queue_label_reaches_the_jobset(tmp_path: Path) -> None:
    """KAI's pod-grouper reads the queue from the top owner's labels (kai-scheduler
    pkg/podgrouper): the JobSet with --target jobset."""
    objects = rendered(pytorch({"kai.scheduler/queue": "research", "team": "a"}), tmp_path)
    assert kind_of(objects, "JobSet")["metadata"]["labels"] == {"kai.scheduler/queue": "research"}


def test_volcano_queue_becomes_the_podgroup_queue_and_pods_name_volcano(tmp_path: Path) -> None:
    """training-operator common/pod.go createNewPod: with gang scheduling, pods that name no
    scheduler get the gang scheduler's name (volcano); common/job.go: the PodGroup's queue is
    schedulingPolicy.queue. A pod that names another scheduler keeps it (v1 only warned)."""
    job = pytorch(run_policy={"schedulingPolicy": {"queue": "research", "minAvailable": 2}})
    objects = rendered(job, tmp_path)
    assert kind_of(objects, "PodGroup")["spec"]["queue"] == "research"
    for rjob in kind_of(objects, "JobSet")["spec"]["replicatedJobs"]:
        assert rjob["template"]["spec"]["template"]["spec"]["schedulerName"] == "volcano"
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] = "kai-scheduler"
    conv = one(job)
    pod = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["schedulerName"] == "kai-scheduler"
    status, _, note = rows(conv)["spec.pytorchReplicaSpecs.Worker.template.spec.schedulerName"]
    assert status == APPROXIMATED and "only pods that name volcano" in note


# --------------------------------------------------------------------------- 2. ranks


def test_xgboost_master_and_worker_templates_that_differ_keep_v1_ranks() -> None:
    """xgboost/xgboost.go SetPodEnv: RANK = index + Master replicas for workers, MASTER_ADDR =
    master 0, WORKER_ADDRS = worker 0 .. total-2, PYTHONUNBUFFERED "1" (v1.7+, #1860). The Master runs as its
    own step, each Worker as its own Job of `node`: the Job's global index is the rank."""
    job: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": "xgb"},
        "spec": {
            "xgbReplicaSpecs": {
                t: {
                    "replicas": n,
                    "template": {"spec": {"containers": [{"name": "xgboost", "image": "x:1", "args": [a]}]}},
                }
                for t, n, a in (("Master", 1, "--tracker"), ("Worker", 2, "--train"))
            }
        },
    }
    conv = one(job)
    master, node = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert (master["name"], master.get("replicas", 1), node["name"], node["replicas"]) == ("master", 1, "node", 2)
    assert node["template"]["spec"]["parallelism"] == 1
    env = {e["name"]: e for e in node["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['jobset.sigs.k8s.io/job-global-index']"
    assert env["MASTER_ADDR"]["value"] == "xgb-master-0-0.xgb"
    assert env["WORKER_ADDRS"]["value"] == "xgb-node-0-0.xgb,xgb-node-1-0.xgb"
    assert env["PYTHONUNBUFFERED"]["value"] == "1"
    assert conv.runtime["spec"]["template"]["spec"]["successPolicy"]["targetReplicatedJobs"] == ["master"]
    assert not any(r.status == APPROXIMATED and "RANK" in r.note for r in conv.rows)


def test_more_than_one_master_is_refused_as_v1_did() -> None:
    """pkg/apis/kubeflow.org/v1 pytorch_validation.go: "There must be only 1 master replica"."""
    job = pytorch()
    job["spec"]["pytorchReplicaSpecs"]["Master"] = {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "pytorch", "image": "torch:2"}]}},
    }
    with pytest.raises(InputError, match="there must be only 1 master replica"):
        one(job)


# --------------------------------------------------------------------------- 3. retries


@pytest.mark.parametrize(
    ("restart", "limit", "job_limit", "failure_policy"),
    [
        ("Never", 5, 0, False),  # a failed Never pod fails a v1 job whatever backoffLimit says
        ("OnFailure", 3, 3, False),
        ("OnFailure", None, 2147483647, False),  # v1: no limit (PastBackoffLimit needs backoffLimit)
        ("ExitCode", None, 2147483647, True),
    ],
)
def test_retries_keep_v1_semantics(restart: str, limit: int | None, job_limit: int, failure_policy: bool) -> None:
    """training-operator common/job.go ReconcileJobs + PastBackoffLimit (runPolicy.backoffLimit
    counts restarts of OnFailure pods), common/pod.go ReconcilePods (ExitCode: codes >= 128 are
    retried, pkg/util/train IsRetryableExitCode; others fail the job), the frameworks'
    UpdateJobStatus (a failed Never pod fails the job)."""
    run_policy = {"backoffLimit": limit} if limit is not None else None
    job = pytorch(run_policy=run_policy, restart=restart)
    if restart == "OnFailure" and limit is None:
        job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["hostNetwork"] = True  # needs a runtime
    conv = one(job)
    (rjob,) = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]
    spec = rjob["template"]["spec"]
    assert spec["backoffLimit"] == job_limit
    assert spec["template"]["spec"]["restartPolicy"] == ("OnFailure" if restart == "OnFailure" else "Never")
    if failure_policy:
        (rule,) = spec["podFailurePolicy"]["rules"]
        assert rule["action"] == "FailJob" and rule["onExitCodes"]["operator"] == "NotIn"
        assert rule["onExitCodes"]["values"] == list(range(128, 256)) and rule["onExitCodes"]["containerName"] == "node"
    else:
        assert "podFailurePolicy" not in spec


def test_bundled_runtime_says_it_caps_restarts() -> None:
    """OnFailure on torch-distributed: the bundled Job has Kubernetes' default backoffLimit 6
    where v1 restarted without limit; the report says so."""
    conv = one(pytorch(restart="OnFailure"))
    assert conv.runtime is None
    status, target, note = rows(conv)["spec.pytorchReplicaSpecs.Worker.restartPolicy"]
    assert status == APPROXIMATED and "backoffLimit 6" in target and "without limit" in note


# --------------------------------------------------------------------------- 4. pull policy


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("torch:latest", "Always"),
        ("torch", "Always"),
        ("registry:5000/team/torch", "Always"),
        ("torch:2.1", "IfNotPresent"),
        ("registry:5000/team/torch:2.1", "IfNotPresent"),
        ("torch@sha256:" + "a" * 64, "IfNotPresent"),
        ("torch:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_default_pull_policy_is_kubernetes_defaulting(image: str, policy: str) -> None:
    """k8s pkg/apis/core/v1/defaults.go SetDefaults_Container: Always when the tag is latest or
    absent without a digest (pkg/util/parsers ParseImageName), else IfNotPresent."""
    assert default_pull_policy(image) == policy


def test_if_not_present_on_latest_is_kept() -> None:
    """The issue's case: IfNotPresent on `:latest` (a preloaded image) differs from the default
    (Always), so a runtime that keeps it is generated; on a tagged image it is the default."""
    cont = {"name": "pytorch", "image": "torch:latest", "imagePullPolicy": "IfNotPresent", "command": ["x"]}
    conv = one(pytorch(container=cont))
    assert conv.runtime is not None and "imagePullPolicy IfNotPresent needs a runtime" in conv.reason
    pod = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    conv = one(pytorch(container={**cont, "image": "torch:2"}))
    assert conv.runtime is None
    conv = one(pytorch(container={**cont, "imagePullPolicy": "Always"}))  # Always on :latest: the default
    assert conv.runtime is None and rows(conv)[
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].imagePullPolicy"
    ][0] == (KEPT)


# --------------------------------------------------------------------------- 5. the report


def test_mpi_v1_worker_without_command_and_launcher_host_names() -> None:
    """training-operator mpi/mpijob_controller.go newWorker: no command -> `sleep 365d` (ranks ran
    through kubectl exec); v2 reaches workers over SSH, so they run sshd (reported). mpi-operator
    v2beta1 workers live at `<job>-worker-<i>.<job>` (older releases `.<job>-worker`): a launcher
    arg naming them is rewritten to JobSet's names; a worker the job does not have is flagged."""
    job: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "hv"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "mpi",
                                    "image": "h:1",
                                    "command": ["mpirun", "-H", "hv-worker-0.hv-worker:1,hv-worker-7:1", "x"],
                                }
                            ]
                        }
                    }
                },
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "mpi", "image": "h:1"}]}}},
            }
        },
    }
    conv = one(job)
    rjobs = {r["name"]: r for r in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]}
    worker = rjobs["node"]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert worker["command"] == ["/usr/sbin/sshd", "-De"]
    launcher = rjobs["launcher"]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert launcher["command"][2] == "hv-node-0-0.hv:1,hv-worker-7:1"
    r = rows(conv)
    assert r["spec.mpiReplicaSpecs.Worker.template.spec.containers[0].command"][0] == APPROXIMATED
    assert "sleep 365d" in r["spec.mpiReplicaSpecs.Worker.template.spec.containers[0].command"][2]
    arg = "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[2]"
    notes = [row.note for row in conv.rows if row.field == arg]
    assert any("hv-worker-0.hv-worker is hv-node-0-0.hv" in n for n in notes)
    assert any("hv-worker-7, which this job does not have" in n for n in notes)


def test_success_rules_are_in_the_report() -> None:
    """tensorflow/tfjob_controller.go UpdateJobStatus: without a Chief/Master a TFJob succeeds
    when worker 0 does (a bundled runtime waits for every worker: reported); mxnet
    mxjob_controller.go UpdateJobStatus: an MXJob succeeds when its Scheduler does."""
    tf: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {"containers": [{"name": "tensorflow", "image": "t:1", "command": ["python"]}]}
                    },
                }
            }
        },
    }
    conv = one(tf)
    assert conv.runtime is None
    assert rows(conv)["spec.successPolicy"][0] == APPROXIMATED
    tf["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "Never"
    conv = one(tf)
    (node,) = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert node["template"]["spec"]["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    mx: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MXJob",
        "metadata": {"name": "mx"},
        "spec": {
            "mxReplicaSpecs": {
                t: {"replicas": 1, "template": {"spec": {"containers": [{"name": "mxnet", "image": "m:1"}]}}}
                for t in ("Scheduler", "Server", "Worker")
            }
        },
    }
    conv = one(mx)
    assert conv.runtime["spec"]["template"]["spec"]["successPolicy"]["targetReplicatedJobs"] == ["scheduler"]
    assert rows(conv)["spec.mxReplicaSpecs.Scheduler"][0] == KEPT


def test_elastic_fields_each_say_where_they_went() -> None:
    """pytorch/elastic.go: the rendezvous settings become torchrun's PET_RDZV_*; metrics drove
    an HPA, which v2 has none of."""
    job = pytorch(run_policy=None)
    job["spec"]["elasticPolicy"] = {
        "minReplicas": 1,
        "maxReplicas": 4,
        "rdzvBackend": "etcd",
        "rdzvHost": "etcd.svc",
        "rdzvPort": 2379,
        "rdzvConf": [{"key": "a", "value": "1"}],
        "metrics": [],
    }
    conv = one(job)
    r = rows(conv)
    assert r["spec.elasticPolicy.metrics"][0] == DROPPED
    assert r["spec.elasticPolicy.minReplicas"][0] == APPROXIMATED
    assert r["spec.elasticPolicy.rdzvHost"][:2] == (KEPT, "env PET_RDZV_ENDPOINT")
    env = {e["name"]: e.get("value") for e in conv.trainjob["spec"]["trainer"]["env"]}
    assert env["PET_RDZV_ENDPOINT"] == "etcd.svc:2379" and env["PET_RDZV_BACKEND"] == "etcd"
    assert env["PET_RDZV_CONF"] == "a=1"


# --------------------------------------------------------------------------- 8. pruning


def test_fields_the_api_server_pruned_are_pruned_and_reported(tmp_path: Path) -> None:
    """Upstream's xgboostjob_v1alpha1_rabit_test.yaml puts `apiVersion: v1` and `kind: Pod` in
    its pod templates; the v1 CRD's structural schema pruned them (apiextensions-apiserver
    pruning), and a JobSet carrying them is refused."""
    job = pytorch(restart="Never")
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
    worker["template"] = {"apiVersion": "v1", "kind": "Pod", **worker["template"]}
    worker["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    conv = one(job)
    r = rows(conv)
    for field in ("template.apiVersion", "template.kind", "template.spec.containers[0].imagePullPolicyy"):
        assert r[f"spec.pytorchReplicaSpecs.Worker.{field}"][0] == DROPPED
    template = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert set(template) == {"spec"} and "imagePullPolicyy" not in template["spec"]["containers"][0]


@pytest.mark.shared
def test_the_pod_template_field_table_matches_the_jobset_crd() -> None:
    """convert/podspec.py TYPES against the PodTemplateSpec the JobSet CRD embeds (field for field,
    object for object)."""
    crd_path = UPSTREAM / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
    if not crd_path.is_file():
        pytest.skip("../shared is absent")
    from ktrain.convert.podspec import TYPES

    crd = yaml.load(crd_path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    rjob = schema["properties"]["spec"]["properties"]["replicatedJobs"]["items"]
    template = rjob["properties"]["template"]["properties"]["spec"]["properties"]["template"]
    problems: list[str] = []

    def walk(node: dict[str, Any], type_name: str, where: str) -> None:
        fields = TYPES[type_name]
        props = node.get("properties") or {}
        if set(props) != set(fields):
            problems.append(f"{where} ({type_name}): {sorted(set(props) ^ set(fields))}")
        for key, sub in props.items():
            shape = fields.get(key)
            nested = sub.get("properties") or (sub.get("items") or {}).get("properties")
            if shape is None:
                if key in fields and nested:
                    problems.append(f"{where}.{key}: an object, listed as a leaf")
                continue
            if shape[0] == "obj":
                walk(sub, shape[1], f"{where}.{key}")
            elif shape[0] == "list":
                walk(sub["items"], shape[1], f"{where}.{key}[]")
            else:
                walk(sub["additionalProperties"], shape[1], f"{where}.{key}{{}}")

    walk(template, "PodTemplateSpec", "template")
    assert not problems


# --------------------------------------------------------------------------- 9. nits, and bounds


def test_pythonunbuffered_is_v1_value_and_the_users_own_is_kept() -> None:
    """pytorch/envvar.go since v1.7 (kubeflow/trainer#1860) sets "1"; a value the user set is kept."""
    conv = one(pytorch())
    env = {e["name"]: e.get("value") for e in conv.trainjob["spec"]["trainer"]["env"]}
    assert env["PYTHONUNBUFFERED"] == "1"
    cont = {
        "name": "pytorch",
        "image": "torch:2",
        "command": ["python"],
        "env": [{"name": "PYTHONUNBUFFERED", "value": "0"}],
    }
    conv = one(pytorch(container=cont))
    assert conv.trainjob["spec"]["trainer"]["env"].count({"name": "PYTHONUNBUFFERED", "value": "0"}) == 1
    assert not any(e == {"name": "PYTHONUNBUFFERED", "value": "1"} for e in conv.trainjob["spec"]["trainer"]["env"])
    assert "the user's own PYTHONUNBUFFERED kept" in rows(conv)["spec.pytorchReplicaSpecs"][2]


def test_generate_name_gives_a_name_derived_from_the_spec() -> None:
    job = pytorch()
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "run-"
    a, b = one(job), one(job)
    assert a.name == b.name and a.name.startswith("run-") and len(a.name) == len("run-") + 5
    assert rows(a)["metadata.generateName"][0] == APPROXIMATED


@pytest.mark.parametrize("replicas", [2147483647, 100000])
def test_huge_replica_counts_are_refused_fast(replicas: int) -> None:
    """Issue #25: 2^31-1 XGBoost replicas took 25 s and 270 MB to build a WORKER_ADDRS nobody
    could store; refused before anything is built."""
    job: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": "x"},
        "spec": {
            "xgbReplicaSpecs": {
                t: {"replicas": n, "template": {"spec": {"containers": [{"name": "xgboost", "image": "x:1"}]}}}
                for t, n in (("Master", 1), ("Worker", replicas))
            }
        },
    }
    with pytest.raises(InputError, match="more than the 1572864 bytes"):
        one(job)
    job["spec"]["xgbReplicaSpecs"]["Worker"]["replicas"] = 2**31
    with pytest.raises(InputError, match="at most 2147483647"):
        one(job)
