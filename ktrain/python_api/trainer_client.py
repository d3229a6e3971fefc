"""`ktrain.TrainerClient`: the Kubeflow SDK's `TrainerClient` (SDK 0.5: its Kubernetes backend, and
its local process and container backends on ktrain's local runs, `ktrain.python_api.local_backend`),
on ktrain's use cases.

The same methods, arguments, defaults and return types as `kubeflow.trainer.TrainerClient`
(`list_runtimes`, `get_runtime`, `train`, `list_jobs`, `get_job`, `get_job_logs`,
`wait_for_job_status`, `delete_job`, `get_job_events`, `get_runtime_packages`), so a notebook
moves over by changing its import. What a call submits is rendered by ktrain first (the same checks
and errors as `ktrain job create`); tests/test_sdk_differential.py compares the TrainJob with the
one the SDK submits, and docs/python-api.md lists where they differ on purpose.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ktrain import constants as c
from ktrain.errors import (
    ArgumentTypeError,
    JobFailedError,
    NotProvidedError,
    RuntimeNotFoundError,
    UsageError,
    WaitTimeoutError,
)
from ktrain.python_api import arguments as a
from ktrain.python_api import conversion
from ktrain.python_api import types as t
from ktrain.python_api.client import Client, job_name

if TYPE_CHECKING:
    from ktrain.python_api.local_backend import LocalBackend

Obj = dict[str, Any]
LOCAL_CONFIGS = ("LocalProcessBackendConfig", "ContainerBackendConfig")
STATUSES = (t.TRAINJOB_CREATED, t.TRAINJOB_RUNNING, t.TRAINJOB_COMPLETE, t.TRAINJOB_FAILED)
# ktrain's job states (ktrain.cluster.job_state) that the SDK has no name for.
SDK_STATUS = {"Suspended": t.TRAINJOB_CREATED}
GPU, TPU, NPU = "nvidia.com/gpu", "google.com/tpu", "huawei.com/Ascend910"


class TrainerClient:
    """Train on Kubernetes as the Kubeflow SDK does. `backend_config`: a KubernetesBackendConfig
    (ktrain's or the SDK's: namespace, config_file, context); or a LocalProcessBackendConfig (the
    job's pods as processes on this machine) or a ContainerBackendConfig (as containers of their
    images under podman or docker), which run in the background (`ktrain.python_api.local_backend`).
    `target` is ktrain's: "trainjob" (the default, as the SDK) submits a TrainJob for the Trainer
    controller; "jobset" submits the objects the controller would make, for a cluster without it."""

    def __init__(self, backend_config: object = None, *, target: object = "trainjob") -> None:
        from ktrain.service.submit import TARGETS

        config = t.KubernetesBackendConfig() if backend_config is None else backend_config
        kind = a.kind_of(config)
        self._local: LocalBackend | None = None
        if kind in LOCAL_CONFIGS:
            from ktrain.python_api.local_backend import LocalBackend

            if target != "trainjob":
                raise UsageError("target= is for a cluster: a local backend runs the job's pods here")
            self.target = "local"
            self._local = LocalBackend(config, kind)
            return
        if kind != "KubernetesBackendConfig":
            raise ArgumentTypeError(
                f"backend_config must be a KubernetesBackendConfig, LocalProcessBackendConfig or "
                f"ContainerBackendConfig, not {kind}",
                hint="from ktrain import KubernetesBackendConfig",
            )
        if getattr(config, "client_configuration", None) is not None:
            raise UsageError(
                "backend_config.client_configuration: ktrain connects as kubectl does",
                hint="give config_file= (a kubeconfig) and context= instead",
            )
        self.target = a.text(target, "target")
        if self.target not in TARGETS:
            raise UsageError(f"target must be one of {', '.join(TARGETS)}, not {a.shown(self.target)}")
        config_file = getattr(config, "config_file", None)
        self._client = Client(
            kubeconfig=None if config_file is None else a.path(config_file, "backend_config.config_file"),
            context=a.optional_text(getattr(config, "context", None), "backend_config.context"),
            namespace=a.optional_text(getattr(config, "namespace", None), "backend_config.namespace"),
        )
        self._client.connect()  # reads the kubeconfig now, as the SDK does; nothing is sent yet

    @property
    def namespace(self) -> str:
        if self._local is not None:
            return "default"  # what a local run renders the job into
        return str(self._client.connect().namespace)

    # --- runtimes ---------------------------------------------------------------------------------

    def _runtime_entries(self) -> list[Any]:
        """The runtimes a job here can use, namespaced TrainingRuntimes before cluster-scoped ones
        of the same name (the SDK's preference); with target "jobset", ktrain's local ones too."""
        if self._local is not None:  # ktrain's own, as `ktrain runtime list` shows them
            from ktrain.inputs.registry import RuntimeRegistry

            return RuntimeRegistry().entries()
        from ktrain.cluster.runtimes import fetch_runtime_entries

        entries, _warnings = fetch_runtime_entries(self._client.connect())
        if self.target == "jobset":
            from ktrain.inputs.registry import RuntimeRegistry

            entries += RuntimeRegistry().entries()
        chosen: dict[str, Any] = {}
        for entry in sorted(entries, key=lambda e: e.runtime.kind != "TrainingRuntime"):
            chosen.setdefault(entry.runtime.name, entry)
        return list(chosen.values())

    def list_runtimes(self) -> list[t.Runtime]:
        """The runtimes jobs can use (the cluster's; TrainingRuntimes first for a shared name;
        ktrain's own with a local backend)."""
        return [runtime_of(entry) for entry in self._runtime_entries()]

    def get_runtime(self, name: object) -> t.Runtime:
        wanted = a.text(name, "name")
        for entry in self._runtime_entries():
            if entry.runtime.name == wanted:
                return runtime_of(entry)
        if self._local is not None:
            raise RuntimeNotFoundError(
                f"runtime {a.shown(wanted)} not found among ktrain's runtimes", hint="`ktrain runtime list` shows them"
            )
        raise RuntimeNotFoundError(
            f"runtime {a.shown(wanted)} not found in namespace {self.namespace} or the cluster",
            hint="`ktrain runtime list` shows the runtimes",
        )

    def get_runtime_packages(self, runtime: object) -> None:
        """Print the runtime's Python version, `pip list` and `nvidia-smi` (when the image has it),
        as the SDK does: a one-node job runs `print_packages` (on an MPI runtime as one rank,
        `mpirun -np 1`), its logs are printed, and the job is deleted, also when it fails or the
        wait gives up. A torchtune (BuiltinTrainer) runtime is refused, as in the SDK."""
        from ktrain.python_api.request import function_request, unique_name

        found = self.get_runtime(conversion.runtime_name(runtime))
        if found.trainer.trainer_type == t.TrainerType.BUILTIN_TRAINER:
            raise UsageError("Cannot get Runtime packages for BuiltinTrainer")  # the SDK's ValueError
        # The SDK's: one CPU unless the runtime's trainer has GPUs.
        resources = {"cpu": 1} if found.trainer.device != "gpu" else None
        options = {"runtime": found.name, "num_nodes": 1, "resources_per_node": resources}
        request, registry = function_request(print_packages, None, function="get_runtime_packages", options=options)
        request.single_process = True  # mpirun -np 1 on an MPI runtime; others run one process per node anyway
        request.fallback_name = unique_name()
        name = None
        try:
            if self._local is not None:
                name = self._local.train(request, registry, runtime_of)
            else:
                name = self._client._submit(request, registry, target=self.target)
            self.wait_for_job_status(name)
            print("\n".join(self.get_job_logs(name=name)))  # noqa: T201 - the SDK's method prints them
        finally:
            if name is not None:
                try:
                    self.delete_job(name)
                except Exception as exc:  # noqa: BLE001 - the SDK logs it and lets the first error through
                    import warnings

                    from ktrain.python_api.client import KtrainWarning

                    warnings.warn(
                        f"could not delete job {name} made by get_runtime_packages: {exc}", KtrainWarning, stacklevel=2
                    )

    # --- jobs -------------------------------------------------------------------------------------

    def train(
        self,
        runtime: object = None,
        initializer: object = None,
        trainer: object = None,
        options: object = None,
        **job_options: Any,
    ) -> str:
        """Submit a TrainJob; returns its name, new for every call (a letter and 11 hex digits,
        as the SDK's, unless `name=` is given). `trainer`: CustomTrainer (a function),
        CustomTrainerContainer (an image) or BuiltinTrainer (torchtune); `runtime`: a name or a
        Runtime (default torch-distributed). `options`: the SDK's option objects
        (`ktrain.options` or `kubeflow.trainer.options`: Name, Labels, Annotations, TrainerCommand,
        TrainerArgs, ActiveDeadlineSeconds, RuntimePatch), as the SDK applies them; ktrain's job
        options (`name=`, `labels=`, `kueue_queue=`, `tolerations=`, ...: docs/python-api.md) as
        keywords, each field set by one of the two only."""
        from ktrain.python_api.request import function_request, prepare, unique_name

        name = conversion.runtime_name(runtime)
        trainer_options, func = ({}, None) if trainer is None else conversion.trainer_keywords(trainer)
        initializer_options, initializer_spec = conversion.initializer_parts(initializer)
        backend = None if self._local is None else self._local.kind.removesuffix("Config")  # the SDK backend's name
        option_keywords, option_fields = conversion.option_parts(options, trainer, backend=backend)
        given = {**trainer_options, **initializer_options}
        for keyword in job_options:
            if keyword in given or keyword == "runtime":
                by = "runtime=" if keyword == "runtime" else "the trainer or the initializer"
                raise UsageError(f"{keyword}= is given twice: {by} sets it too")
        for kind in conversion.option_kinds(options):  # what an option sets, no keyword sets too
            taken = conversion.OPTION_KEYWORDS.get(kind)
            if taken is not None and (taken in job_options or taken in given):
                raise UsageError(f"{taken} is given twice: by options ({kind}) and by {taken}=")
        merged = {"runtime": name, **given, **option_keywords, **job_options}
        job = None
        if option_fields or initializer_spec:
            job = {"apiVersion": c.TRAINER_API_VERSION, "kind": c.TRAINJOB_KIND, **option_fields}
            if initializer_spec:
                job.setdefault("spec", {})["initializer"] = initializer_spec
        if func is not None:
            func_args = getattr(trainer, "func_args", None)
            request, registry = function_request(func, func_args, function="train", options=merged, job=job)
        else:
            request, registry = prepare(job, merged, function="train")
        request.fallback_name = unique_name()
        # Submitted from here (not a helper): a warning points at the caller's line (stacklevel).
        if self._local is not None:
            return self._local.train(request, registry, runtime_of)
        return self._client._submit(request, registry, target=self.target)

    def list_jobs(self, runtime: object = None) -> list[t.TrainJob]:
        """Every job in the namespace (TrainJobs, and JobSets ktrain submitted), optionally only
        those of one runtime."""
        from ktrain.cluster.observe import list_jobs, list_pods

        wanted = None if runtime is None else conversion.runtime_name(runtime)
        if self._local is not None:
            return self._local.list_jobs(wanted)
        cluster = self._client.connect()
        jobs = list_jobs(cluster)
        pods = list_pods(cluster, cluster.namespace, c.JOBSET_NAME_LABEL) if jobs else []
        runtimes = {e.runtime.name: runtime_of(e) for e in self._runtime_entries()} if jobs else {}
        out = []
        for summary, _obj in jobs:
            if wanted is not None and summary.runtime != wanted:
                continue
            mine = [
                p for p in pods if (p.get("metadata") or {}).get("labels", {}).get(c.JOBSET_NAME_LABEL) == summary.name
            ]
            out.append(trainjob_of(summary, mine, runtimes))
        return out

    def get_job(self, name: object) -> t.TrainJob:
        from ktrain.cluster import job_state
        from ktrain.cluster.observe import find_job, job_pods

        if self._local is not None:
            return self._local.get_job(name)
        checked = job_name(name)
        cluster = self._client.connect()
        trainjob, jobset = find_job(cluster, checked)
        pods = job_pods(cluster, checked)
        summary = job_state.summarize(trainjob, jobset, pods)
        runtimes = {e.runtime.name: runtime_of(e) for e in self._runtime_entries()}
        job = trainjob_of(summary, pods, runtimes)
        job.trainer_status = trainer_status_of(trainjob)
        return job

    def get_job_logs(self, name: object, step: object = c.NODE + "-0", follow: object = False) -> Iterator[str]:
        """The log lines of one step (`node-0`, `node-1`, ..., `dataset-initializer`,
        `model-initializer`); with `follow`, streamed until the job ends. A step that has no
        running pod yet gives no lines, as in the SDK."""
        wanted = a.text(step, "step")
        streaming = False if follow is None else a.boolean(follow, "follow")
        if self._local is not None:
            step_selection(wanted, self._local.get_job(name).runtime)  # the step's name, checked as on the cluster
            return self._local.get_job_logs(name, wanted, streaming)
        job = self.get_job(name)
        rjob, rank = step_selection(wanted, job.runtime)
        found = next((s for s in job.steps if s.name == wanted and s.status != "Pending"), None)
        if found is None:
            return iter(())
        return self._client.logs(job.name, follow=streaming, step=rjob, node=rank)

    def get_job_events(self, name: object) -> list[t.Event]:
        """The events of the TrainJob, its JobSet, the JobSet's Jobs and the job's pods (the
        newest of each step, as `get_job` shows them), oldest first: one list of the namespace's
        events, as the SDK reads them. An event without a `firstTimestamp` (the events.k8s.io
        API's, such as the scheduler's FailedScheduling) is placed by its `eventTime` (the SDK
        leaves it out). NotProvidedError (a NotImplementedError) on a local backend, as the SDK's."""
        from ktrain.cluster.observe import find_job, job_pods, list_events

        if self._local is not None:
            raise NotProvidedError(
                "get_job_events: a job run on this machine has no Kubernetes events",
                hint="get_job() shows its steps, get_job_logs() their output",
            )
        checked = job_name(name)
        cluster = self._client.connect()
        _trainjob, jobset = find_job(cluster, checked)
        pods = job_pods(cluster, checked)
        return events_of(checked, jobset, pods, list_events(cluster, cluster.namespace))

    def wait_for_job_status(
        self,
        name: object,
        status: object = frozenset({t.TRAINJOB_COMPLETE}),
        timeout: object = 600,
        polling_interval: object = 2,
        callbacks: object = None,
    ) -> t.TrainJob:
        """Poll until the job's status is one of `status` (a subset of Created, Running, Complete,
        Failed); JobFailedError (a RuntimeError) if it fails first, WaitTimeoutError (a
        TimeoutError) after `timeout` seconds. `callbacks` get the TrainJob after every poll."""
        checked = job_name(name)
        wanted = _statuses(status)
        seconds = a.number(timeout, "timeout", positive=True)
        interval = a.number(polling_interval, "polling_interval", positive=True)
        if interval >= seconds:
            raise UsageError(
                f"polling_interval must be less than timeout, not {a.shown(polling_interval)} >= {a.shown(timeout)}"
            )
        hooks = _callbacks(callbacks)
        for _ in range(round(seconds / interval)):
            job = self.get_job(checked)
            for hook in hooks:
                hook(job)
            if t.TRAINJOB_FAILED not in wanted and job.status == t.TRAINJOB_FAILED:
                if self._local is not None:
                    raise self._local.failure(checked)
                raise JobFailedError(f"TrainJob {checked} is Failed")
            if job.status in wanted:
                return job
            time.sleep(interval)
        raise WaitTimeoutError(f"Timeout waiting for TrainJob {checked} to reach status: {sorted(wanted)}")

    def delete_job(self, name: object) -> None:
        """Delete the job (a local one: stop its pods and forget it)."""
        if self._local is not None:
            self._local.delete_job(name)
            return
        self._client.delete(name)


def _statuses(value: object) -> set[str]:
    if isinstance(value, str) or not isinstance(value, (set, frozenset, list, tuple)):
        raise a.wrong_type("status", "a set of statuses", value)
    out = {a.text(item, "an item of status") for item in value}
    if not out or not out <= set(STATUSES):
        raise UsageError(f"status {a.shown(sorted(out))} must be a non-empty subset of {', '.join(STATUSES)}")
    return out


def _callbacks(value: object) -> list[Callable[[t.TrainJob], None]]:
    if value is None:
        return []
    hooks = a.items_of(value, "callbacks", "functions")
    for i, hook in enumerate(hooks):
        if not callable(hook):
            raise a.wrong_type(f"callbacks[{i}]", "a function", hook)
    return hooks


def print_packages() -> None:
    """What `get_runtime_packages` runs in the runtime's image (the SDK's function, as it is)."""
    import shutil
    import subprocess
    import sys

    print(f"Python: {sys.version}")  # noqa: T201
    if shutil.which("pip"):
        pip_list = subprocess.run(["pip", "list"], capture_output=True, text=True)  # noqa: S607
        print(pip_list.stdout)  # noqa: T201
    else:
        print("Unable to get installed packages: pip command not found")  # noqa: T201
    if shutil.which("nvidia-smi"):
        print("Available GPUs on the single training node")  # noqa: T201
        nvidia_smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True)  # noqa: S607
        print(nvidia_smi.stdout)  # noqa: T201


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
    from datetime import timezone

    from ktrain.cluster import job_state

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
    for key, device in ((GPU, "gpu"), (TPU, "tpu")):
        if key in limits:
            return device, str(limits[key])
    migs = [k for k in limits if str(k).startswith("nvidia.com/mig-")]
    if migs:
        return migs[0].split("/", 1)[1], str(limits[migs[0]])
    if NPU in limits:
        return "npu", str(limits[NPU])
    if "cpu" in limits:
        return "cpu", str(limits["cpu"])
    return None


def runtime_of(entry: Any) -> t.Runtime:
    """A runtime as the SDK describes it (`get_runtime_trainer`): framework, image, devices,
    nodes, and the command a function runs with."""
    from ktrain.api.base import runtime_trainer_container
    from ktrain.python_api.request import FUNC_FILE
    from ktrain.service.code import launcher_command
    from ktrain.service.runtimes import is_torchtune_runtime

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
    from ktrain.cluster import job_state

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
    from ktrain.cluster import job_state

    return sorted(pods, key=lambda p: job_state.pod_order(job_state.summarize_pod(p))[3:], reverse=True)


def trainjob_of(summary: Any, pods: list[Obj], runtimes: dict[str, t.Runtime]) -> t.TrainJob:
    """ktrain's view of a job (ktrain.cluster.job_state) as the SDK's TrainJob: one step per
    initializer and per node (its newest pod), the status in the SDK's four words."""
    from datetime import datetime, timezone

    from ktrain.cluster import job_state

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
    created = job_state.parse_time(summary.created) or datetime.fromtimestamp(0, tz=timezone.utc)
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
    from datetime import datetime, timezone

    from ktrain.cluster.progress_read import status_progress
    from ktrain.progress.status import parse_time

    found = status_progress(trainjob)
    if found is None:
        return None
    when = parse_time(found.last_updated_time) if found.last_updated_time else None
    return t.TrainerStatus(
        progress_percentage=found.progress_percentage,
        estimated_remaining_seconds=found.estimated_remaining_seconds,
        metrics={m.name: m.value for m in found.metrics},
        last_updated_time=datetime.fromtimestamp(when, tz=timezone.utc) if when is not None else None,
    )
