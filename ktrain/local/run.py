"""A local run from rendered objects: plan, prepare, run, clean up (`ktrain job run --local`,
`ktrain.train(..., backend="local")`)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from ktrain.errors import UsageError
from ktrain.local.plan import PlanOptions, RunPlan, plan_run
from ktrain.local.runner import GRACE_SECONDS, Runner, RunResult, check_programs, colour_wanted, write_files
from ktrain.util.structs import field, struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

    Obj = dict[str, Any]

DEFAULT_MAX_PROCESSES = 64
_SAFE_PATH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_.+-")


@struct
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


def _stderr_note(text: str) -> None:
    sys.stderr.write(f"note: {text}\n")


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick; each pod binds it soon after)."""
    import socket

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


def plan_objects(objects: list[Obj], ml_policy: str | None, run_dir: str, max_processes: int) -> RunPlan:
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
        ),
    )


def run_objects(objects: list[Obj], ml_policy: str | None, options: LocalRunOptions) -> RunResult:
    """Run rendered objects (what `job render` prints, as dicts) on this machine."""
    notify = options.notify or _stderr_note
    out = options.out or sys.stdout
    base = dict(os.environ if options.env is None else options.env)
    run_dir = make_run_dir()
    try:
        plan = plan_objects(objects, ml_policy, run_dir, options.max_processes)
        if options.pip:
            from ktrain.local.venv import ensure_venv

            bin_dir = ensure_venv(options.pip, options.pip_index_urls, path=base.get("PATH"), notify=notify)
            base["PATH"] = bin_dir + os.pathsep + base.get("PATH", os.defpath)
            base["VIRTUAL_ENV"] = os.path.dirname(bin_dir)
        check_programs(plan, base, mpi=ml_policy == "mpi")
        for text in plan.notes:
            notify(text)
        if plan.images:
            notify(
                f"the image{'s' if len(plan.images) > 1 else ''} ({', '.join(plan.images)}) "
                f"{'are' if len(plan.images) > 1 else 'is'} not pulled: the pods run this machine's programs"
            )
        for step in plan.steps:
            if step.skipped:
                notify(f"{step.name}: not started ({step.skipped})")
        write_files(plan)
        colour = colour_wanted(out) if options.colour is None else options.colour
        runner = Runner(
            plan, base_env=base, out=out, colour=colour, timeout=options.timeout, grace=options.grace, cwd=options.cwd
        )
        result = runner.run()
        for text in result.notes:
            notify(text)
        return result
    finally:
        if options.keep:
            notify(f"the run's files are kept in {run_dir}")
        else:
            shutil.rmtree(run_dir, ignore_errors=True)


def run_outcome(outcome: Any, options: LocalRunOptions) -> RunResult:
    """Run a `ktrain.service.requests.RenderOutcome` (its objects and its runtime's ML policy)."""
    from ktrain.local.plan import ml_policy_of

    return run_objects(outcome.result.objects, ml_policy_of(outcome.runtime.runtime), options)


def run_checked(outcome: Any, overrides: Any, options: LocalRunOptions | None = None) -> str:
    """`run_outcome` with the request's `--pip` packages (`overrides`: its `JobOverrides`);
    returns the job's name, raises `LocalRunError` when the run fails (the Python API's
    `backend="local"`)."""
    from ktrain.local.runner import LocalRunError

    opts = options or LocalRunOptions()
    opts.pip = list(overrides.pip or [])
    opts.pip_index_urls = list(overrides.pip_index_urls or [])
    result = run_outcome(outcome, opts)
    if result.exit_code != 0:
        raise LocalRunError(result)
    return str(outcome.job.name)
