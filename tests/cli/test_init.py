"""`ktrain job init`: a commented starter job that renders as is, for every bundled runtime."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from ktrain.errors import ExitCode

BUNDLED = sorted(p.stem for p in (REPO / "runtimes").glob("*.yaml"))


@pytest.mark.parametrize("runtime", BUNDLED)
def test_init_output_renders_for_every_bundled_runtime(cli, runtime: str) -> None:
    init = cli("job", "init", "--runtime", runtime)
    assert init.exit_code == 0, init.stderr
    job = yaml.safe_load(init.stdout)
    assert job["kind"] == "TrainJob" and job["spec"]["runtimeRef"]["name"] == runtime
    rendered = cli("job", "render", "-f", "-", "-o", "name", stdin=init.stdout)
    assert rendered.exit_code == 0, rendered.stderr
    assert any(line.startswith("jobset.jobset.x-k8s.io/") for line in rendered.stdout.splitlines())
    validated = cli("job", "validate", "-f", "-", stdin=init.stdout)
    assert validated.exit_code == 0 and validated.stdout.endswith(" valid\n"), validated.stderr


def test_init_pipes_into_render_in_a_real_shell() -> None:
    ktrain = Path(sys.executable).with_name("ktrain")
    out = subprocess.run(
        f"{ktrain} job init --runtime torch-distributed | {ktrain} job render -f -",
        shell=True,
        capture_output=True,
        text=True,
        check=True,
    )
    assert yaml.safe_load(out.stdout)["kind"] == "JobSet"


def test_init_points_at_the_schema_and_validates_against_it(cli) -> None:
    import jsonschema

    r = cli("job", "init", "--runtime", "torch-distributed")
    first = r.stdout.splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=file://") and first.endswith("trainjob.schema.json")
    schema_path = first.split("$schema=file://", 1)[1]
    jsonschema.validate(yaml.safe_load(r.stdout), json.loads(Path(schema_path).read_text()))
    r = cli("job", "init", "--runtime", "torch-distributed", "--schema", "https://example.com/trainjob.schema.json")
    assert r.stdout.startswith("# yaml-language-server: $schema=https://example.com/trainjob.schema.json\n")


def test_init_shows_runtime_defaults_as_comments(cli) -> None:
    torch = cli("job", "init", "--runtime", "torch-distributed").stdout
    assert "    # image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime\n" in torch
    assert "    # command: [torchrun, train.py]\n" in torch
    assert "auto with GPUs" in torch and "PET_NNODES" in torch
    deepspeed = cli("job", "init", "--runtime", "deepspeed-distributed").stdout
    assert "launcher" in deepspeed and "--ssh-secret" in deepspeed and "mlPolicy.mpi.numProcPerNode" in deepspeed
    tune = cli("job", "init", "--runtime", "torchtune-llama3.2-1b").stdout
    assert "#     storageUri: hf://tatsu-lab/alpaca" in tune and "# command: [tune, run]" in tune
    # uncommenting the commented block yields a valid initializer section
    lines = tune.splitlines()
    start, end = lines.index("  # initializer:"), next(i for i, x in enumerate(lines) if x.startswith("  # suspend"))
    block = "\n".join(x.replace("  # ", "  ", 1) for x in lines[start:end])
    assert yaml.safe_load(block)["initializer"]["model"]["secretRef"] == {"name": "hf-token"}


def test_init_with_a_user_runtime_and_a_typo(cli, tmp_path) -> None:
    runtime = (
        (REPO / "runtimes" / "torch-distributed.yaml")
        .read_text()
        .replace("name: torch-distributed", "name: team-torch")
        .replace("pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", "registry.local/torch:7")
    )
    (tmp_path / "team.yaml").write_text(runtime)
    r = cli("job", "init", "--runtime", "team-torch", "--runtimes-dir", str(tmp_path))
    assert r.exit_code == 0 and "# image: registry.local/torch:7" in r.stdout
    r = cli("job", "init", "--runtime", "team-torh", "--runtimes-dir", str(tmp_path))
    assert r.exit_code == ExitCode.NOT_FOUND and "did you mean 'team-torch'?" in r.stderr
