"""The generated runtime's retries and processes per node, judged against the v1 operators' code
as `tests/v1pods/model.py` transcribes it (issue #33, causes 1 and 2).

- mpi-operator v2 `pkg/controller/mpi_job_controller.go` newLauncherJob: the launcher Job takes
  runPolicy.backoffLimit, activeDeadlineSeconds and ttlSecondsAfterFinished as written (unset: the
  Job's own default, backoffLimit 6); setRestartPolicy makes ExitCode Never; newWorker and
  getOrCreateWorker: workers are plain pods, restarted in place by the kubelet (OnFailure) or left
  failed (Never).
- training-operator v1.9 `pkg/controller.v1/pytorch/envvar.go` setPodEnv: PET_NPROC_PER_NODE is
  spec.nprocPerNode on every pod, which `pytorch_defaults.go` setDefaultNprocPerNode makes "auto".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from v1convert import TF_FULL, fields, one, rendered, rows
from v1pods.model import mpi_launcher_job, mpi_worker_pod
from v1pods.pods import jobset_pods, seen

from ktrain.convert.report import APPROXIMATED, KEPT


def mpijob(
    run_policy: dict[str, Any] | None = None, launcher: str | None = None, worker: str | None = None
) -> dict[str, Any]:
    def replica(n: int, restart: str | None, command: list[str] | None) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "mpi", "image": "mpi:1"}
        if command:
            container["command"] = command
        spec: dict[str, Any] = {"replicas": n, "template": {"spec": {"containers": [container]}}}
        if restart:
            spec["restartPolicy"] = restart
        return spec

    spec: dict[str, Any] = {
        "mpiReplicaSpecs": {
            "Launcher": replica(1, launcher, ["mpirun", "-np", "2", "hello"]),
            "Worker": replica(2, worker, None),
        }
    }
    if run_policy is not None:
        spec["runPolicy"] = run_policy
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi"}, "spec": spec}


def rjob(runtime: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in runtime["spec"]["template"]["spec"]["replicatedJobs"] if r["name"] == name)


@pytest.mark.parametrize(
    ("run_policy", "launcher", "worker"),
    [
        (None, None, None),  # the issue's 20 manifests: no runPolicy, mpi-operator's defaults
        ({"backoffLimit": 3}, None, None),
        ({"backoffLimit": 0, "activeDeadlineSeconds": 600}, "Never", "OnFailure"),
        ({"activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 30}, "ExitCode", "ExitCode"),
        ({"cleanPodPolicy": "Running"}, "OnFailure", "Never"),
    ],
)
def test_mpi_operator_launcher_job_and_workers_retry_as_mpi_operator(
    run_policy: dict[str, Any] | None, launcher: str | None, worker: str | None
) -> None:
    job = mpijob(run_policy, launcher, worker)
    conv = one(job)
    want = mpi_launcher_job(job)
    got = rjob(conv.runtime, "launcher")["template"]["spec"]
    assert got["backoffLimit"] == want["backoffLimit"]
    assert got.get("activeDeadlineSeconds") == want["activeDeadlineSeconds"]
    assert got["template"]["spec"]["restartPolicy"] == want["restartPolicy"]
    assert "podFailurePolicy" not in got  # mpi-operator's launcher Job has no exit-code rule
    # the deadline is the launcher Job's, not the TrainJob's (counted from another start)
    assert "activeDeadlineSeconds" not in conv.trainjob["spec"]
    node = rjob(conv.runtime, "node")["template"]["spec"]
    workers = mpi_worker_pod(job)
    assert node["template"]["spec"]["restartPolicy"] == workers["restartPolicy"]
    assert node["backoffLimit"] == (2147483647 if workers["restarts"] == "unlimited" else 0)
    report = {r.field: r for r in conv.rows}
    launcher_row = report["spec.mpiReplicaSpecs.Launcher.restartPolicy"]
    assert f"backoffLimit {want['backoffLimit']}" in launcher_row.target and "newLauncherJob" in launcher_row.note
    assert "no limit, as v1" not in " ".join(r.note for r in conv.rows)  # training-operator's rule, not this kind's
    worker_row = report["spec.mpiReplicaSpecs.Worker.restartPolicy"]
    assert worker_row.status == (KEPT if worker == "OnFailure" else APPROXIMATED)
    if run_policy and "ttlSecondsAfterFinished" in run_policy:
        assert "launcher Job only" in report["spec.runPolicy.ttlSecondsAfterFinished"].note


def test_kubeflow_v1_mpijob_keeps_training_operators_retry_rule() -> None:
    """training-operator's v1 MPIJob (common/job.go PastBackoffLimit): an OnFailure launcher without
    runPolicy.backoffLimit restarts without limit; its deadline is the job's."""
    job = mpijob({"activeDeadlineSeconds": 60}, "OnFailure", None)
    job["apiVersion"] = "kubeflow.org/v1"
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"] = ["sleep", "1"]
    conv = one(job)
    assert rjob(conv.runtime, "launcher")["template"]["spec"]["backoffLimit"] == 2147483647
    assert conv.trainjob["spec"]["activeDeadlineSeconds"] == 60


