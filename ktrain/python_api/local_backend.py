"""`TrainerClient` on this machine: the Kubeflow SDK's local backends (`LocalProcessBackendConfig`,
`ContainerBackendConfig`), on ktrain's local runs (`ktrain.local.run`).

`train` renders the job as `job create` would and starts its pods as `ktrain job run --local`
does (with `ContainerBackendConfig`, `--container`): the plan, the checks and the files are made
before it returns (a job that cannot run raises there), then the pods run in a thread of their
own, as the SDK's `LocalJob` thread, and their lines are kept per pod for `get_job_logs`.
`list_jobs`, `get_job`, `wait_for_job_status` and `delete_job` see the jobs this client started
(as the SDK's, which keeps them in memory). Steps are named as on the cluster (`node-0`,
`node-1`, ..., the initializers), not the SDK local backend's single `train` step; the job's
status is Created before its pods start, Running, then Complete or Failed.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

from ktrain import constants as c
from ktrain.errors import JobFailedError, NotFoundError, NotProvidedError, RuntimeNotFoundError, UsageError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.local.run import LocalRunOptions, local_run
from ktrain.python_api import arguments as a
from ktrain.python_api import types as t
from ktrain.python_api.backends import TrainerBackend
from ktrain.python_api.client import job_name
from ktrain.python_api.sdk_views import runtime_of, step_selection

PHASES = {"pending": "Pending", "running": "Running", "succeeded": "Succeeded", "failed": "Failed"}
PULL_POLICIES = {"IfNotPresent": "missing", "Always": "always", "Never": "never"}
# The SDK's defaults for what ktrain takes from the runtime it renders with.
SDK_RUNTIME_SOURCES = ["github://kubeflow/trainer"]


def run_options(config: object, kind: str) -> Any:
    """The `LocalRunOptions` a backend config stands for (ktrain's or the SDK's, read by field)."""
    if kind == "LocalProcessBackendConfig":
        cleanup = a.field_of(config, "cleanup_venv")
        return LocalRunOptions(keep=cleanup is not None and not a.boolean(cleanup, "backend_config.cleanup_venv"))
    runtime = a.optional_text(a.field_of(config, "container_runtime"), "backend_config.container_runtime")
    if runtime is not None and runtime not in ("docker", "podman"):
        raise UsageError(f"backend_config.container_runtime must be docker or podman, not {a.shown(runtime)}")
    policy = a.text(a.field_of(config, "pull_policy") or "IfNotPresent", "backend_config.pull_policy")
    if policy not in PULL_POLICIES:
        raise UsageError(f"backend_config.pull_policy must be one of {', '.join(PULL_POLICIES)}, not {a.shown(policy)}")
    _refuse_sdk_only(config)
    remove = a.field_of(config, "auto_remove")
    return LocalRunOptions(
        container=runtime or "auto",
        pull=PULL_POLICIES[policy],
        container_host=a.optional_text(a.field_of(config, "container_host"), "backend_config.container_host"),
        remove=True if remove is None else a.boolean(remove, "backend_config.auto_remove"),
    )


def _refuse_sdk_only(config: object) -> None:
    """The SDK container backend's own runtime source and initializer settings: ktrain renders
    with its runtimes and the images they name, so only the SDK's defaults are accepted."""
    source = a.field_of(config, "runtime_source")
    sources = a.field_of(source, "sources") if source is not None else None
    if sources is not None and list(sources) != SDK_RUNTIME_SOURCES:
        raise UsageError(
            "backend_config.runtime_source: ktrain runs the runtimes it renders with",
            hint="give runtime_files=[...] to train() (or --runtime-file on the command line)",
        )
    defaults = t.ContainerBackendConfig()
    for name in ("dataset_initializer_image", "model_initializer_image", "initializer_timeout"):
        value = a.field_of(config, name)
        if value is not None and value != getattr(defaults, name):
            raise UsageError(
                f"backend_config.{name}: ktrain's initializers run the images and settings of the job's runtime",
                hint="set them in the runtime (runtime_files=[...]), as on the cluster",
            )


