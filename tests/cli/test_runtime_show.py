"""`ktrain runtime show NAME`: a blueprint as it is, and (in the text view) what rendering a job on it adds.
Read from the bundled runtimes and the user's files here; tests/cli/test_runtime_list.py reads a cluster's."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ktrain.inputs.bundled import builtin_runtimes_dir

BUNDLED = builtin_runtimes_dir() / "torch-distributed.yaml"


def test_text_shows_the_runtime_then_what_a_job_on_it_gets(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("runtime", "show", "torch-distributed", "--source", "local")
    assert r.exit_code == 0, r.stderr
    head, _, rest = r.stdout.partition("\n")
    assert head == "# ClusterTrainingRuntime torch-distributed — framework torch, ML policy torch, source bundled"
    blueprint, _, added = rest.partition("\n# What rendering a TrainJob on this runtime adds")
    assert yaml.safe_load(blueprint) == yaml.safe_load(BUNDLED.read_text())
    assert "env PET_NNODES=1" in added  # the torch plugin's env, for one node


def test_yaml_and_json_are_the_runtime_object_alone(cli) -> None:  # type: ignore[no-untyped-def]
    want = yaml.safe_load(BUNDLED.read_text())
    as_yaml = cli("runtime", "show", "torch-distributed", "--source", "local", "-o", "yaml")
    as_json = cli("runtime", "show", "torch-distributed", "--source", "local", "-o", "json")
    assert (as_yaml.exit_code, as_json.exit_code) == (0, 0)
    assert yaml.safe_load(as_yaml.stdout) == want and json.loads(as_json.stdout) == want


def test_a_runtime_file_of_the_users_is_shown_with_its_source(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    mine = tmp_path / "mine.yaml"
    mine.write_text(BUNDLED.read_text().replace("name: torch-distributed", "name: my-torch", 1))
    r = cli("runtime", "show", "my-torch", "--runtime-file", str(mine), "--source", "local")
    assert r.exit_code == 0, r.stderr
    assert (
        r.stdout.splitlines()[0]
        == f"# ClusterTrainingRuntime my-torch — framework torch, ML policy torch, source file:{mine}"
    )


def test_an_unknown_name_is_not_found_with_the_known_ones(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("runtime", "show", "nope", "--source", "local")
    assert r.exit_code == 4 and r.stdout == ""
    assert r.stderr.startswith("error: runtime 'nope' not found. Known runtimes: deepspeed-distributed, ")
    assert "torch-distributed" in r.stderr and "hint: see `ktrain runtime list`" in r.stderr
