"""The option parsing and messages the commands share (`ktrain.cli.common`): KEY=VALUE pairs, Go
durations as kubectl takes them, `-o yaml|json` of plain data, and notes and warnings on stderr."""

from __future__ import annotations

import json

import pytest
import yaml

from ktrain.cli.common import dump_data, parse_duration, parse_pairs, parse_timeout, report_inputs, stall_notice
from ktrain.errors import UsageError


def test_pairs_split_at_the_first_equals_sign_and_keep_empty_values() -> None:
    assert parse_pairs(["A=1", "B=x=y", "C="], "--env") == [("A", "1"), ("B", "x=y"), ("C", "")]
    assert parse_pairs(None, "--env") == []


@pytest.mark.parametrize("item", ["NOEQUALS", "=v", ""])
def test_a_pair_without_a_key_or_an_equals_sign_names_the_flag(item: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_pairs(["A=1", item], "--label")
    assert str(caught.value) == f"--label expects KEY=VALUE, got {item!r}"


@pytest.mark.parametrize(
    "text, seconds",
    [("90", 90.0), ("2.5", 2.5), ("30s", 30.0), ("10m", 600.0), ("1h30m", 5400.0), ("500ms", 0.5), ("1d", 86400.0)],
)
def test_durations_are_seconds_or_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "--timeout") == seconds


@pytest.mark.parametrize("text", ["soon", "10x", "1h 30m", "-5s", "1.5.2s", "m", ""])
def test_what_is_no_duration_is_a_usage_error_naming_the_flag(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_duration(text, "--ttl")
    assert str(caught.value) == f"--ttl expects a duration such as 30s, 10m or 1h30m, got {text!r}"


def test_a_timeout_absent_or_zero_means_no_limit() -> None:
    assert parse_timeout(None) is None
    assert parse_timeout("0") is None
    assert parse_timeout("0s") is None
    assert parse_timeout("2m") == 120.0
    with pytest.raises(UsageError, match=r"^--wait-timeout expects a duration"):
        parse_timeout("later", "--wait-timeout")


def test_plain_data_prints_as_yaml_that_reads_back_the_same_or_as_indented_json() -> None:
    data = {"on": "yes", "n": 1, "items": ["a", "1.0"]}
    text = dump_data(data, "yaml")
    assert yaml.safe_load(text) == data  # YAML 1.1 readers keep 'on' and 'yes' strings
    assert "'on': 'yes'" in text
    assert dump_data(data, "json") == json.dumps(data, indent=4) + "\n"


def test_notes_come_before_warnings_and_control_characters_are_shown_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report_inputs(["converted a PyTorchJob"], ["the server said \x1b[31mno\x1b[0m", "two\nlines"])
    stall_notice("pods \x07pending")
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "note: converted a PyTorchJob"
    assert lines[1].startswith("warning: the server said ") and "\x1b" not in lines[1]
    assert lines[2:4] == ["warning: two", "warning: lines"]
    assert lines[4].startswith("waiting: pods ") and "\x07" not in lines[4]
