"""ktrain/convert/policies.py: runPolicy, schedulingPolicy and each kind's own spec fields (retries,
deadlines, gang scheduling, elastic fields)."""

from __future__ import annotations

from pathlib import Path

import pytest
from v1convert import FULL_RUN_POLICY, fields, kind_of, one, pytorch, rendered, rows

from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.errors import InputError


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


def test_run_policy_fills_the_trainjob_spec_and_the_generated_runtimes_settings() -> None:
    from ktrain.convert.common import Ctx, Settings
    from ktrain.convert.kinds import KINDS
    from ktrain.convert.policies import run_policy
    from ktrain.inputs.documents import load_documents

    (doc,) = load_documents(FULL_RUN_POLICY, "rp.yaml")
    ctx, gen, tj_spec = Ctx(doc, ()), Settings(), {}
    run_policy(ctx, KINDS["PyTorchJob"], doc.data["spec"], tj_spec, gen)
    assert tj_spec["activeDeadlineSeconds"] == 3600 and tj_spec["suspend"] is True
    assert gen.backoff_limit == 3 and gen.queue == "research" and gen.priority_class == "high"
    assert {r.field for r in ctx.rows + gen.rows} >= {"spec.runPolicy.cleanPodPolicy", "spec.runPolicy.backoffLimit"}
    (bad,) = load_documents(FULL_RUN_POLICY.replace("backoffLimit: 3", "backoffLimit: three"), "rp.yaml")
    with pytest.raises(InputError, match=r"spec\.runPolicy\.backoffLimit must be an integer") as exc:
        run_policy(Ctx(bad, ()), KINDS["PyTorchJob"], bad.data["spec"], {}, Settings())
    assert (exc.value.file, exc.value.line) == ("rp.yaml", 9)
