"""How `job wait` and `job create --wait` show a running job's progress on stderr: on a terminal one
line redrawn in place (a bar, the percentage, the ETA, the newest metrics); elsewhere one plain line
per change (`progress: 45% ETA 1h00m loss=0.2347 (status)`), so a CI log gets no redraws."""

from __future__ import annotations

import os
import sys

from ktrain.progress.view import bar, eta_cell, metric_text, percent_cell, summary

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import IO, Any


def _colour(stream: IO[str]) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class ProgressDisplay:
    def __init__(self, stream: IO[str] | None = None, *, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.colour = self.live and _colour(self.stream)
        self.last: str | None = None
        self.drawn = False

    def update(self, status: Any) -> None:
        if status is None:
            return
        if not self.live:
            line = summary(status)
            if line != self.last:
                self.stream.write(f"progress: {line}\n")
                self.stream.flush()
            self.last = line
            return
        metrics = " ".join(metric_text(m.name, m.value) for m in status.metrics[:3])
        drawn = bar(status.progress_percentage)
        if self.colour:
            drawn = f"\x1b[32m{drawn}\x1b[0m"
        line = f"{drawn} {percent_cell(status):>7} ETA {eta_cell(status):>6} {metrics}"
        width = _width(self.stream)
        shown = line[: max(20, width - 1)]
        self.stream.write(("\r\x1b[2K" if self.colour else "\r") + shown)
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def _width(stream: IO[str]) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80
