"""How progress is drawn: bars, durations, sparklines, `job list`'s cells."""

from __future__ import annotations

from ktrain.progress.status import Metric, TrainerStatus
from ktrain.progress.view import (
    LIST_HEADERS,
    WIDE_HEADERS,
    bar,
    duration,
    list_cells,
    metrics_cell,
    sparkline,
    wide_cells,
)


def test_bars_durations_and_sparklines() -> None:
    assert (bar(0), bar(100), bar(None)) == ("[" + "-" * 20 + "]", "[" + "#" * 20 + "]", "[" + "-" * 20 + "]")
    assert [duration(s) for s in (5, 65, 3600, 90061, 200000, None)] == ["5s", "1m05s", "1h00m", "25h01m", "2d07h", "-"]
    assert sparkline([3.0, 2.0, 1.0]) == "█▅▁"
    assert sparkline([1.0, 1.0]) == "▄▄" and sparkline([]) == ""
    assert sparkline([float("nan"), 1.0, float("inf"), 2.0]) == "▁█"


def test_the_list_cells_line_up_with_their_headers() -> None:
    status = TrainerStatus(progress_percentage=7, estimated_remaining_seconds=61, metrics=[Metric("loss", "1")])
    assert dict(zip(LIST_HEADERS, list_cells(status), strict=True)) == {"PROGRESS": "7%", "ETA": "1m01s"}
    assert dict(zip(WIDE_HEADERS, wide_cells(status), strict=True)) == {"METRICS": "loss=1"}
    assert list_cells(None) == ["-", "-"] and wide_cells(None) == ["-"]


def test_a_long_metrics_cell_is_cut() -> None:
    status = TrainerStatus(metrics=[Metric(f"metric_{i}", "0.123456789") for i in range(10)])
    cell = metrics_cell(status)
    assert len(cell) == 40 and cell.endswith("...")
