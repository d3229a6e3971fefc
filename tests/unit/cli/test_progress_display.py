"""`ktrain.cli.progress_display`: a redrawn line on a terminal, one plain line per change elsewhere."""

from __future__ import annotations

import io

import pytest

from ktrain.cli.progress_display import ProgressDisplay
from ktrain.progress.status import Metric, TrainerStatus


def _status(percent: int) -> TrainerStatus:
    return TrainerStatus(progress_percentage=percent, estimated_remaining_seconds=60, metrics=[Metric("loss", "0.5")])


def test_off_a_terminal_one_line_per_change() -> None:
    out = io.StringIO()
    display = ProgressDisplay(out, live=False)
    for percent in (10, 10, 20):
        display.update(_status(percent))
    display.update(None)
    display.close()
    assert out.getvalue().splitlines() == [
        "progress: 10% ETA 1m00s loss=0.5 (status)",
        "progress: 20% ETA 1m00s loss=0.5 (status)",
    ]


def test_on_a_terminal_the_line_is_redrawn_and_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    display = ProgressDisplay(out, live=True)
    display.update(_status(50))
    display.update(_status(60))
    display.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and "\x1b" not in text  # NO_COLOR: no sequences
    assert "[############--------]     60% ETA  1m00s loss=0.5" in text
