"""Run a `RunPlan` on this machine: one process group per container, output prefixed by pod,
JobSet's start order and success policy, and nothing left running afterwards.

Each container is started in a session of its own (`start_new_session`), so a signal for the run
reaches every process a pod started and a terminal's Ctrl-C reaches only ktrain, which then stops
them all: SIGTERM to each group, SIGKILL to what is left after a grace period. When a pod's main
process ends, what it left in its group is killed too, as the kubelet tears a container down.
There are no restarts: the first container that fails ends the run with its exit code (a signal
N gives 128+N, as a shell reports it).

With an engine (`ktrain.local.containers.Engine`) each container is an `<engine> run` of its image
instead (its client is the process watched here): the run ends with `<engine> stop` of the
containers still running (TERM, then KILL after the grace period) and `<engine> rm --force` of
every container it started.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ktrain.errors import KtrainError, UsageError
from ktrain.local.containers import container_name, run_argv
from ktrain.local.plan import programs
from ktrain.local.run_plan import LocalContainer, LocalPod, RunPlan, Step

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import IO, Any

    from ktrain.local.containers import Engine
    from ktrain.local.processes import Tracker

EXIT_TIMEOUT = 124
EXIT_ENGINE = 125  # podman/docker run: the engine itself failed (no image, a bad option, ...)
GRACE_SECONDS = 5.0
PIECE_BYTES = 64 * 1024  # the most of a process's output heard as one piece
_COLOURS = ("36", "33", "35", "32", "34", "31", "96", "93", "95", "92", "94", "91")


@dataclass
class RunResult:
    exit_code: int
    message: str  # what ended the run, one line (empty on success)
    notes: list[str] = field(default_factory=list)
    failed_pod: str | None = None
    failed_container: str | None = None  # the failed pod's container (the failure policy's containerName)


class LocalRunError(KtrainError):
    """A local run that did not succeed; its exit code is the run's (the failing pod's code,
    124 on timeout, 128+N on signal N)."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.message)
        self.exit_code = result.exit_code
        self.result = result


