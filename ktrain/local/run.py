"""A local run from rendered objects: plan, prepare, run, clean up (`ktrain job run --local`,
`ktrain.train(..., backend="local")`, `ktrain.TrainerClient` with a local backend config).

`LocalRun` holds the steps apart (`prepare`, `execute`, `close`), for a caller that runs the pods
in the background (the SDK's local backends); `run_objects` does all three."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ktrain.errors import UsageError
from ktrain.local.plan import ml_policy_of, plan_run
from ktrain.local.progress_feed import ProgressFeed, rank0_pod
from ktrain.local.restarts import execute_with_restarts, policy_of
from ktrain.local.run_plan import PlanOptions, RunPlan
from ktrain.local.runner import (
    GRACE_SECONDS,
    LocalRunError,
    Runner,
    RunResult,
    check_programs,
    colour_wanted,
    write_files,
)
from ktrain.local.status_server import serve_run, show_progress

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

    from ktrain.local.containers import Engine
    from ktrain.local.runner import Runner as RunnerType
    from ktrain.util.jsondata import Obj

DEFAULT_MAX_PROCESSES = 64
_SAFE_PATH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_.+-")


@dataclass
class LocalRunOptions:
    timeout: float | None = None  # seconds
    max_processes: int = DEFAULT_MAX_PROCESSES
    pip: list[str] = field(default_factory=list)
    pip_index_urls: list[str] = field(default_factory=list)
    out: IO[str] | None = None  # where the pods' lines go (default: stdout)
    colour: bool | None = None  # default: on a terminal, unless NO_COLOR
    env: dict[str, str] | None = None  # the environment pods start from (default: this process's)
    notify: Callable[[str], None] | None = None  # notes (default: "note: ..." on stderr)
    keep: bool = False  # keep the run's directory (volumes, emptyDirs) afterwards
    grace: float = GRACE_SECONDS
    cwd: str | None = None  # where pods without a working directory run (default: the current one)
    container: str | None = None  # podman | docker | "auto" (the first that works): pods in their images
    pull: str | None = None  # containers: always | missing | never for every image (else imagePullPolicy)
    container_host: str | None = None  # containers: the engine's address (DOCKER_HOST / CONTAINER_HOST)
    remove: bool = True  # containers: remove them and the run's network afterwards
    on_line: Callable[[str, str], None] | None = None  # (pod, line) instead of printing the pods' lines
    # The run's progress: what the trainer reports to the run's status endpoint
    # (ktrain.local.status_server), else what its rank-0 pod's output shows (ktrain.local.progress_feed),
    # throttled; default: a `progress:` line on stderr. `status=False`: no endpoint.
    on_progress: Callable[[Any], None] | None = None
    status: bool = True


def _stderr_note(text: str) -> None:
    sys.stderr.write(f"note: {text}\n")


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick; each pod binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not Linux/macOS
        return 0


def make_run_dir() -> str:
    """The run's directory; its path is written into commands and scripts, so it must need no quoting."""
    path = tempfile.mkdtemp(prefix="ktrain-run-")
    if set(path) <= _SAFE_PATH:
        return path
    os.rmdir(path)
    path = tempfile.mkdtemp(prefix="ktrain-run-", dir="/tmp")
    if set(path) <= _SAFE_PATH:
        return path
    os.rmdir(path)  # pragma: no cover - /tmp itself is safe
    raise UsageError(f"the temporary directory {path} has characters that would need quoting in a shell")


def plan_objects(
    objects: list[Obj],
    ml_policy: str | None,
    run_dir: str,
    max_processes: int,
    container: bool = False,
    restart_attempt: int = 0,
) -> RunPlan:
    return plan_run(
        objects,
        PlanOptions(
            run_dir=run_dir,
            alloc_port=free_port,
            python=sys.executable,
            ml_policy=ml_policy,
            cpu_count=os.cpu_count() or 1,
            memory_bytes=_memory_bytes(),
            as_root=hasattr(os, "geteuid") and os.geteuid() == 0,
            max_processes=max_processes,
            container=container,
            restart_attempt=restart_attempt,
        ),
    )


