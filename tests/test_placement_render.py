"""Queue, priority, placement, KAI and elastic settings reach the rendered objects where the
engines read them, and those objects still pass the upstream CRD schemas (skipped without
../shared). Where each expectation comes from is said per test."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import UPSTREAM
from unit.service.test_render import check_crd_schemas

from ktrain.authoring.finetune import FineTuning
from ktrain.authoring.placement import parse_toleration
from ktrain.authoring.scheduling import refuse_for_trainjob
from ktrain.errors import UsageError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.job import job_document
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

pytestmark = pytest.mark.shared(optional=True)  # _render checks the upstream CRD schemas when ../shared is there


def _render(allow_extensions: bool = False, **overrides: Any) -> list[dict[str, Any]]:
    overrides.setdefault("name", "job")
    request = RenderRequest(overrides=JobOverrides(**overrides), allow_extensions=allow_extensions)
    objects = render_request(request, RuntimeRegistry()).result.objects
    if UPSTREAM.is_dir():
        check_crd_schemas(objects)
    return objects


def _jobset(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "JobSet")


def _pods(jobset: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r["template"]["spec"]["template"]["spec"] for r in jobset["spec"]["replicatedJobs"]}


def _env(pod: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}


def test_kueue_queue_labels_the_jobset_and_the_trainjob() -> None:
    # Kueue's JobSet and TrainJob integrations read kueue.x-k8s.io/queue-name from the object's labels;
    # runtime-patch labels become the JobSet's labels (ENGINE.md §4.1).
    assert _jobset(_render(runtime="torch-distributed", kueue_queue="team-a"))["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "team-a"
    }
    request = RenderRequest(overrides=JobOverrides(runtime="torch-distributed", name="job", kueue_queue="team-a"))
    doc, _ = job_document(request, RuntimeRegistry())
    assert doc.data["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}


def test_kueue_priority_class_labels_the_jobset_and_the_trainjob_apart_from_the_pod_priority() -> None:
    # Kueue reads the WorkloadPriorityClass from the label kueue.x-k8s.io/priority-class of the job
    # it admits (kubernetes-sigs/kueue pkg/controller/constants: WorkloadPriorityClassLabel; its
    # "Workload Priority Class" concept page), independent of the pods' PriorityClass.
    objects = _render(
        runtime="torch-distributed", kueue_queue="team-a", kueue_priority_class="batch-high", priority_class="high"
    )
    jobset = _jobset(objects)
    kueue = {"kueue.x-k8s.io/queue-name": "team-a", "kueue.x-k8s.io/priority-class": "batch-high"}
    assert jobset["metadata"]["labels"] == kueue
    assert {pod["priorityClassName"] for pod in _pods(jobset).values()} == {"high"}
    request = RenderRequest(
        overrides=JobOverrides(runtime="torch-distributed", name="job", kueue_priority_class="batch-high")
    )
    doc, _ = job_document(request, RuntimeRegistry())
    assert doc.data["metadata"]["labels"] == {"kueue.x-k8s.io/priority-class": "batch-high"}
    assert "suspend" not in doc.data["spec"]  # a priority alone does not queue the job


JOB_FILE_NOT_SUSPENDED = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job}
spec:
  runtimeRef: {name: torch-distributed}
  suspend: false
"""


def test_kueue_queue_creates_the_job_suspended_for_kueue_to_admit() -> None:
    # Kueue's "Run A TrainJob" guide: the queue label, and `spec.suspend: true` (Kueue's webhook
    # suspends a queued job on create, jobframework ApplyDefaultForSuspend, and resumes it once
    # admitted); upstream's examples/yaml/03-kueue-integration.yaml writes both. The TrainJob's
    # suspend is the JobSet's (ENGINE.md §9).
    for request in (
        RenderRequest(overrides=JobOverrides(runtime="torch-distributed", name="job", kueue_queue="q")),
        # the flag wins over a job file's `suspend: false`, as Kueue's webhook would
        RenderRequest(file="job.yaml", text=JOB_FILE_NOT_SUSPENDED, overrides=JobOverrides(kueue_queue="q")),
    ):
        doc, _ = job_document(request, RuntimeRegistry())
        assert doc.data["spec"]["suspend"] is True
        assert _jobset(render_request(request, RuntimeRegistry()).result.objects)["spec"]["suspend"] is True


def test_no_suspend_with_kueue_queue_is_refused() -> None:
    with pytest.raises(UsageError, match="--no-suspend with --kueue-queue"):
        _render(runtime="torch-distributed", kueue_queue="q", suspend=False)
    assert _jobset(_render(runtime="torch-distributed", kueue_queue="q", suspend=True))["spec"]["suspend"] is True


