"""How a run's progress is shown: `job list`'s PROGRESS, ETA and METRICS cells, `job get`'s Progress
section, a plain one-line summary (`job wait` off a terminal, `job why`), bars and sparklines.

Every text that came from a run (metric names and values) goes through `printable` here, so no
control character reaches a terminal; percentages and ETAs reach this module checked
(`ktrain.progress.status`), and what was not trusted is shown as invalid.
"""

from __future__ import annotations

from ktrain.progress.status import TrainerStatus, age_seconds, is_stale
from ktrain.util.text import printable

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Sequence

NONE = "-"
INVALID = "invalid"
SPARKS = "▁▂▃▄▅▆▇█"
BAR_WIDTH = 20
MAX_CELL = 40  # a metrics cell of `job list -o wide`


def duration(seconds: float | None) -> str:
    """`42s`, `3m05s`, `1h02m`, `2d03h` (kubectl's style, two units at most)."""
    if seconds is None:
        return NONE
    total = int(seconds)
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def _invalid(status: TrainerStatus, word: str) -> bool:
    return any(text.startswith(word) or f" {word}" in text or f": {word}" in text for text in status.invalid)


def percent_cell(status: TrainerStatus | None) -> str:
    if status is None:
        return NONE
    if status.progress_percentage is None:
        return INVALID if _invalid(status, "progress") else NONE
    return f"{status.progress_percentage}%"


def eta_cell(status: TrainerStatus | None) -> str:
    if status is None:
        return NONE
    if status.estimated_remaining_seconds is None:
        return INVALID if _invalid(status, "estimatedRemainingSeconds") or _invalid(status, "ETA") else NONE
    return duration(status.estimated_remaining_seconds)


def metric_text(name: str, value: str) -> str:
    return f"{printable(name)}={printable(value)}"


def metrics_cell(status: TrainerStatus | None, limit: int = 3) -> str:
    """The newest few metrics, `loss=0.2347,accuracy=0.98` (cut to MAX_CELL)."""
    if status is None or not status.metrics:
        return NONE
    text = ",".join(metric_text(m.name, m.value) for m in status.metrics[:limit])
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 3] + "..."


def bar(percent: int | None, width: int = BAR_WIDTH) -> str:
    """`[#########-----------]`; an unknown percentage is all dashes."""
    done = 0 if percent is None else round(width * max(0, min(100, percent)) / 100)
    return "[" + "#" * done + "-" * (width - done) + "]"


def sparkline(values: Sequence[float], width: int = 24) -> str:
    """The last `width` values as ▁▂▃▄▅▆▇█ (one value: a middle bar)."""
    points = [v for v in values if v == v and abs(v) != float("inf")][-width:]
    if not points:
        return ""
    low, high = min(points), max(points)
    if high == low:
        return SPARKS[3] * len(points)
    scale = (len(SPARKS) - 1) / (high - low)
    return "".join(SPARKS[round((v - low) * scale)] for v in points)


def summary(status: TrainerStatus | None) -> str:
    """One plain line: `45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)`."""
    if status is None:
        return "no progress reported"
    parts = [percent_cell(status) if status.progress_percentage is not None or status.invalid else "progress ?"]
    eta = eta_cell(status)
    if eta != NONE:
        parts.append(f"ETA {eta}")
    parts += [metric_text(m.name, m.value) for m in status.metrics[:4]]
    return " ".join(parts) + f" ({printable(status.source)})"


def section(status: TrainerStatus | None, now: float, *, running: bool) -> list[str]:
    """`job get`'s Progress section, one line each (without the heading)."""
    if status is None:
        return ["none reported (the TrainJobStatus feature gate, or a log format ktrain reads: docs/observing.md)"]
    lines = [f"{bar(status.progress_percentage)} {percent_cell(status)}"]
    lines.append(f"ETA:          {eta_cell(status)}")
    age = age_seconds(status, now)
    if age is not None:
        lines.append(f"Last update:  {duration(age)} ago")
    lines.append(f"Source:       {printable(status.source)}")
    if is_stale(status, now, running=running):
        lines.append(f"Warning:      no update for {duration(age)} while the job's pods run")
    for text in status.invalid[:8]:
        lines.append(f"Invalid:      {printable(text)}")
    if status.metrics:
        lines.append("Metrics:")
        width = min(32, max(len(printable(m.name)) for m in status.metrics))
        lines += [f"  {printable(m.name):<{width}}  {printable(m.value)}" for m in status.metrics]
    return lines


# `job list`'s columns (one place, beside the others' RESTARTS): after AGE, and METRICS last in -o wide.
LIST_HEADERS = ["PROGRESS", "ETA"]
WIDE_HEADERS = ["METRICS"]


def list_cells(status: TrainerStatus | None) -> list[str]:
    return [percent_cell(status), eta_cell(status)]


def wide_cells(status: TrainerStatus | None) -> list[str]:
    return [metrics_cell(status)]
