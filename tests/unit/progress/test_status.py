"""`TrainJob.status.trainerStatus` read as the CRD allows it, and shown: a status comes from a
server, so what is out of bounds is said invalid, and nothing in it reaches a terminal raw."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.progress.status import from_trainjob_status, is_stale, parse_time
from ktrain.progress.view import eta_cell, metrics_cell, percent_cell, section, summary

GUIDE = {  # upstream's progress guide's example
    "trainerStatus": {
        "progressPercentage": 45,
        "estimatedRemainingSeconds": 3600,
        "metrics": [{"name": "loss", "value": "0.2347"}, {"name": "accuracy", "value": "0.9876"}],
        "lastUpdatedTime": "2026-06-12T03:00:00Z",
    }
}
NOW = parse_time("2026-06-12T03:00:30Z") or 0.0


def test_the_guides_example_reads_and_shows_as_45_percent_one_hour_and_its_loss() -> None:
    status = from_trainjob_status(GUIDE)
    assert status is not None and not status.invalid
    assert (percent_cell(status), eta_cell(status)) == ("45%", "1h00m")
    assert metrics_cell(status) == "loss=0.2347,accuracy=0.9876"
    assert summary(status) == "45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)"
    lines = section(status, NOW, running=True)
    assert lines[0] == "[#########-----------] 45%"
    assert "Last update:  30s ago" in lines and "  loss      0.2347" in lines
    assert status.to_dict() == {**GUIDE["trainerStatus"], "source": "status"}


def test_no_trainer_status_is_none() -> None:
    assert from_trainjob_status({}) is None and from_trainjob_status(None) is None
    assert percent_cell(None) == eta_cell(None) == metrics_cell(None) == "-"


@pytest.mark.parametrize(
    ("raw", "percent", "eta", "why"),
    [
        ({"progressPercentage": 250, "lastUpdatedTime": "2026-06-12T03:00:00Z"}, "invalid", "-", "outside 0-100"),
        ({"progressPercentage": -1}, "invalid", "-", "outside 0-100"),
        ({"progressPercentage": True}, "invalid", "-", "not a number"),
        ({"progressPercentage": "45"}, "invalid", "-", "not a number"),
        ({"progressPercentage": 45.5}, "invalid", "-", "whole number"),
        ({"estimatedRemainingSeconds": -10}, "-", "invalid", "outside 0-"),
        ({"estimatedRemainingSeconds": 2**40}, "-", "invalid", "outside 0-"),
        ({"lastUpdatedTime": "yesterday"}, "-", "-", "not a time"),
    ],
)
def test_out_of_bounds_values_are_invalid_not_trusted(raw: dict[str, Any], percent: str, eta: str, why: str) -> None:
    status = from_trainjob_status({"trainerStatus": raw})
    assert status is not None
    assert (percent_cell(status), eta_cell(status)) == (percent, eta)
    assert any(why in text for text in status.invalid)
    assert any(line.startswith("Invalid:") for line in section(status, NOW, running=True))


def test_metrics_are_bounded_as_the_crd_and_the_sdk_bound_them() -> None:
    many = [{"name": f"m{i}", "value": str(i)} for i in range(1000)]
    many.insert(0, {"name": "x" * 500, "value": "y" * 500})
    many.insert(1, {"name": 7, "value": None})
    status = from_trainjob_status({"trainerStatus": {"metrics": many}})
    assert status is not None
    assert len(status.metrics) == 255  # 256 entries read, one not a metric
    assert len(status.metrics[0].name) == 64 and len(status.metrics[0].value) == 64
    assert any("more than 256" in text for text in status.invalid)


def test_control_characters_in_a_status_never_reach_the_output() -> None:
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202e"
    status = from_trainjob_status({"trainerStatus": {"metrics": [{"name": f"loss{evil}", "value": f"1{evil}"}]}})
    assert status is not None
    for text in [metrics_cell(status), summary(status), *section(status, NOW, running=True)]:
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


def test_a_status_not_updated_while_pods_run_is_stale() -> None:
    status = from_trainjob_status(GUIDE)
    assert status is not None
    later = NOW + 3600
    assert is_stale(status, later, running=True) and not is_stale(status, later, running=False)
    assert any(line.startswith("Warning:      no update for 1h00m") for line in section(status, later, running=True))
    assert not is_stale(status, NOW, running=True)
