"""ktrain/convert/layout.py: where each v1 replica runs under JobSet, keeping v1's ranks."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from v1convert import ELASTIC, one

from ktrain.convert.report import APPROXIMATED


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


def _roles(job: dict[str, Any]) -> tuple[Any, list[Any]]:
    from ktrain.convert.common import Ctx
    from ktrain.convert.kinds import KINDS, V1
    from ktrain.convert.roles import read_roles
    from ktrain.inputs.documents import load_documents

    (doc,) = load_documents(yaml.safe_dump(job), "job.yaml")
    info = KINDS[job["kind"]]
    return info, read_roles(Ctx(doc, ()), info, job["spec"], V1)


def test_plan_puts_a_master_differing_only_in_its_command_on_node_0_else_in_its_own_step() -> None:
    from ktrain.convert.layout import plan

    job = yaml.safe_load(ELASTIC)
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
    master = copy.deepcopy(worker)
    master["replicas"] = 1
    master["template"]["spec"]["containers"][0]["command"] = ["python", "master.py"]
    job["spec"]["pytorchReplicaSpecs"]["Master"] = master
    merged = plan(*_roles(job))
    assert merged.merged and merged.trainer.type == "Worker"
    assert (merged.layout["Master"].host("j", 0), merged.layout["Worker"].host("j", 0)) == (
        "j-node-0-0.j",
        "j-node-0-1.j",
    )  # v1's ranks: the Master is rank 0, worker 0 rank 1
    master["template"]["spec"]["nodeSelector"] = {"pool": "cpu"}
    separate = plan(*_roles(job))
    assert separate.separate and not separate.merged and "differ" in separate.problem
    assert separate.layout["Master"].rjob == "master" and separate.layout["Worker"].per_job
    assert separate.layout["Worker"].host("j", 1) == "j-node-1-0.j"