@pytest.mark.parametrize("value", ["", "two words", "-lead", "trail.", "x" * 64, "naïve"])
@pytest.mark.parametrize("field", ["kueue_queue", "kueue_priority_class"])
def test_kueue_names_that_no_label_can_hold_are_refused(field: str, value: str) -> None:
    flag = "--" + field.replace("_", "-")
    with pytest.raises(UsageError) as err:
        _render(runtime="torch-distributed", **{field: value})
    assert err.value.message.startswith(flag + ":"), err.value.message


def test_node_selector_tolerations_and_gpu_type_reach_the_pods() -> None:
    objects = _render(
        runtime="torchtune-llama3.2-1b",
        command=["tune", "run"],
        node_selector={"pool": "a100"},
        tolerations=[parse_toleration("nvidia.com/gpu:NoSchedule")],
        gpu_type="NVIDIA-A100-SXM4-80GB",
    )
    pods = _pods(_jobset(objects))
    assert pods["dataset-initializer"]["nodeSelector"] == {"pool": "a100"}
    assert pods["node"]["nodeSelector"] == {"pool": "a100", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    for pod in pods.values():
        assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_gpus_is_a_per_node_limit_that_picks_the_torchtune_recipe() -> None:
    pods = _pods(_jobset(_render(runtime="torch-distributed", gpus=4, command=["torchrun", "t.py"])))
    assert pods["node"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4"
    # ENGINE.md §13.7: one GPU on one node is the single-device recipe (the runtime asks for 2).
    pods = _pods(_jobset(_render(runtime="torchtune-llama3.2-1b", gpus=1, command=["tune", "run"])))
    assert "full_finetune_single_device" in pods["node"]["containers"][0]["command"]


def test_priority_class_reaches_every_pod_and_the_volcano_pod_group(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runtime = RuntimeRegistry().get("torch-distributed").runtime.to_dict()
    runtime["metadata"]["name"] = "torch-volcano"
    runtime["spec"]["podGroupPolicy"] = {"volcano": {}}
    path = tmp_path / "rt.yaml"
    path.write_text(yaml.safe_dump(runtime))
    request = RenderRequest(
        overrides=JobOverrides(runtime="torch-volcano", name="job", priority_class="high", command=["torchrun", "t.py"])
    )
    objects = render_request(request, RuntimeRegistry(files=[str(path)])).result.objects
    assert all(p["priorityClassName"] == "high" for p in _pods(_jobset(objects)).values())
    pod_group = next(o for o in objects if o["kind"] == "PodGroup")
    assert pod_group["spec"]["priorityClassName"] == "high"  # ENGINE.md §7.2: from the pod templates


def test_a_trainjob_cannot_carry_a_pod_priority_or_scheduler() -> None:
    with pytest.raises(UsageError, match="runtimePatches do not allow a pod's priorityClassName"):
        refuse_for_trainjob(priority_class="high", scheduler=None)
    with pytest.raises(UsageError, match="schedulerName"):
        refuse_for_trainjob(priority_class=None, scheduler="kai")


def test_kai_sets_the_scheduler_and_the_queue_label_behind_allow_extensions() -> None:
    # KAI pod-grouper: queue from the top owner's kai.scheduler/queue label; pods name kai-scheduler.
    objects = _render(
        True, runtime="torch-distributed", scheduler="kai", queue="research", command=["torchrun", "t.py"]
    )
    jobset = _jobset(objects)
    assert jobset["metadata"]["labels"] == {"kai.scheduler/queue": "research"}
    assert "scheduling.volcano.sh/queue-name" not in (jobset["metadata"].get("annotations") or {})
    assert all(p["schedulerName"] == "kai-scheduler" for p in _pods(jobset).values())
    with pytest.raises(UsageError, match="ktrain extension"):
        _render(runtime="torch-distributed", scheduler="kai")


def test_elastic_torchrun_env_and_jobset_restarts() -> None:
    objects = _render(True, runtime="torch-distributed", elastic=(2, 4), max_restarts=3, command=["torchrun", "t.py"])
    jobset = _jobset(objects)
    node = _pods(jobset)["node"]
    env = _env(node)
    assert env["PET_NNODES"] == "2:4"
    assert env["PET_RDZV_BACKEND"] == "c10d"
    assert env["PET_RDZV_ENDPOINT"] == "job-node-0-0.job:29500"
    assert env["PET_MAX_RESTARTS"] == "3"
    assert jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 4
    assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 3
    with pytest.raises(UsageError, match="contradicts"):
        _render(True, runtime="torch-distributed", elastic=(2, 4), nodes=3)
    with pytest.raises(UsageError, match="needs a torch runtime"):
        _render(True, runtime="xgboost-distributed", elastic=(1, 2), command=["python", "t.py"])


def test_fine_tuning_on_a_runtime_that_is_not_torchtune_names_those_that_are() -> None:
    with pytest.raises(UsageError) as err:
        _render(runtime="torch-distributed", fine_tuning=FineTuning(epochs=2))
    assert "torchtune-llama3.2-1b" in (err.value.hint or "")
