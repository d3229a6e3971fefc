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

from pathlib import Path
from typing import Any

import pytest
import yaml
from v1pods.model import mpi_launcher_job, mpi_worker_pod
from v1pods.pods import jobset_pods, seen

from ktrain.convert import convert_documents
from ktrain.convert.report import APPROXIMATED, KEPT
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
        (None, None, None),  # the 20 manifests: no runPolicy, mpi-operator's defaults
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
