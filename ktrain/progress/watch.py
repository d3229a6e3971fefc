"""`ktrain job watch`'s view, pure: what one poll shows, from the job's summary and progress, with
the recent values of each numeric metric kept for its sparkline (bounded: `MAX_TRACKED` metrics of
`HISTORY` values, whatever the job reports).

The summary is `ktrain.jobs.state.JobSummary`-shaped (state, steps, pods with phase and
restarts); the progress a `TrainerStatus` or None; the verdict `job why`'s (code, message) or None.
"""

from __future__ import annotations

from ktrain.progress.status import TrainerStatus, is_stale
from ktrain.progress.view import bar, duration, eta_cell, percent_cell, sparkline
from ktrain.util.text import printable

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

HISTORY = 48
MAX_TRACKED = 32


class MetricHistory:
    """The last HISTORY values of at most MAX_TRACKED numeric metrics (the first ones seen)."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {}
        self._last_update: str | None = None

    def add(self, status: TrainerStatus | None) -> None:
        if status is None:
            return
        key = status.last_updated_time or repr([(m.name, m.value) for m in status.metrics])
        if key == self._last_update:  # the same update read again: one point, not two
            return
        self._last_update = key
        for metric in status.metrics:
            number = metric.number()
            if number is None:
                continue
            series = self.values.get(metric.name)
            if series is None:
                if len(self.values) >= MAX_TRACKED:
                    continue
                series = self.values[metric.name] = []
            series.append(number)
            del series[:-HISTORY]


def _pods_by_state(summary: Any) -> list[str]:
    by_step: dict[str, dict[str, int]] = {}
    for pod in summary.pods:
        counts = by_step.setdefault(pod.step, {})
        counts[pod.phase] = counts.get(pod.phase, 0) + 1
    return [
        f"  {printable(step)}: " + ", ".join(f"{n} {printable(phase)}" for phase, n in sorted(counts.items()))
        for step, counts in by_step.items()
    ]


def frame(
    summary: Any,
    progress: TrainerStatus | None,
    history: MetricHistory,
    now: float,
    verdict: tuple[str, str] | None = None,
) -> list[str]:
    """The lines one poll shows."""
    running = summary.state == "Running"
    restarts = sum(p.restarts for p in summary.pods)
    lines = [
        f"{printable(summary.namespace)}/{printable(summary.name)}  {summary.state}  "
        f"trainer pods {summary.trainer_pods_ready}/{summary.trainer_pods_expected}  restarts {restarts}"
    ]
    if verdict is not None and not running:
        lines.append(printable(f"why: {verdict[0]}: {verdict[1]}"))
    steps = [
        f"{printable(st.name)} {st.pods} pods/job: {st.active} active, {st.succeeded} succeeded, {st.failed} failed"
        for st in summary.steps
    ]
    if steps:
        lines.append("steps:  " + "; ".join(steps))
    lines += _pods_by_state(summary)
    if progress is None:
        lines.append("progress: none reported yet")
        return lines
    lines.append(
        f"progress: {bar(progress.progress_percentage, 30)} {percent_cell(progress)}  ETA {eta_cell(progress)}"
        f"  ({printable(progress.source)})"
    )
    if is_stale(progress, now, running=running):
        lines.append("warning: no progress update for a while, though the pods run")
    for text in progress.invalid[:4]:
        lines.append(f"invalid: {printable(text)}")
    width = min(24, max((len(printable(m.name)) for m in progress.metrics[:MAX_TRACKED]), default=0))
    for metric in progress.metrics[:MAX_TRACKED]:
        series = history.values.get(metric.name) or []
        spark = sparkline(series) if len(series) > 1 else ""
        lines.append(f"  {printable(metric.name):<{width}}  {printable(metric.value):>12}  {spark}")
    return lines


def plain_line(summary: Any, progress: TrainerStatus | None, verdict: tuple[str, str] | None = None) -> str:
    """One line for a log (no terminal): state, pods, restarts, progress."""
    from ktrain.progress.view import summary as progress_summary

    restarts = sum(p.restarts for p in summary.pods)
    text = (
        f"{printable(summary.name)} {summary.state} pods {summary.trainer_pods_ready}/{summary.trainer_pods_expected}"
        f" restarts {restarts}"
    )
    if verdict is not None and summary.state != "Running":
        text += printable(f" why {verdict[0]}")
    if progress is not None:
        text += f" progress {progress_summary(progress)}"
    return text


__all__ = ["HISTORY", "MAX_TRACKED", "MetricHistory", "duration", "frame", "plain_line"]
