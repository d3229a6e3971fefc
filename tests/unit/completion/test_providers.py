"""What completion offers for an option's value or a positional argument (`ktrain.completion.providers`),
on a `Request` as `ktrain.completion.complete.locate` builds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain.completion import providers
from ktrain.completion.providers import argument_values, option_values
from ktrain.completion.request import Request


def request_for(option: dict, given: dict[str, list[str]] | None = None) -> Request:
    req = Request({"options": [option]})
    req.option = option
    req.given = given or {}
    return req


def positional(path: list[str], arguments: list[dict], index: int = 0) -> Request:
    req = Request({"options": [], "arguments": arguments})
    req.path = path
    req.positional = index
    return req


@pytest.fixture(autouse=True)
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No kubeconfig and an empty cache: only local values can be offered."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KTRAIN_RUNTIMES_PATH", raising=False)


def test_an_options_own_choices_win_over_the_fixed_vocabulary() -> None:
    answer = option_values(request_for({"names": ["-o", "--output"], "choices": ["table", "wide"]}), "")
    assert answer.directive == "values" and answer.items == [("table", ""), ("wide", "")]
    # without choices of its own, --output offers kubectl's formats
    assert [v for v, _ in option_values(request_for({"names": ["-o", "--output"]}), "").items] == [
        "yaml",
        "json",
        "name",
    ]


def test_an_option_is_known_by_its_long_name_whatever_spelling_the_line_used() -> None:
    answer = option_values(request_for({"names": ["--dry-run"]}), "")
    assert [v for v, _ in answer.items] == ["client", "server", "none"]
    assert [v for v, _ in option_values(request_for({"names": ["--shell"]}), "").items] == list(providers.SHELL_NAMES)


def test_file_and_directory_options_leave_the_names_to_the_shell() -> None:
    for name in ("-f", "--filename"), ("--kubeconfig",), ("--runtime-file",), ("--code",):
        assert option_values(request_for({"names": list(name)}), "").directive == "files", name
    assert option_values(request_for({"names": ["--runtimes-dir"]}), "").directive == "dirs"


def test_resources_end_in_an_equals_sign_and_keep_the_cursor_on_the_word() -> None:
    answer = option_values(request_for({"names": ["--resource"]}), "")
    assert answer.directive == "nospace"
    assert ("nvidia.com/gpu=", "NVIDIA GPU") in answer.items
    assert all(value.endswith("=") for value, _ in answer.items)


def test_set_offers_the_job_files_keys_to_assign() -> None:
    answer = option_values(request_for({"names": ["--set"]}), "")
    keys = [v for v, _ in answer.items]
    assert answer.directive == "nospace"
    assert "trainer.numNodes=" in keys and "metadata.name=" in keys


def test_runtime_names_are_the_bundled_ones_and_a_given_runtime_files(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: team-rt}\n"
        "spec: {template: {spec: {}}}\n"
    )
    names = [
        v for v, _ in option_values(request_for({"names": ["--runtime"]}, {"--runtime-file": [str(mine)]}), "").items
    ]
    assert "team-rt" in names and "torch-distributed" in names
    assert names == sorted(names)


def test_namespaces_always_include_default() -> None:
    answer = option_values(request_for({"names": ["-n", "--namespace"]}), "")
    assert answer.items == [("default", "")]


def test_an_option_without_a_provider_offers_nothing() -> None:
    answer = option_values(request_for({"names": ["--name"]}), "")
    assert answer.directive == "values" and answer.items == []


def test_positional_arguments_are_runtime_names_job_names_or_files() -> None:
    runtime = argument_values(positional(["runtime", "show"], [{"name": "name", "nargs": 1}]), "")
    assert "torch-distributed" in [v for v, _ in runtime.items]
    # job names come from the cluster cache: none without a cluster, and no file names either
    job = argument_values(positional(["job", "logs"], [{"name": "name", "nargs": 1}]), "")
    assert job.directive == "values" and job.items == []
    other = argument_values(positional(["job", "render"], [{"name": "command", "nargs": -1}]), "")
    assert other.directive == "files"


def test_no_more_values_once_a_single_argument_is_given() -> None:
    after = argument_values(positional(["runtime", "show"], [{"name": "name", "nargs": 1}], index=1), "")
    assert after.directive == "values" and after.items == []
    many = argument_values(positional(["runtime", "show"], [{"name": "names", "nargs": -1}], index=3), "")
    assert "torch-distributed" in [v for v, _ in many.items]
    assert argument_values(positional(["job"], []), "").items == []
