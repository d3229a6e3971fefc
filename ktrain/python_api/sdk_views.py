"""The Kubeflow SDK's views of ktrain's objects (`TrainerClient`'s return values): a runtime entry as
the SDK's Runtime, a job (its summary and pods) as the SDK's TrainJob with its steps, the events of
a job's objects, and the SDK's step names read back (`node-0` ...)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ktrain import constants as c
from ktrain.api.base import runtime_trainer_container
from ktrain.errors import UsageError
from ktrain.jobs import state as job_state
from ktrain.progress.status import of_trainjob, parse_time
from ktrain.python_api import arguments as a
from ktrain.python_api import types as t
from ktrain.python_api.sdk_values import creation_time
from ktrain.service.code import launcher_command
from ktrain.service.runtimes import is_torchtune_runtime
from ktrain.util.jsondata import Obj

# ktrain's job states (ktrain.jobs.state) that the SDK has no name for.
SDK_STATUS = {"Suspended": t.TRAINJOB_CREATED}
GPU, TPU, NPU = "nvidia.com/gpu", "google.com/tpu", "huawei.com/Ascend910"
MAX_REPLICAS = 100_000  # a JobSet's replicas beyond this are not a real job's: no Job names made for them
STEP_KINDS = (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER, c.LAUNCHER, c.NODE)  # replicated jobs whose pods are steps
# The kinds whose events are a job's (the SDK's set).
EVENT_KINDS = frozenset({c.TRAINJOB_KIND, c.JOBSET_KIND, "Job", "Pod"})


def events_of(name: str, jobset: Obj | None, pods: list[Obj], events: list[Obj]) -> list[t.Event]:
    """The events about the job's objects, by kind and name, sorted by first occurrence (a stable
    sort: the list's order among equal times, as the SDK's). The names: the job's (TrainJob and
    JobSet), its Jobs (`<jobset>-<replicatedJob>-<index>`, as JobSet names them, from its spec)
    and its pods (the newest of each step, the pods `get_job` shows, as the SDK takes them
    from its `get_job`). The SDK adds its step names (`node-0`), which are no object's; Jobs it
    names by them never match, and an unrelated pod called `node-0` would."""
    names = {name}
    for rjob in ((jobset or {}).get("spec") or {}).get("replicatedJobs") or []:
        if isinstance(rjob, dict) and isinstance(rjob.get("name"), str):
            replicas = rjob.get("replicas", 1)
            count = replicas if isinstance(replicas, int) and 0 <= replicas <= MAX_REPLICAS else 0
            names.update(f"{name}-{rjob['name']}-{i}" for i in range(count))
    # The newest pod of each step (replica job and rank), as `trainjob_of` (and the SDK's get_job) keep.
    newest: dict[tuple[str | None, int | None], str] = {}
    for pod in newest_first(pods):
        step = job_state.pod_step(pod)
        if step in STEP_KINDS:
            newest.setdefault((step, job_state.pod_rank(pod)), str((pod.get("metadata") or {}).get("name", "")))
    names.update(newest.values())
    out = []
    for event in events:
        involved = event.get("involvedObject")
        if not isinstance(event.get("metadata"), dict) or not isinstance(involved, dict):
            continue
        stamp = event.get("firstTimestamp") or event.get("eventTime")
        when = job_state.parse_time(stamp) if isinstance(stamp, str) else None
        if when is not None and when.tzinfo is None:  # the API server writes UTC ("Z"); naive ones sort with them
            when = when.replace(tzinfo=timezone.utc)
        kind, obj = involved.get("kind"), involved.get("name")
        if when is None or not isinstance(kind, str) or not isinstance(obj, str):
            continue
        if kind not in EVENT_KINDS or obj not in names:
            continue
        out.append(
            t.Event(
                involved_object_kind=str(kind),
                involved_object_name=str(obj),
                message=str(event.get("message") or ""),
                reason=str(event.get("reason") or ""),
                event_time=when,
            )
        )
    out.sort(key=lambda e: e.event_time)
    return out


# --- the SDK's views of ktrain's objects ------------------------------------------------------------


def _devices(container: Obj) -> tuple[str, str] | None:
    """SDK `get_container_devices`: (device, count) from a container's resource limits."""
    limits = (container.get("resources") or {}).get("limits") or {}
    if not isinstance(limits, dict) or not limits:
        return None
    from ktrain.python_api.sdk_values import quantity_text as count  # `2` is '2.0', as the SDK reads it

    for key, device in ((GPU, "gpu"), (TPU, "tpu")):
        if key in limits:
            return device, count(limits[key])
    migs = [k for k in limits if str(k).startswith("nvidia.com/mig-")]
    if migs:
        return migs[0].split("/", 1)[1], count(limits[migs[0]])
    if NPU in limits:
        return "npu", count(limits[NPU])
    if "cpu" in limits:
        return "cpu", count(limits["cpu"])
    return None


def runtime_of(entry: Any) -> t.Runtime:
    """A runtime as the SDK describes it (`get_runtime_trainer`): framework, image, devices,
    nodes, and the command a function runs with."""
    from ktrain.python_api.request import FUNC_FILE

    runtime = entry.runtime
    framework = str((runtime.metadata.labels or {}).get(c.LABEL_FRAMEWORK) or t.UNKNOWN)
    container = runtime_trainer_container(runtime.spec.template.spec or {})
    trainer = t.RuntimeTrainer(
        trainer_type=t.TrainerType.BUILTIN_TRAINER if is_torchtune_runtime(runtime) else t.TrainerType.CUSTOM_TRAINER,
        framework=framework,
        image=str(container.get("image") or t.UNKNOWN),
    )
    devices = _devices(container)
    if devices:
        trainer.device, trainer.device_count = devices
    policy = runtime.spec.ml_policy
    if policy is not None and policy.mpi is not None and policy.mpi.num_proc_per_node:
        trainer.device_count = str(policy.mpi.num_proc_per_node)
    if policy is not None and policy.num_nodes:
        if trainer.device_count.isdigit():
            trainer.device_count = str(int(trainer.device_count) * policy.num_nodes)
        trainer.num_nodes = policy.num_nodes
    if is_torchtune_runtime(runtime):
        trainer.set_command(("tune", "run"))
    else:
        trainer.set_command(tuple(launcher_command(runtime, FUNC_FILE)[:-1]))
    return t.Runtime(name=runtime.name, trainer=trainer, kind=t.RuntimeKind(runtime.kind))


