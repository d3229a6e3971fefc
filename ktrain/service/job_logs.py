"""`job logs` (and `job create --follow`, `ktrain.Client().logs`, `TrainerClient.get_job_logs`):
the selected pods' logs so far, or followed as pods come and go until the job ends."""

from __future__ import annotations

import time

from ktrain.cluster import reads
from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.cluster.reads import find_job, find_jobset, get_custom, iter_lines, job_pods, read_log
from ktrain.cluster.transport import TransportError
from ktrain.errors import (
    KtrainError,
    NotFoundError,
)
from ktrain.jobs import state as status
from ktrain.jobs.logs import (
    Cursor,
    LogLine,
    LogOptions,
    LogSelection,
    container_status,
    default_step,
    describe_pod,
    has_started,
    no_pod_error,
    pick_container,
    select_pods,
)
from ktrain.util.jsondata import Obj

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from typing import Any

    Emit = Callable[[status.PodSummary, str], None]
    Notice = Callable[[str], None]


def _emit_lines(cluster: KubeCluster, emit: Emit, pod: Obj, response: Any, timestamps: bool) -> None:
    summary = status.summarize_pod(pod)
    try:
        for raw in iter_lines(response):
            line = LogLine(raw)
            emit(summary, raw if timestamps else line.text)
    except TransportError as exc:  # the stream broke after it began
        raise cluster.translate(exc, f"logs of pod {(pod.get('metadata') or {}).get('name')}") from None
    finally:
        response.close()


@server_shaped
def stream_logs(
    cluster: KubeCluster,
    name: str,
    selection: LogSelection,
    options: LogOptions,
    *,
    emit: Emit,
    notice: Notice,
    namespace: str | None = None,
    poll: float | None = None,
) -> None:
    """Write the job's logs through `emit(pod, line)`; diagnostics through `notice(text)`.

    Without follow: the selected pods' logs so far; a pod that has not started is an error
    (single pod) or a notice (--all). With follow: every selected pod, including pods created or
    restarted later, until the job reaches Complete/Failed (or is deleted)."""
    ns = namespace or cluster.namespace
    follow = options.follow and not options.previous
    # Without -f, the JobSet names the step and the pods are listed once: the TrainJob (not read
    # when the JobSet is there) would only tell the state of a job that has no pods yet.
    trainjob, jobset = find_job(cluster, name, ns) if follow else find_jobset(cluster, name, ns)
    step = default_step(jobset, selection)
    if follow:
        _Follower(
            cluster, name, ns, selection, options, step, emit, notice, reads.POLL_INTERVAL if poll is None else poll
        ).run()
        return
    pods = job_pods(cluster, name, ns)
    chosen = select_pods(pods, selection, step)
    if not chosen:
        if not pods and jobset is not None:
            trainjob = get_custom(cluster, reads.TRAINJOB, ns, name)  # its state, for the message
        raise no_pod_error(name, pods, selection, step, status.summarize(trainjob, jobset, pods).state)
    if not selection.all_pods:
        chosen = chosen[-1:]  # after a JobSet restart, the newest pod of that rank
    for pod in chosen:
        container = pick_container(pod, selection.container)
        if not options.previous and not has_started(pod, container):
            if selection.all_pods:
                notice(describe_pod(pod) + " (no logs yet)")
                continue
            raise KtrainError(
                describe_pod(pod) + "; it has no logs yet",
                hint=f"`ktrain job logs {name} -f` waits for it to start; `ktrain job get {name}` shows why it waits",
            )
        response = read_log(cluster, pod, container, follow=False, options=options, first=True)
        _emit_lines(cluster, emit, pod, response, options.timestamps)