class LocalRun:
    """One local run: `prepare` (plan, checks, files, the engine's network), `execute` (the pods,
    until the run ends), `close` (the run's directory and network). `cancel` stops it from
    another thread."""

    def __init__(self, objects: list[Obj], ml_policy: str | None, options: LocalRunOptions) -> None:
        self.objects = objects
        self.ml_policy = ml_policy
        self.options = options
        self.notify = options.notify or _stderr_note
        self.run_dir: str | None = None
        self.plan: RunPlan | None = None
        self.engine: Engine | None = None
        self.network = False
        self.runner: RunnerType | None = None
        self.cancelled: str | None = None
        self.status_server: Any = None
        self.progress: ProgressFeed | None = None

    def prepare(self) -> None:
        options = self.options
        base = dict(os.environ if options.env is None else options.env)
        self.run_dir = make_run_dir()
        if options.container:
            from ktrain.local.containers import find_engine

            wanted = None if options.container == "auto" else options.container
            self.engine = find_engine(wanted, dict(os.environ), options.container_host)
        plan = plan_objects(
            self.objects, self.ml_policy, self.run_dir, options.max_processes, container=self.engine is not None
        )
        if self.engine is None:
            if options.pip:
                from ktrain.local.venv import ensure_venv

                bin_dir = ensure_venv(options.pip, options.pip_index_urls, path=base.get("PATH"), notify=self.notify)
                base["PATH"] = bin_dir + os.pathsep + base.get("PATH", os.defpath)
                base["VIRTUAL_ENV"] = os.path.dirname(bin_dir)
            check_programs(plan, base, mpi=self.ml_policy == "mpi")
        for text in plan.notes:
            self.notify(text)
        if plan.images and self.engine is None:
            self.notify(
                f"the image{'s' if len(plan.images) > 1 else ''} ({', '.join(plan.images)}) "
                f"{'are' if len(plan.images) > 1 else 'is'} not pulled: the pods run this machine's programs"
            )
        for step in plan.steps:
            if step.skipped:
                self.notify(f"{step.name}: not started ({step.skipped})")
        write_files(plan)
        self.base = base
        self.plan = plan
        self.progress = ProgressFeed(
            self.options.on_progress or show_progress, rank0_pod(plan, self.objects, self.ml_policy)
        )
        self.status_server = self._serve_status(plan, self.progress)
        if self.engine is not None:
            self.engine.create_network(plan.run_name)
            self.network = True
            self.notify(
                f"pods run in their images under {self.engine.name}, on the network {plan.run_name} "
                "where their host names resolve"
            )

    def _serve_status(self, plan: RunPlan, progress: ProgressFeed) -> Any:
        """The run's TrainJob status endpoint (processes only: a container cannot reach 127.0.0.1 here)."""
        if not self.options.status or self.engine is not None or self.run_dir is None:
            return None

        return serve_run(plan, self.objects, self.run_dir, progress.status)

    def execute(self) -> RunResult:
        """Run the pods to the end, restarting the job as its failure policy says (local/restarts.py)."""
        policy = policy_of(self.objects)
        return self.execute_once() if policy is None else execute_with_restarts(self, policy)

    def restart(self, attempt: int) -> None:
        """Plan attempt `attempt` in the same directory: new pods (emptyDirs empty), claims kept."""
        assert self.run_dir is not None and self.plan is not None, "prepare() first"
        shutil.rmtree(os.path.join(self.run_dir, "pods"), ignore_errors=True)
        self.plan = plan_objects(
            self.objects,
            self.ml_policy,
            self.run_dir,
            self.options.max_processes,
            container=self.engine is not None,
            restart_attempt=attempt,
        )
        write_files(self.plan)

    def execute_once(self) -> RunResult:
        assert self.plan is not None, "prepare() first"
        options = self.options
        out = options.out or sys.stdout
        colour = colour_wanted(out) if options.colour is None else options.colour
        self.runner = Runner(
            self.plan,
            base_env=self.base,
            out=out,
            colour=colour,
            timeout=options.timeout,
            grace=options.grace,
            cwd=options.cwd,
            engine=self.engine,
            remove=options.remove,
            pull=options.pull,
            on_line=options.on_line,
            on_output=None if self.progress is None else self.progress.line,
        )
        if self.cancelled is not None:
            self.runner.cancel(self.cancelled)
        result = self.runner.run()
        for text in result.notes:
            self.notify(text)
        return result

    def cancel(self, reason: str) -> None:
        self.cancelled = reason
        if self.runner is not None:
            self.runner.cancel(reason)

    def pod_states(self) -> dict[str, str]:
        if self.runner is not None:
            return self.runner.pod_states()
        return {p.name: "pending" for p in self.plan.pods()} if self.plan is not None else {}

    def close(self) -> None:
        if self.status_server is not None:
            self.status_server.stop()
            self.status_server = None
        if self.progress is not None:
            self.progress.close()  # the newest progress, once
            self.progress = None
        if self.engine is not None and self.network and self.plan is not None:
            if self.options.remove:
                self.engine.remove_network(self.plan.run_name)
            else:
                self.notify(f"the containers and the network {self.plan.run_name} are kept")
            self.network = False
        if self.run_dir is None:
            return
        if self.options.keep or (self.engine is not None and not self.options.remove):
            self.notify(f"the run's files are kept in {self.run_dir}")
        else:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        self.run_dir = None


def run_objects(objects: list[Obj], ml_policy: str | None, options: LocalRunOptions) -> RunResult:
    """Run rendered objects (what `job render` prints, as dicts) on this machine."""
    run = LocalRun(objects, ml_policy, options)
    try:
        run.prepare()
        return run.execute()
    finally:
        run.close()


def local_run(outcome: Any, overrides: Any, options: LocalRunOptions | None = None) -> LocalRun:
    """A `LocalRun` of a render outcome, with the request's `--pip` packages (`overrides`: its
    `JobOverrides`); not started."""
    opts = options or LocalRunOptions()
    opts.pip = list(overrides.pip or [])
    opts.pip_index_urls = list(overrides.pip_index_urls or [])
    return LocalRun(outcome.result.objects, ml_policy_of(outcome.runtime.runtime), opts)


def run_checked(outcome: Any, overrides: Any, options: LocalRunOptions | None = None) -> str:
    """Run a render outcome to its end (`local_run`); returns the job's name, raises
    `LocalRunError` when the run fails (the CLI's `job run --local`, the Python API's
    `backend="local"`)."""
    run = local_run(outcome, overrides, options)
    try:
        run.prepare()
        result = run.execute()
    finally:
        run.close()
    if result.exit_code != 0:
        raise LocalRunError(result)
    return str(outcome.job.name)