def _unknown_runtime(name: str | None) -> t.Runtime:
    """A job whose runtime is gone (or was never on the cluster): its name, nothing else known."""
    trainer = t.RuntimeTrainer(trainer_type=t.TrainerType.CUSTOM_TRAINER, framework=t.UNKNOWN, image=t.UNKNOWN)
    return t.Runtime(name=name or t.UNKNOWN, trainer=trainer, kind=t.RuntimeKind.CLUSTER_TRAINING_RUNTIME)


def _is_mpi(runtime: t.Runtime) -> bool:
    return bool(runtime.trainer.command) and runtime.trainer.command[0] == "mpirun"


def step_selection(step: str, runtime: t.Runtime) -> tuple[str, int]:
    """An SDK step name → (replicated job, rank). For MPI, `node-0` is the launcher and
    `node-N` the node of rank N-1 (SDK `get_trainjob_node_step`)."""
    if step in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER):
        return step, 0
    prefix, _, index = step.rpartition("-")
    if prefix != c.NODE or not index.isdigit():
        raise UsageError(f"step must be node-N, dataset-initializer or model-initializer, not {a.shown(step)}")
    rank = int(index)
    if _is_mpi(runtime):
        return (c.LAUNCHER, 0) if rank == 0 else (c.NODE, rank - 1)
    return c.NODE, rank


def _step_of(pod: Obj, runtime: t.Runtime) -> t.Step | None:
    rjob = job_state.pod_step(pod)
    meta = pod.get("metadata") or {}
    containers = [ct for ct in (pod.get("spec") or {}).get("containers") or [] if isinstance(ct, dict)]
    phase = (pod.get("status") or {}).get("phase")
    if rjob in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER):
        container = next((ct for ct in containers if ct.get("name") == rjob), None)
        step = t.Step(name=rjob, status=phase, pod_name=str(meta.get("name", "")))
    elif rjob in (c.LAUNCHER, c.NODE):
        container = next((ct for ct in containers if ct.get("name") == c.NODE), None)
        index = job_state.pod_rank(pod) or 0
        if _is_mpi(runtime) and rjob != c.LAUNCHER:
            index += 1
        step = t.Step(name=f"{c.NODE}-{index}", status=phase, pod_name=str(meta.get("name", "")))
        for var in (container or {}).get("env") or []:
            if not isinstance(var, dict) or var.get("name") != "PET_NPROC_PER_NODE":
                continue
            if isinstance(var.get("value"), str) and str(var["value"]).isdigit():
                step.device_count = str(var["value"])
    else:
        return None
    devices = _devices(container or {})
    if devices:
        step.device = devices[0]
        if step.device_count == t.UNKNOWN:
            step.device_count = devices[1]
    return step


def newest_first(pods: list[Obj]) -> list[Obj]:
    """The pods, the newest of each step first: a restarted pod stands for its step, as `job logs`
    picks it (`get_job`'s steps and `get_job_events`' pods)."""
    return sorted(pods, key=lambda p: job_state.pod_order(job_state.summarize_pod(p))[3:], reverse=True)


def trainjob_of(summary: Any, pods: list[Obj], runtimes: dict[str, t.Runtime]) -> t.TrainJob:
    """ktrain's view of a job (ktrain.jobs.state) as the SDK's TrainJob: one step per
    initializer and per node (its newest pod), the status in the SDK's four words."""
    runtime = runtimes.get(summary.runtime or "") or _unknown_runtime(summary.runtime)
    steps: dict[str, t.Step] = {}
    # The newest pod of a step stands for it (a restarted one replaces the old), as `job logs` picks it.
    for pod in newest_first(pods):
        step = _step_of(pod, runtime)
        if step is not None:
            steps.setdefault(step.name, step)
    order = {c.DATASET_INITIALIZER: -2, c.MODEL_INITIALIZER: -1}
    ordered = sorted(
        steps.values(),
        key=lambda s: (order.get(s.name, 0), int(s.name.rpartition("-")[2]) if s.name.startswith("node-") else 0),
    )
    created = creation_time(summary.created, job_state.parse_time(summary.created))
    return t.TrainJob(
        name=summary.name,
        runtime=runtime,
        steps=ordered,
        num_nodes=summary.nodes or runtime.trainer.num_nodes,
        creation_timestamp=created,
        status=SDK_STATUS.get(summary.state, summary.state),
    )


def trainer_status_of(trainjob: Obj | None) -> t.TrainerStatus | None:
    """`status.trainerStatus` as the SDK-style `TrainerStatus` (checked: ktrain.progress.status)."""
    found = of_trainjob(trainjob)
    if found is None:
        return None
    when = parse_time(found.last_updated_time) if found.last_updated_time else None
    return t.TrainerStatus(
        progress_percentage=found.progress_percentage,
        estimated_remaining_seconds=found.estimated_remaining_seconds,
        metrics={m.name: m.value for m in found.metrics},
        last_updated_time=datetime.fromtimestamp(when, tz=timezone.utc) if when is not None else None,
    )