class _Follower:
    """Follow the selected pods as they come and go, until the job ends.

    One supervising loop reads the job and its pods every `poll` seconds and publishes that
    snapshot; one thread per selected pod streams its log and consults the snapshots to see
    the container start, restart or end. Requests stay at three per poll, however many pods."""

    def __init__(
        self,
        cluster: KubeCluster,
        name: str,
        namespace: str,
        selection: LogSelection,
        options: LogOptions,
        step: str,
        emit: Emit,
        notice: Notice,
        poll: float,
    ) -> None:
        self.cluster, self.name, self.namespace = cluster, name, namespace
        self.selection, self.options, self.step, self.poll = selection, options, step, poll
        import threading  # only `-f` needs threads

        self.lock = threading.Lock()
        self._emit, self._notice = emit, notice
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.responses: set[Any] = set()
        self.threads: dict[str, threading.Thread] = {}
        self.changed = threading.Condition()
        self.generation = 0
        self.pods_now: dict[str, Obj] = {}
        self.final = False  # the last snapshot: the job has ended

    def emit(self, pod: status.PodSummary, line: str) -> None:
        with self.lock:
            self._emit(pod, line)

    def notice(self, text: str) -> None:
        with self.lock:
            self._notice(text)

    def run(self) -> None:
        announced_empty = False
        unsettled_looks = 0
        try:
            while not self.errors:
                try:
                    trainjob, jobset = find_job(self.cluster, self.name, self.namespace)
                except NotFoundError:
                    self.notice(f"job {self.name} was deleted")
                    return
                pods = job_pods(self.cluster, self.name, self.namespace)
                summary = status.summarize(trainjob, jobset, pods)
                if jobset is not None:  # a TrainJob's JobSet may appear later: it decides the step
                    self.step = default_step(jobset, self.selection)
                # Pods listed after a read that found no JobSet may belong to one created in between:
                # until it is seen the trainer step (launcher or node) is not known, so look once more.
                selection = self.selection
                step_known = jobset is not None or bool(selection.step) or selection.rank is not None
                settled = step_known or selection.all_pods or not pods or unsettled_looks > 0
                unsettled_looks += 0 if settled else 1
                chosen = select_pods(pods, self.selection, self.step) if settled else []
                self._publish(pods, final=summary.terminal)
                if not chosen and not self.threads and not announced_empty and not summary.terminal:
                    self.notice(f"waiting for the pods of job {self.name} (state {summary.state})")
                    announced_empty = True
                for pod in chosen:
                    pod_name = str((pod.get("metadata") or {}).get("name"))
                    if pod_name not in self.threads:
                        container = pick_container(pod, self.selection.container)
                        import threading

                        thread = threading.Thread(
                            target=self._guard, args=(pod_name, container), daemon=True, name=f"ktrain-logs-{pod_name}"
                        )
                        self.threads[pod_name] = thread
                        thread.start()
                if summary.terminal and settled:
                    self._drain()
                    if not chosen:
                        self.notice(f"job {self.name} is {summary.state}")
                    return
                self.stop.wait(self.poll)
        finally:
            self.stop.set()
            with self.changed:
                self.changed.notify_all()
            for response in list(self.responses):
                response.abort()  # a stream another thread reads: its read returns at once
        if self.errors:
            raise self.errors[0]

    def _publish(self, pods: list[Obj], *, final: bool) -> None:
        with self.changed:
            self.pods_now = {str((p.get("metadata") or {}).get("name")): p for p in pods}
            self.final = final
            self.generation += 1
            self.changed.notify_all()

    def _snapshot(self, pod_name: str, seen: int) -> tuple[Obj | None, int, bool]:
        """The pod as of the first snapshot newer than `seen` (None once it is gone)."""
        with self.changed:
            self.changed.wait_for(lambda: self.generation > seen or self.stop.is_set())
            return self.pods_now.get(pod_name), self.generation, self.final

    def _drain(self) -> None:
        """The job ended: let streams deliver their last lines, then stop the rest."""
        deadline = time.monotonic() + max(5 * self.poll, 2.0)
        for thread in self.threads.values():
            thread.join(max(0.0, deadline - time.monotonic()))

    def _guard(self, pod_name: str, container: str) -> None:
        try:
            self._follow_pod(pod_name, container)
        except BaseException as exc:  # noqa: BLE001 - handed to the supervising thread
            if not self.stop.is_set():
                self.errors.append(exc)

    def _follow_pod(self, pod_name: str, container: str) -> None:
        announced = False
        first = True
        streamed: int | None = None  # restartCount of a container streamed after it terminated
        cursor, cursor_restarts = Cursor(), None
        generation = 0
        while not self.stop.is_set():
            pod, generation, final = self._snapshot(pod_name, generation)
            if pod is None or self.stop.is_set():
                return
            cs = container_status(pod, container)
            state = cs.get("state") or {}
            restarts = int(cs.get("restartCount") or 0)
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed") and (streamed == restarts or not has_started(pod, container)):
                return
            if "running" in state or ("terminated" in state and streamed != restarts):
                if cursor_restarts is not None and restarts != cursor_restarts:
                    self.notice(f"pod {pod_name}: container {container} restarted (restarts: {restarts})")
                    cursor = Cursor()
                cursor_restarts = restarts
                self._stream(pod, container, cursor, first)
                first = False
                if "terminated" in state:
                    streamed = restarts
                if final:
                    return
                continue
            if final:
                return
            if not announced and not has_started(pod, container):
                self.notice(describe_pod(pod) + "; waiting for it to start")
                announced = True

    def _stream(self, pod: Obj, container: str, cursor: Cursor, first: bool) -> None:
        response = read_log(self.cluster, pod, container, follow=True, options=self.options, first=first)
        self.responses.add(response)
        summary = status.summarize_pod(pod)
        try:
            for raw in iter_lines(response):
                line = LogLine(raw)
                if cursor.fresh(line.stamp):
                    self.emit(summary, raw if self.options.timestamps else line.text)
        except Exception:  # noqa: BLE001 - a dropped stream is resumed by the caller unless stopping
            if self.stop.is_set():
                return
        finally:
            self.responses.discard(response)
            response.close()
            cursor.reconnected()
