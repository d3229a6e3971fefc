"""Shapes of real v1 manifests (tutorials, schedulers' docs, vendors' training repositories) that ktrain
converted with a changed meaning, or refused where v1 accepted them. Each case is a minimal synthetic
job with the same shape; the comment names the v1 code the expectation comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.convert import convert_documents
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.errors import InputError
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest


def one(job: dict[str, Any]) -> Any:
    (conv,) = convert_documents(load_documents(yaml.safe_dump(job), "job.yaml"))
    return conv


def rendered(job: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return render_request(RenderRequest(file=str(path)), RuntimeRegistry()).result.objects


def rows(conv: Any) -> dict[str, tuple[str, str, str]]:
    return {r.field: (r.status, r.target, r.note) for r in conv.rows}


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


# --------------------------------------------------------------------------- replica type case


def test_replica_types_in_any_case_are_renamed_as_v1s_defaulter_did(tmp_path: Path) -> None:
    """pkg/apis/kubeflow.org/v1 defaulting_utils.go setTypeNameToCamelCase (from SetDefaults_TFJob):
    the webhook stored `Ps` as `PS` before the controller read the job, so a TFJob written with `Ps`
    ran a parameter server listed as "ps" in TF_CONFIG. ktrain refused the job."""
    job = tfjob({"Ps": replica(1), "worker": replica(2)})
    conv = one(job)
    table = rows(conv)
    assert table["spec.tfReplicaSpecs.Ps"][0] == KEPT and "'PS'" in table["spec.tfReplicaSpecs.Ps"][2]
    assert table["spec.tfReplicaSpecs.worker"][0] == KEPT
    objects = rendered(job, tmp_path)
    tf_config = env_of(objects, "ps")["TF_CONFIG"]
    assert '"ps":["$(KTRAIN_JOBSET)-ps-0-0.$(KTRAIN_JOBSET):2222"]' in tf_config
    assert '"task":{"type":"ps"' in tf_config
    assert '"worker":[' in env_of(objects, "node")["TF_CONFIG"]


def test_two_spellings_of_one_replica_type_are_refused() -> None:
    """setTypeNameToCamelCase renames one of them and the other overwrites it: v1 silently lost a
    replica spec. ktrain says so instead of guessing which one counts."""
    with pytest.raises(InputError, match="same type"):
        one(tfjob({"PS": replica(1), "ps": replica(2), "Worker": replica(1)}))


def test_mpijob_replica_types_keep_their_case() -> None:
    """SetDefaults_MPIJob has no camel-case step (and mpi-operator v2beta1 has no defaulter for it):
    a lower-case `worker` was never a Worker, so it stays refused."""
    job = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "m"},
        "spec": {"mpiReplicaSpecs": {"Launcher": replica(1), "worker": replica(2)}},
    }
    with pytest.raises(InputError, match="unknown MPIJob replica type 'worker'"):
        one(job)


# --------------------------------------------------------------------------- the template's restartPolicy


def test_a_template_restart_policy_v1_overwrote_is_reported_dropped() -> None:
    """kubeflow/common pod.go setRestartPolicy: the controller wrote the replica's restartPolicy
    (a TFJob's default Never) over the template's `restartPolicy: OnFailure`. The pods get Never;
    the report must not call the template's OnFailure kept."""
    job = tfjob({"Chief": replica(1, restartPolicy="OnFailure"), "Worker": replica(1, restartPolicy="Never")})
    conv = one(job)
    table = rows(conv)
    status, _, note = table["spec.tfReplicaSpecs.Chief.template.spec.restartPolicy"]
    assert status == DROPPED and "Never" in note
    assert table["spec.tfReplicaSpecs.Worker.template.spec.restartPolicy"][0] == KEPT
    for rjob in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        assert rjob["template"]["spec"]["template"]["spec"]["restartPolicy"] == "Never"


# --------------------------------------------------------------------------- KAI's older queue label


def test_kai_legacy_queue_label_reaches_the_jobset(tmp_path: Path) -> None:
    """KAI-Scheduler's pod-grouper read the queue from the top owner's `runai/queue` label before it
    was renamed `kai.scheduler/queue` (its docs' elastic PyTorchJob sets only that one). Left on the
    TrainJob alone, the JobSet (the top owner with --target jobset) had no queue."""
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "el", "labels": {"runai/queue": "test", "team": "a"}},
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {
                            "schedulerName": "kai-scheduler",
                            "containers": [{"name": "pytorch", "image": "t:1", "command": ["torchrun", "x.py"]}],
                        }
                    },
                }
            }
        },
    }
    jobset = next(o for o in rendered(job, tmp_path) if o["kind"] == "JobSet")
    assert jobset["metadata"]["labels"] == {"runai/queue": "test"}
    assert rows(one(job))["metadata.labels.runai/queue"][0] == KEPT


# --------------------------------------------------------------------------- PyTorch's init container


def pytorch_master_worker(workers: int) -> dict[str, Any]:
    cont = {"name": "pytorch", "image": "t:1", "command": ["python", "mnist.py"]}
    specs: dict[str, Any] = {
        "Master": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [cont]}}},
    }
    if workers:
        specs["Worker"] = {"replicas": workers, "restartPolicy": "Never", "template": {"spec": {"containers": [cont]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {"pytorchReplicaSpecs": specs},
    }


def test_workers_no_longer_wait_for_the_master_and_the_report_says_so() -> None:
    """pytorch/initcontainer.go setInitContainer: with a Master, every Worker pod began with an init
    container (init-pytorch) looping on nslookup of the Master's Service; JobSet starts all pods
    together, so a program that looks MASTER_ADDR up once can fail where it ran under v1."""

    def waits(conv: Any) -> list[Any]:
        return [r for r in conv.rows if "init-pytorch" in r.note]

    (row,) = waits(one(pytorch_master_worker(3)))
    assert row.field == "spec.pytorchReplicaSpecs.Worker" and row.status == APPROXIMATED
    assert waits(one(pytorch_master_worker(0))) == []


# --------------------------------------------------------------------------- v1 MPIJob defaults


def test_v1_mpijob_worker_without_replicas_has_none(tmp_path: Path) -> None:
    """training-operator pkg/apis/kubeflow.org/v1 mpi_defaults.go SetDefaults_MPIJob
    (setDefaultReplicas(Worker, 0)) and mpi-operator v2beta1 setDefaultsTypeWorker (Replicas 0): an
    MPIJob whose Worker names no replicas ran its launcher alone; ktrain ran one worker (the default
    of every other replica type)."""
    cont = {"name": "mpi", "image": "i:1", "command": ["mpirun", "x"]}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "m"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {"template": {"spec": {"containers": [cont]}}},
                "Worker": {"template": {"spec": {"containers": [{"name": "mpi", "image": "i:1"}]}}},
            }
        },
    }
    for api in ("kubeflow.org/v1", "kubeflow.org/v2beta1"):
        job["apiVersion"] = api
        conv = one(job)
        steps = [r["name"] for r in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]]
        assert steps == ["launcher"], api
        assert rows(conv)["spec.mpiReplicaSpecs.Worker.replicas"][0] == DROPPED