def write_files(plan: RunPlan) -> None:
    """The run's directories and the files its volumes hold."""
    for path in plan.dirs:
        os.makedirs(path, exist_ok=True)
        if plan.container:  # the image's user may be anyone, as an emptyDir is writable for all
            os.chmod(path, 0o777)
    for planned in plan.files:
        os.makedirs(os.path.dirname(planned.path), exist_ok=True)
        fd = os.open(planned.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(planned.data)
        os.chmod(planned.path, planned.mode & 0o777)


def process_env(container: LocalContainer, base: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    env.update(container.env)
    return env


def check_programs(plan: RunPlan, base: dict[str, str], mpi: bool) -> None:
    """Every program a pod runs exists here, before any starts (the image is not pulled)."""
    for pod in plan.pods():
        for container in [*pod.init, *pod.containers]:
            env = process_env(container, base)
            for program in programs(container.argv):
                if "/" in program:
                    found = os.access(program, os.X_OK) and os.path.isfile(program)
                else:
                    found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
                if found:
                    continue
                hint = "install it here, or run the job on a cluster"
                if os.path.basename(program) in ("mpirun", "mpiexec") or mpi:
                    hint = "install an MPI (Open MPI on Debian/Ubuntu: apt-get install openmpi-bin)"
                raise UsageError(
                    f"pod {pod.name} (container {container.name}) runs `{program}`, which is not found on this "
                    f"machine (the image {container.image or '(none)'} is not pulled: a local run uses this "
                    "machine's programs)",
                    hint=hint,
                )
            words = " ".join(container.argv)
            if mpi and ("mpirun" in words or "mpiexec" in words):
                launcher = "mpirun" if "mpirun" in words else "mpiexec"
                if shutil.which(launcher, path=env.get("PATH", os.defpath)) is None:
                    raise UsageError(
                        f"pod {pod.name} runs `{launcher}`, and there is no {launcher} on this machine",
                        hint="install an MPI (Open MPI on Debian/Ubuntu: apt-get install openmpi-bin)",
                    )


class _Proc:
    """One running container."""

    def __init__(
        self, pod: _PodRun, container: LocalContainer, popen: subprocess.Popen[bytes], name: str = "", key: str = ""
    ) -> None:
        self.key = key  # the process tracker's (local mode)
        self.pod = pod
        self.container = container
        self.popen = popen
        self.name = name  # the engine's container name (container mode)
        self.done = False


class _PodRun:
    def __init__(self, pod: LocalPod, step: Step) -> None:
        self.pod = pod
        self.step = step
        self.state = "pending"  # pending | running | succeeded | failed
        self.init_left = [c for c in pod.init if not c.sidecar]
        self.sidecars: list[_Proc] = []
        self.active: list[_Proc] = []  # the init container running, or the main containers
        self.phase = "init"


class Runner:
    def __init__(
        self,
        plan: RunPlan,
        *,
        base_env: dict[str, str],
        out: IO[str],
        colour: bool = False,
        timeout: float | None = None,
        grace: float = GRACE_SECONDS,
        cwd: str | None = None,
        engine: Engine | None = None,
        remove: bool = True,
        pull: str | None = None,
        on_line: Callable[[str, str], None] | None = None,
        on_output: Callable[[str, str], None] | None = None,
    ) -> None:
        self.plan = plan
        self.engine = engine  # container mode: each container an `<engine> run`
        self.remove = remove  # container mode: remove the containers afterwards
        self.pull = pull  # container mode: the run's pull policy (else each container's)
        self.on_line = on_line  # (pod, line) instead of writing `out`
        self.on_output = on_output  # (pod, piece) as it comes: each `\r` or `\n`-ended piece (progress)
        self.stop_reason: str | None = None  # `cancel`
        self.base_env = base_env
        self.out = out
        self.timeout = timeout
        self.grace = grace
        self.cwd = cwd or os.getcwd()
        self.events: queue.Queue[tuple[_Proc, int]] = queue.Queue()
        self.lock = threading.Lock()
        self.procs: list[_Proc] = []
        self.threads: list[threading.Thread] = []
        self.stop_signal: int | None = None
        self.notes: list[str] = []
        width = max((len(p.name) for p in plan.pods()), default=0) + 2
        self.prefix: dict[str, bytes] = {}
        for i, pod in enumerate(plan.pods()):
            label = f"[{pod.name}]".ljust(width)
            if colour:
                label = f"\x1b[{_COLOURS[i % len(_COLOURS)]}m{label}\x1b[0m"
            self.prefix[pod.name] = (label + " ").encode()
        self.pods: dict[str, list[_PodRun]] = {s.name: [_PodRun(p, s) for p in s.pods] for s in plan.steps}
        self.started_steps: set[str] = set()
        self.tracker: Tracker | None = None  # every process of every container (ktrain.local.processes)

    def cancel(self, reason: str) -> None:
        """Stop every pod and end the run (from another thread): exit 143, as SIGTERM."""
        self.stop_reason = reason

    def pod_states(self) -> dict[str, str]:
        """Each pod's state by name: pending | running | succeeded | failed."""
        return {r.pod.name: r.state for runs in self.pods.values() for r in runs}

    # ------------------------------------------------------------------ the loop

    def run(self) -> RunResult:
        handlers = self._install_signals()
        if self.engine is None:
            from ktrain.local.processes import Tracker

            self.tracker = Tracker()
        left: list[int] = []
        try:
            result = self._loop()
        finally:
            left = self._stop_all()
            if self.tracker is not None:
                self.tracker.close()
            for thread in self.threads:
                thread.join(timeout=5)
            self._restore_signals(handlers)
            try:
                self.out.flush()
            except (OSError, ValueError):
                pass
        if left:  # say "every pod was stopped" only when it is true
            what = f"{len(left)} process(es) the pods started could not be stopped (pid {', '.join(map(str, left))})"
            result.message = result.message.replace("every pod was stopped", what) or what
        return result

    def _loop(self) -> RunResult:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        self._start_ready_steps()
        while True:
            if self.stop_reason is not None:
                return RunResult(128 + signal.SIGTERM, f"{self.stop_reason}: every pod was stopped", self.notes)
            if self.stop_signal is not None:
                name = signal.Signals(self.stop_signal).name
                return RunResult(128 + self.stop_signal, f"interrupted ({name}): every pod was stopped", self.notes)
            outcome = self._outcome()
            if outcome is not None:
                return outcome
            if not any(not p.done for p in self.procs) and not self._startable():
                waiting = [s.name for s in self.plan.steps if s.name not in self.started_steps]
                if not waiting:
                    return RunResult(1, "no step has a pod to run", self.notes)
                return RunResult(1, f"nothing left to run, and {', '.join(waiting)} can never start", self.notes)
            wait = 0.2
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    message = f"timed out after {self.timeout:g}s: every pod was stopped"
                    return RunResult(EXIT_TIMEOUT, message, self.notes)
                wait = min(wait, left)
            try:
                proc, code = self.events.get(timeout=wait)
            except queue.Empty:
                continue
            failed = self._exited(proc, code)
            if failed is not None:
                return failed
            self._start_ready_steps()

    def _exited(self, proc: _Proc, code: int) -> RunResult | None:
        proc.done = True
        run = proc.pod
        if proc not in run.active or run.state != "running":
            return None  # a sidecar ended, or the pod was already done
        if code != 0:
            run.state = "failed"
            self._stop_pod(run)
            how = f"was killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
            if self.engine is not None and code == EXIT_ENGINE:
                how += f" ({self.engine.name} could not run it: see its message above)"
            status = 128 - code if code < 0 else code
            what = "init container" if run.phase == "init" else "container"
            return RunResult(
                status,
                f"pod {run.pod.name} ({what} {proc.container.name}) {how}",
                self.notes,
                failed_pod=run.pod.name,
                failed_container=proc.container.name,
            )
        if run.phase == "init":
            self._next_init(run)
        elif all(p.done for p in run.active):
            run.state = "succeeded"
            self._stop_pod(run)
            self._start_next_index(run)
        return None

    def _outcome(self) -> RunResult | None:
        targets = self.plan.success_targets or [s.name for s in self.plan.steps]
        done: list[bool] = []
        for step in self.plan.steps:
            if step.name not in targets:
                continue
            if step.skipped is not None:
                done.append(True)
                continue
            jobs = [self._job_done(step, j) for j in range(step.replicas)]
            done.append(any(jobs) if self.plan.success_operator == "Any" else all(jobs))
        if not done:
            return None
        reached = any(done) if self.plan.success_operator == "Any" else all(done)
        if not reached:
            return None
        left = sorted({p.pod.pod.name for p in self.procs if not p.done})
        if left:
            self.notes.append(
                f"the success policy ({self.plan.success_operator} of {', '.join(targets)}) is met: "
                f"stopping {', '.join(left)}"
            )
        return RunResult(0, "", self.notes)

    def _job_done(self, step: Step, job_index: int) -> bool:
        runs = [r for r in self.pods[step.name] if r.pod.job_index == job_index]
        return bool(runs) and all(r.state == "succeeded" for r in runs)

    # ------------------------------------------------------------------ starting

    def _step_ready(self, name: str) -> bool:
        """JobSet's `Ready`: every pod of the step started (a local run cannot see readiness)."""
        step = next((s for s in self.plan.steps if s.name == name), None)
        if step is None or step.skipped is not None:
            return True
        return name in self.started_steps and all(r.state != "pending" for r in self.pods[name])

    def _step_complete(self, name: str) -> bool:
        step = next((s for s in self.plan.steps if s.name == name), None)
        if step is None or step.skipped is not None:
            return True
        return all(self._job_done(step, j) for j in range(step.replicas))

    def _can_start(self, index: int, step: Step) -> bool:
        if self.plan.in_order and index > 0 and not self._step_ready(self.plan.steps[index - 1].name):
            return False
        for dep, status in step.depends_on:
            if not (self._step_complete(dep) if status == "Complete" else self._step_ready(dep)):
                return False
        return True

    def _startable(self) -> bool:
        return any(
            s.name not in self.started_steps and s.skipped is None and self._can_start(i, s)
            for i, s in enumerate(self.plan.steps)
        )

    def _start_ready_steps(self) -> None:
        progress = True
        while progress and self.stop_signal is None:
            progress = False
            for i, step in enumerate(self.plan.steps):
                if step.name in self.started_steps or not self._can_start(i, step):
                    continue
                self.started_steps.add(step.name)
                progress = True
                for run in self.pods[step.name]:
                    if run.pod.index < step.parallelism:
                        self._start_pod(run)

    def _start_next_index(self, finished: _PodRun) -> None:
        """Indexed Jobs with parallelism < completions: the next index of the same Job."""
        for run in self.pods[finished.step.name]:
            if run.state == "pending" and run.pod.job_index == finished.pod.job_index:
                self._start_pod(run)
                return

    def _start_pod(self, run: _PodRun) -> None:
        run.state = "running"
        for container in run.pod.init:
            if container.sidecar:
                run.sidecars.append(self._spawn(run, container))
        self._next_init(run)

    def _next_init(self, run: _PodRun) -> None:
        if run.init_left:
            run.active = [self._spawn(run, run.init_left.pop(0))]
            return
        run.phase = "main"
        run.active = [self._spawn(run, c) for c in run.pod.containers]

    def _spawn(self, run: _PodRun, container: LocalContainer) -> _Proc:
        if self.engine is not None:
            return self._spawn_container(run, container)
        cwd = container.cwd
        if cwd is None or (not container.cwd_mapped and not os.path.isdir(cwd)):
            if cwd is not None:
                note = f"workingDir {cwd} (from the image) does not exist here: pods run in {self.cwd}"
                if note not in self.notes:
                    self.notes.append(note)
            cwd = self.cwd
        key = f"{run.pod.name}/{container.name}/{len(self.procs)}"
        env = process_env(container, self.base_env)
        if self.tracker is not None:
            env.update(self.tracker.env(key))
        try:
            popen = subprocess.Popen(
                container.argv,
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise UsageError(f"pod {run.pod.name}: cannot start {container.argv[0]}: {exc.strerror}") from None
        if self.tracker is not None:
            self.tracker.add(key, popen.pid, popen.stdout.fileno() if popen.stdout else None)
        return self._watch(_Proc(run, container, popen, key=key))

    def _spawn_container(self, run: _PodRun, container: LocalContainer) -> _Proc:
        assert self.engine is not None
        argv, passed = run_argv(
            self.engine.name, self.plan.run_name, run.pod, container, remove=self.remove, pull=self.pull
        )
        argv[0] = self.engine.path
        try:
            popen = subprocess.Popen(
                argv,
                env=self.engine.run_env(passed),
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise UsageError(f"pod {run.pod.name}: cannot start {self.engine.name}: {exc.strerror}") from None
        return self._watch(_Proc(run, container, popen, container_name(self.plan.run_name, run.pod, container)))

    def _watch(self, proc: _Proc) -> _Proc:
        self.procs.append(proc)
        reader = threading.Thread(target=self._pump, args=(proc,), daemon=True)
        waiter = threading.Thread(target=self._wait, args=(proc, reader), daemon=True)
        reader.start()
        waiter.start()
        self.threads += [reader, waiter]
        return proc

    # ------------------------------------------------------------------ threads

    def _pump(self, proc: _Proc) -> None:
        prefix = self.prefix[proc.pod.pod.name]
        stream = proc.popen.stdout
        assert stream is not None
        buffer = getattr(self.out, "buffer", None)
        for line in self._lines(proc, stream):
            if self.on_line is not None:
                self.on_line(proc.pod.pod.name, line.decode("utf-8", "replace").rstrip("\n"))
                continue
            if not line.endswith(b"\n"):
                line += b"\n"
            with self.lock:
                try:
                    if buffer is not None:
                        buffer.write(prefix + line)
                        buffer.flush()
                    else:
                        self.out.write((prefix + line).decode("utf-8", "replace"))
                        self.out.flush()
                except (OSError, ValueError):
                    pass  # a closed stdout (`| head`) must not stop the run
        stream.close()

    def _lines(self, proc: _Proc, stream: IO[bytes]) -> Iterator[bytes]:
        """The container's output lines, as `readline` gives them; with `on_output`, each piece is
        heard as it comes too (a tqdm bar's redraws end in `\r`, not `\n`)."""
        if self.on_output is None:
            yield from iter(stream.readline, b"")
            return
        name = proc.pod.pod.name
        line = bytearray()
        for piece in output_pieces(stream):
            self.on_output(name, piece.decode("utf-8", "replace"))
            line += piece
            if piece.endswith(b"\n"):
                yield bytes(line)
                line.clear()
        if line:
            yield bytes(line)

    def _wait(self, proc: _Proc, reader: threading.Thread) -> None:
        code = proc.popen.wait()
        for _ in range(50):  # what the container's main process left behind, detached ones too
            self._signal(proc, signal.SIGKILL)
            reader.join(0.1)
            if not reader.is_alive():
                break
        self.events.put((proc, code))

    def _signal(self, proc: _Proc, sig: int) -> None:
        if self.tracker is not None and proc.key:
            self.tracker.signal(proc.key, sig)
        else:
            _killpg(proc.popen.pid, sig)

    # ------------------------------------------------------------------ stopping

    def _stop_pod(self, run: _PodRun) -> None:
        for proc in [*run.sidecars, *run.active]:
            if not proc.done:
                self._signal(proc, signal.SIGTERM)

    def _stop_all(self) -> list[int]:
        """Stop everything; the pids still alive after that."""
        if self.tracker is not None:
            left = self.tracker.end([p.key for p in self.procs], self.grace)
            for proc in self.procs:
                try:
                    proc.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
                    pass
            return left
        running = [p for p in self.procs if p.popen.poll() is None]
        if self.engine is not None:
            # The engine stops the containers (TERM, KILL after the grace period); their clients then end.
            self.engine.stop([p.name for p in running], self.grace)
        else:
            for proc in running:
                _killpg(proc.popen.pid, signal.SIGTERM)
        end = time.monotonic() + self.grace
        for proc in running:
            try:
                proc.popen.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for proc in running:
            if proc.popen.poll() is None:
                _killpg(proc.popen.pid, signal.SIGKILL)
            try:
                proc.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
                pass
        if self.engine is not None and self.remove:
            self.engine.remove([p.name for p in self.procs])  # what `--rm` has not removed yet
        return []

    def _install_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        old: dict[int, Any] = {}

        def handler(signum: int, _frame: object) -> None:
            self.stop_signal = signum

        for signum in (signal.SIGINT, signal.SIGTERM):
            old[signum] = signal.signal(signum, handler)
        return old

    def _restore_signals(self, handlers: dict[int, Any]) -> None:
        for signum, old in handlers.items():
            signal.signal(signum, old)


def output_pieces(stream: IO[bytes], limit: int = PIECE_BYTES) -> Iterator[bytes]:
    """A stream's bytes as they come, cut after each `\r` and `\n`, and where no line end comes
    within `limit` bytes (bounded, whatever a process writes)."""
    import re

    ended = re.compile(rb"[^\r\n]*[\r\n]")
    read = getattr(stream, "read1", stream.read)
    rest = b""
    while True:
        chunk = read(limit)
        if not chunk:
            break
        rest += chunk
        start = 0
        for match in ended.finditer(rest):
            piece = match.group()
            while len(piece) > limit:
                yield piece[:limit]
                piece = piece[limit:]
            yield piece
            start = match.end()
        rest = rest[start:]
        while len(rest) >= limit:
            yield rest[:limit]
            rest = rest[limit:]
    if rest:
        yield rest


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def colour_wanted(stream: IO[str]) -> bool:
    """Colour on a terminal, unless NO_COLOR (https://no-color.org) or TERM=dumb says otherwise."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def default_stdout() -> IO[str]:
    return sys.stdout
