"""A local run's `progress:` lines: from the run's status endpoint when the trainer reports to it,
else from the rank-0 trainer pod's own output (`ktrain.progress.logs`), as the cluster reads a
job's progress (status before log).

Throttled: at most one line per `interval` seconds per run, a line only when what it says changes,
and the newest at the end, so a tqdm bar redrawn a thousand times a second shows as a few lines."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from ktrain.constants import LAUNCHER, NODE
from ktrain.local.status_server import trainer_rjobs
from ktrain.progress.logs import LogTail
from ktrain.progress.view import summary

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ktrain.local.run_plan import RunPlan
    from ktrain.progress.status import TrainerStatus

INTERVAL = 1.0  # seconds between two progress lines of one run


def rank0_pod(plan: RunPlan, objects: list[dict[str, Any]], ml_policy: str | None) -> str | None:
    """The pod whose output holds the run's progress: the MPI launcher (its `mpirun` prints every
    rank's), else the first pod of the trainer step (`node-0-0`)."""
    pods = [pod for step in plan.steps if not step.skipped for pod in step.pods]
    if ml_policy == "mpi":
        for pod in pods:
            if pod.rjob == LAUNCHER:
                return pod.name
    wanted = set(trainer_rjobs(objects)) or {NODE}
    for pod in pods:
        if pod.rjob in wanted and pod.job_index == 0 and pod.index == 0:
            return pod.name
    return None


class ProgressFeed:
    """`line(pod, text)` for each piece of the pods' output, `status(...)` for each update the status
    endpoint accepts, `close()` at the end of the run; `show` gets each status to display."""

    def __init__(
        self,
        show: Callable[[TrainerStatus], None],
        pod: str | None,
        *,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.show = show
        self.pod = pod
        self.interval = interval
        self.clock = clock
        self.tail = LogTail()
        self.lock = threading.Lock()
        self.reported = False  # the status endpoint was heard from: the log is not read any more
        self.pending: TrainerStatus | None = None  # a status newer than the last line shown
        self.shown_text: str | None = None
        self.checked_at: float | None = None  # when the last line was shown or found unchanged
        self.timer: threading.Timer | None = None
        self.closed = False

    def line(self, pod: str, text: str) -> None:
        if pod != self.pod:
            return
        with self.lock:
            if self.reported or self.closed:
                return
            self.tail.feed(text)
            if self._due():
                self._take_log()
                self._flush()
            else:
                self._later()

    def status(self, status: TrainerStatus) -> None:
        with self.lock:
            if self.closed:
                return
            self.reported = True
            self.tail = LogTail()  # not needed any more
            self.pending = status
            if self._due():
                self._flush()
            else:
                self._later()

    def close(self) -> None:
        """Show the newest progress, if not shown yet; nothing more after."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if not self.reported and self.tail.changed:
                self._take_log()
            self._flush()

    # under the lock

    def _due(self) -> bool:
        return self.checked_at is None or self.clock() - self.checked_at >= self.interval

    def _take_log(self) -> None:
        found = self.tail.status()
        if found is not None:
            self.pending = found

    def _later(self) -> None:
        if self.timer is not None:
            return
        assert self.checked_at is not None
        wait = max(0.0, self.checked_at + self.interval - self.clock())
        self.timer = threading.Timer(wait, self._tick)
        self.timer.daemon = True
        self.timer.start()

    def _tick(self) -> None:
        with self.lock:
            self.timer = None
            if self.closed:
                return
            if not self.reported and self.tail.changed:
                self._take_log()
            self._flush()

    def _flush(self) -> None:
        """Show the pending status if it says something new (the log is parsed at most once an interval)."""
        self.checked_at = self.clock()
        status, self.pending = self.pending, None
        if status is None:
            return
        text = summary(status)
        if text != self.shown_text:
            self.shown_text = text
            self.show(status)
