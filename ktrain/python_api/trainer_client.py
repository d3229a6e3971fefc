"""`ktrain.TrainerClient`: the Kubeflow SDK's `TrainerClient` (SDK 0.5), on ktrain's use cases, with the
SDK's backend split (`ktrain.python_api.backends.TrainerBackend`): its Kubernetes backend
(`ktrain.python_api.kubernetes_backend`), and its local process and container backends on ktrain's
local runs (`ktrain.python_api.local_backend`).

The same methods, arguments, defaults and return types as `kubeflow.trainer.TrainerClient`
(`list_runtimes`, `get_runtime`, `train`, `list_jobs`, `get_job`, `get_job_logs`,
`wait_for_job_status`, `delete_job`, `get_job_events`, `get_runtime_packages`), so a notebook
moves over by changing its import. What a call submits is rendered by ktrain first (the same checks
and errors as `ktrain job create`); tests/unit/python_api/test_conversion.py compares the TrainJob with the
one the SDK submits, and docs/python-api.md lists where they differ on purpose.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ktrain import constants as c
from ktrain.errors import (
    ArgumentTypeError,
    UsageError,
    WaitTimeoutError,
)
from ktrain.python_api import arguments as a
from ktrain.python_api import conversion
from ktrain.python_api import types as t
from ktrain.python_api.client import job_name
from ktrain.python_api.sdk_views import runtime_of

if TYPE_CHECKING:
    from ktrain.python_api.backends import TrainerBackend

LOCAL_CONFIGS = ("LocalProcessBackendConfig", "ContainerBackendConfig")
STATUSES = (t.TRAINJOB_CREATED, t.TRAINJOB_RUNNING, t.TRAINJOB_COMPLETE, t.TRAINJOB_FAILED)


class TrainerClient:
    """Train on Kubernetes as the Kubeflow SDK does. `backend_config`: a KubernetesBackendConfig
    (ktrain's or the SDK's: namespace, config_file, context); or a LocalProcessBackendConfig (the
    job's pods as processes on this machine) or a ContainerBackendConfig (as containers of their
    images under podman or docker), which run in the background (`ktrain.python_api.local_backend`).
    `target` is ktrain's: "trainjob" (the default, as the SDK) submits a TrainJob for the Trainer
    controller; "jobset" submits the objects the controller would make, for a cluster without it."""

    def __init__(self, backend_config: object = None, *, target: object = "trainjob") -> None:
        config = t.KubernetesBackendConfig() if backend_config is None else backend_config
        kind = a.kind_of(config)
        self.backend: TrainerBackend
        if kind in LOCAL_CONFIGS:
            from ktrain.python_api.local_backend import LocalBackend

            if target != "trainjob":
                raise UsageError("target= is for a cluster: a local backend runs the job's pods here")
            self.backend = LocalBackend(config, kind)
        elif kind == "KubernetesBackendConfig":
            from ktrain.python_api.kubernetes_backend import KubernetesBackend

            self.backend = KubernetesBackend(config, target)
        else:
            raise ArgumentTypeError(
                f"backend_config must be a KubernetesBackendConfig, LocalProcessBackendConfig or "
                f"ContainerBackendConfig, not {kind}",
                hint="from ktrain import KubernetesBackendConfig",
            )
        self.target = self.backend.target

    @property
    def namespace(self) -> str:
        return self.backend.namespace

    # --- runtimes ---------------------------------------------------------------------------------

    def list_runtimes(self) -> list[t.Runtime]:
        """The runtimes jobs can use (the cluster's; TrainingRuntimes first for a shared name;
        ktrain's own with a local backend)."""
        return [runtime_of(entry) for entry in self.backend.runtime_entries()]

    def get_runtime(self, name: object) -> t.Runtime:
        wanted = a.text(name, "name")
        for entry in self.backend.runtime_entries():
            if entry.runtime.name == wanted:
                return runtime_of(entry)
        raise self.backend.runtime_missing(wanted)

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
            name = self.backend.submit(request, registry)
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
        option_keywords, option_fields = conversion.option_parts(options, trainer, backend=self.backend.option_backend)
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
        request.note_nodes = bool(options) or bool(job_options)  # only the SDK's arguments: the SDK's TrainJob
        # Submitted from here (not a helper): a warning points at the caller's line (stacklevel).
        return self.backend.submit(request, registry)

    def list_jobs(self, runtime: object = None) -> list[t.TrainJob]:
        """Every job in the namespace (TrainJobs, and JobSets ktrain submitted), optionally only
        those of one runtime."""
        return self.backend.list_jobs(None if runtime is None else conversion.runtime_name(runtime))

    def get_job(self, name: object) -> t.TrainJob:
        return self.backend.get_job(name)

    def get_job_logs(self, name: object, step: object = c.NODE + "-0", follow: object = False) -> Iterator[str]:
        """The log lines of one step (`node-0`, `node-1`, ..., `dataset-initializer`,
        `model-initializer`); with `follow`, streamed until the job ends. A step that has no
        running pod yet gives no lines, as in the SDK."""
        wanted = a.text(step, "step")
        streaming = False if follow is None else a.boolean(follow, "follow")
        return self.backend.get_job_logs(name, wanted, streaming)

    def get_job_events(self, name: object) -> list[t.Event]:
        """The events of the TrainJob, its JobSet, the JobSet's Jobs and the job's pods (the
        newest of each step, as `get_job` shows them), oldest first: one list of the namespace's
        events, as the SDK reads them. An event without a `firstTimestamp` (the events.k8s.io
        API's, such as the scheduler's FailedScheduling) is placed by its `eventTime` (the SDK
        leaves it out). NotProvidedError (a NotImplementedError) on a local backend, as the SDK's."""
        return self.backend.get_job_events(name)

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
                raise self.backend.failure(checked)
            if job.status in wanted:
                return job
            time.sleep(interval)
        raise WaitTimeoutError(f"Timeout waiting for TrainJob {checked} to reach status: {sorted(wanted)}")

    def delete_job(self, name: object) -> None:
        """Delete the job (a local one: stop its pods and forget it)."""
        self.backend.delete_job(name)


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
    """What `get_runtime_packages` runs in the runtime's image (the SDK's function, as it is: its
    source is what travels, so it imports what it uses itself)."""
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