class LocalJob:
    """One job of a local backend: its run, the thread that runs it, its pods' lines."""

    def __init__(self, name: str, runtime: t.Runtime, run: Any) -> None:
        self.name = name
        self.runtime = runtime
        self.run = run
        self.created = datetime.now(timezone.utc)
        self.lines: dict[str, list[str]] = {}
        self.changed = threading.Condition()
        self.result: Any = None
        self.error: str | None = None
        self.done = False
        self.thread = threading.Thread(target=self._main, name=f"ktrain-local-{name}")

    def add_line(self, pod: str, text: str) -> None:
        with self.changed:
            self.lines.setdefault(pod, []).append(text)
            self.changed.notify_all()

    def _main(self) -> None:
        try:
            self.result = self.run.execute()
        except Exception as exc:  # a failure of the run itself: the job failed, the message says why
            self.error = str(exc) or type(exc).__name__
        finally:
            self.run.close()
            with self.changed:
                self.done = True
                self.changed.notify_all()

    @property
    def status(self) -> str:
        if not self.done:
            return t.TRAINJOB_RUNNING if self.run.runner is not None else t.TRAINJOB_CREATED
        ok = self.error is None and self.result is not None and self.result.exit_code == 0
        return t.TRAINJOB_COMPLETE if ok else t.TRAINJOB_FAILED

    @property
    def reason(self) -> str:
        if self.error is not None:
            return self.error
        return str(getattr(self.result, "message", "") or "")

    def steps(self) -> dict[str, tuple[str, str]]:
        """SDK step name -> (pod name, pod phase), in the plan's order."""
        plan = self.run.plan
        states = self.run.pod_states()
        launcher = any(s.name == c.LAUNCHER for s in plan.steps)
        out: dict[str, tuple[str, str]] = {}
        for step in plan.steps:
            for pod in step.pods:
                if pod.rjob in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER):
                    name = pod.rjob
                elif pod.rjob == c.LAUNCHER:
                    name = f"{c.NODE}-0"
                elif pod.rjob == c.NODE:
                    rank = pod.job_index * step.completions + pod.index
                    name = f"{c.NODE}-{rank + 1 if launcher else rank}"
                else:
                    name = pod.name
                out.setdefault(name, (pod.name, PHASES.get(states.get(pod.name, "pending"), "Pending")))
        return out

    def trainjob(self) -> t.TrainJob:
        steps = [t.Step(name=name, status=phase, pod_name=pod) for name, (pod, phase) in self.steps().items()]
        nodes = sum(1 for s in steps if s.name.startswith(f"{c.NODE}-"))
        return t.TrainJob(
            name=self.name,
            runtime=self.runtime,
            steps=steps,
            num_nodes=nodes or self.runtime.trainer.num_nodes,
            creation_timestamp=self.created,
            status=self.status,
        )

    def follow(self, pod: str) -> Iterator[str]:
        """The pod's lines as they come, until the pod or the job ends."""
        seen = 0
        while True:
            with self.changed:
                lines = self.lines.get(pod, [])
                while seen == len(lines) and not self._pod_over(pod):
                    self.changed.wait(timeout=0.5)
                    lines = self.lines.get(pod, [])
                fresh = lines[seen:]
                seen = len(lines)
                over = self._pod_over(pod)
            yield from fresh
            if over and not fresh:
                return

    def _pod_over(self, pod: str) -> bool:
        return self.done or self.run.pod_states().get(pod) in ("succeeded", "failed")


class LocalBackend(TrainerBackend):
    """The jobs of one `TrainerClient` with a local backend config."""

    target = "local"

    def __init__(self, config: object, kind: str) -> None:
        self.kind = kind
        self.option_backend = kind.removesuffix("Config")  # the SDK backend's name
        self.template = run_options(config, kind)
        self.jobs: dict[str, LocalJob] = {}

    @property
    def namespace(self) -> str:
        return "default"  # what a local run renders the job into

    def runtime_entries(self) -> list[Any]:
        """ktrain's own runtimes, as `ktrain runtime list` shows them."""
        return RuntimeRegistry().entries()

    def runtime_missing(self, name: str) -> Exception:
        return RuntimeNotFoundError(
            f"runtime {a.shown(name)} not found among ktrain's runtimes", hint="`ktrain runtime list` shows them"
        )

    def submit(self, request: Any, registry: Any) -> str:
        return self.train(request, registry, runtime_of)

    def get_job_events(self, name: object) -> list[t.Event]:
        raise NotProvidedError(
            "get_job_events: a job run on this machine has no Kubernetes events",
            hint="get_job() shows its steps, get_job_logs() their output",
        )

    def train(self, request: Any, registry: Any, describe: Callable[[Any], t.Runtime]) -> str:
        """Render and prepare the job, start its pods; `describe`: a runtime entry as the SDK's Runtime."""
        from ktrain.service.render import render_request

        outcome = render_request(request, registry)
        name = str(outcome.job.name)
        if name in self.jobs:
            raise UsageError(f"a local job named {name} exists already", hint="delete_job() it first, or give name=")
        options = copy.copy(self.template)
        run = local_run(outcome, request.overrides, options)
        job = LocalJob(name, describe(outcome.runtime), run)
        if self.kind == "LocalProcessBackendConfig":  # the SDK's local process backend: naive local time
            from ktrain.python_api.sdk_values import local_now

            job.created = local_now()
        options.on_line = job.add_line
        try:
            run.prepare()  # what cannot run is refused here, before the job exists
        except BaseException:
            run.close()
            raise
        self.jobs[name] = job
        job.thread.start()
        return name

    def _job(self, name: object) -> LocalJob:
        checked = job_name(name)
        job = self.jobs.get(checked)
        if job is None:
            raise NotFoundError(f"no local job named {checked} (this client ran {len(self.jobs)})")
        return job

    def list_jobs(self, runtime: str | None) -> list[t.TrainJob]:
        return [j.trainjob() for j in self.jobs.values() if runtime is None or j.runtime.name == runtime]

    def get_job(self, name: object) -> t.TrainJob:
        return self._job(name).trainjob()

    def failure(self, name: str) -> JobFailedError:
        job = self._job(name)
        return JobFailedError(f"TrainJob {name} is Failed" + (f": {job.reason}" if job.reason else ""))

    def get_job_logs(self, name: object, step: str, follow: bool) -> Iterator[str]:
        job = self._job(name)
        step_selection(step, job.runtime)  # the step's name, checked as on the cluster
        found = job.steps().get(step)
        if found is None:
            return iter(())
        pod = found[0]
        if follow:  # as the SDK's local backends stream them: each line with its newline
            return (line + "\n" for line in job.follow(pod))
        with job.changed:
            lines = list(job.lines.get(pod, []))
        if self.kind == "ContainerBackendConfig":  # the SDK's container backend: the whole log, one string
            return iter(["".join(line + "\n" for line in lines)])
        return iter(lines)

    def delete_job(self, name: object) -> None:
        job = self._job(name)
        job.run.cancel("the job was deleted")
        job.thread.join()
        del self.jobs[job.name]