def pytorch_workers(resources: dict[str, Any] | None, restart: str | None, nproc: Any = None) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "pytorch",
        "image": "torch:2",
        "command": ["python", "-m", "torch.distributed.run", "t.py"],
    }
    if resources:
        container["resources"] = resources
    worker: dict[str, Any] = {"replicas": 2, "template": {"spec": {"containers": [container]}}}
    if restart:
        worker["restartPolicy"] = restart
    spec: dict[str, Any] = {"pytorchReplicaSpecs": {"Worker": worker}}
    if nproc is not None:
        spec["nprocPerNode"] = nproc
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"}, "spec": spec}


@pytest.mark.parametrize(
    ("resources", "nproc", "v1", "policy"),
    [
        ({"limits": {"cpu": "4"}}, None, "auto", False),  # v2 would count 4 CPUs
        ({"requests": {"cpu": "1"}}, None, "auto", False),  # v2 would say 1
        ({"limits": {"nvidia.com/gpu": "2"}}, None, "auto", True),  # v2 keeps auto with a GPU
        ({"limits": {"cpu": "4"}}, "2", "2", True),  # a number: numProcPerNode, the same either way
        ({"limits": {"cpu": "4"}}, "gpu", "gpu", False),  # v1 passed gpu on to torchrun
    ],
)
def test_generated_runtime_keeps_v1s_processes_per_node(
    resources: dict[str, Any], nproc: Any, v1: str, policy: bool, tmp_path: Path
) -> None:
    job = pytorch_workers(resources, "Never", nproc)  # Never: a generated runtime
    conv = one(job)
    assert conv.runtime is not None
    assert ("torch" in conv.runtime["spec"]["mlPolicy"]) is policy
    jobset = next(o for o in rendered(job, tmp_path) if o["kind"] == "JobSet")
    for pod in jobset_pods(jobset):
        assert seen(pod).env["PET_NPROC_PER_NODE"] == v1
    if not policy:
        assert any("PET_NPROC_PER_NODE" in r.target and "no torch policy" in r.note for r in conv.rows)


def test_bundled_runtime_reports_v2s_processes_per_node(tmp_path: Path) -> None:
    job = pytorch_workers({"limits": {"cpu": "4"}}, None)
    conv = one(job)
    assert conv.runtime is None and conv.runtime_name == "torch-distributed"
    (row,) = [r for r in conv.rows if "PET_NPROC_PER_NODE" in r.target]
    assert row.status == APPROXIMATED and "PET_NPROC_PER_NODE=auto" in row.note and "4" in row.target
    jobset = next(o for o in rendered(job, tmp_path) if o["kind"] == "JobSet")
    assert {seen(p).env["PET_NPROC_PER_NODE"] for p in jobset_pods(jobset)} == {"4"}


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


def test_generated_runtime_is_named_after_the_job_within_a_dns_label_and_sets_the_trainjobs_ref() -> None:
    """The runtime is `<job>-v1`, its name cut to 63 characters without a trailing `-` or `.`."""
    from ktrain.convert.common import Ctx, Settings
    from ktrain.convert.generated import Generated
    from ktrain.convert.kinds import KINDS, V1
    from ktrain.convert.layout import plan
    from ktrain.convert.roles import read_roles
    from ktrain.inputs.documents import load_documents

    (doc,) = load_documents(TF_FULL, "tf.yaml")
    info, ctx = KINDS["TFJob"], Ctx(doc, ())
    roles = read_roles(ctx, info, doc.data["spec"], V1)
    name = "a" * 59 + "-bcd"
    gen = Generated(ctx, info, V1, roles, name, Settings(), plan(info, roles))
    assert gen.runtime_name == "a" * 59 + "-v1" and len(gen.runtime_name) <= 63
    trainjob: dict[str, Any] = {"metadata": {"name": name}, "spec": {}}
    runtime = gen.build(trainjob, "team")
    assert runtime["kind"] == "TrainingRuntime" and runtime["metadata"]["name"] == gen.runtime_name
    assert runtime["metadata"]["namespace"] == "team"
    rjobs = [r["name"] for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]]
    assert rjobs == ["chief", "ps", "node", "evaluator"]
