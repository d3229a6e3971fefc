"""ktrain/convert/bundled.py: a v1 job onto a bundled runtime or `--runtime`, and what blocks it."""

from __future__ import annotations

from typing import Any

from v1convert import ELASTIC, FULL_RUN_POLICY, fields, one, pytorch, rows

from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT


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


def test_bundled_runtime_says_it_caps_restarts() -> None:
    """OnFailure on torch-distributed: the bundled Job has Kubernetes' default backoffLimit 6
    where v1 restarted without limit; the report says so."""
    conv = one(pytorch(restart="OnFailure"))
    assert conv.runtime is None
    status, target, note = rows(conv)["spec.pytorchReplicaSpecs.Worker.restartPolicy"]
    assert status == APPROXIMATED and "backoffLimit 6" in target and "without limit" in note


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


def test_add_patch_merges_into_the_one_conversion_patch_and_leaves_others_alone() -> None:
    from ktrain.convert.bundled import add_patch

    theirs = {"manager": "someone.else", "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"a": "1"}}}}}
    spec: dict[str, Any] = {"runtimePatches": [theirs]}
    add_patch(spec, {"template": {"metadata": {"labels": {"q": "team"}}}})
    add_patch(spec, {"template": {"metadata": {"labels": {"p": "high"}, "annotations": {"x": "y"}}}})
    assert spec["runtimePatches"] == [
        theirs,
        {
            "manager": "ktrain.io/convert",
            "trainingRuntimeSpec": {
                "template": {"metadata": {"labels": {"q": "team", "p": "high"}, "annotations": {"x": "y"}}}
            },
        },
    ]
