"""The Python API: cheap to import, the same results and errors as the CLI, and `ktrain.train`'s
function actually runs from what is rendered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_code_run import _run_trainer

import ktrain
from ktrain.errors import KtrainError, UsageError, ValidationFailedError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.python_api import function_source, train_request
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

REPO = Path(__file__).resolve().parents[1]


def test_import_ktrain_loads_no_heavy_module() -> None:
    heavy = ("typer", "pydantic", "kubernetes", "jinja2", "rich", "ruamel")
    code = f"import sys, ktrain; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_render_equals_the_flags_render() -> None:
    api = ktrain.render(
        runtime="torch-distributed",
        name="demo",
        num_nodes=3,
        env={"LR": "3e-4"},
        resources_per_node={"GPU": 2, "cpu": "4"},
        command=["torchrun", "train.py"],
    )
    flags = JobOverrides(
        runtime="torch-distributed",
        name="demo",
        nodes=3,
        env=[("LR", "3e-4")],
        requests={"nvidia.com/gpu": "2", "cpu": "4"},
        limits={"nvidia.com/gpu": "2", "cpu": "4"},
        command=["torchrun", "train.py"],
    )
    assert api == render_request(RenderRequest(overrides=flags), RuntimeRegistry()).result.objects


def test_a_job_as_dict_yaml_text_or_path_renders_the_same(tmp_path: Path) -> None:
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "j1"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}},
    }
    text = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j1}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {numNodes: 2}\n"
    )
    path = tmp_path / "job.yaml"
    path.write_text(text)
    assert ktrain.render(job) == ktrain.render(text) == ktrain.render(path) == ktrain.render(str(path))


def test_errors_are_the_cli_errors() -> None:
    with pytest.raises(ValidationFailedError) as err:
        ktrain.validate(
            {
                "kind": "TrainJob",
                "metadata": {"name": "x"},
                "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNode": 2}},
            }
        )
    assert "unknown field 'numNode'" in err.value.message
    with pytest.raises(KtrainError, match="no such file or directory"):
        ktrain.render(runtime="torch-distributed", code=["/nonexistent/path"], name="x", command=["a"])


def train_fn(args):  # type: ignore[no-untyped-def]
    import os

    print("lr", args["lr"], "epochs", args["epochs"], "rank", os.environ.get("RANK"))  # noqa: T201 - runs in the pod
    if args.get("fail"):
        raise SystemExit(7)


def test_train_runs_the_function_with_its_args_on_every_rank(tmp_path: Path) -> None:
    request = train_request(
        train_fn, runtime="torch-distributed", func_args={"lr": 0.01, "epochs": 2}, num_nodes=2, name="fn"
    )
    objects = render_request(request, RuntimeRegistry()).result.objects
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["lr 0.01 epochs 2 rank 0", "lr 0.01 epochs 2 rank 1"]


def test_train_failure_exit_code_comes_back(tmp_path: Path) -> None:
    request = train_request(
        train_fn, runtime="torch-distributed", func_args={"lr": 1, "epochs": 1, "fail": True}, name="fn"
    )
    result = _run_trainer(render_request(request, RuntimeRegistry()).result.objects, tmp_path)
    assert result.returncode == 7


def test_train_uses_the_runtime_launcher() -> None:
    for runtime, first in (
        ("torch-distributed", "torchrun"),
        ("deepspeed-distributed", "mpirun"),
        ("xgboost-distributed", "python3"),
    ):
        request = train_request(train_fn, runtime=runtime, name="fn")
        assert request.overrides.command[0] == first, runtime


def test_function_source_needs_a_named_function_and_json_args() -> None:
    with pytest.raises(UsageError, match="lambda"):
        function_source(lambda: None, None)
    with pytest.raises(UsageError, match="JSON"):
        function_source(train_fn, {"x": object()})
    assert function_source(train_fn, None).rstrip().endswith("train_fn()")


def test_python_api_doc_examples_run() -> None:
    import doctest

    failures, tests = doctest.testfile(str(REPO / "docs" / "python-api.md"), module_relative=False)
    assert tests > 0 and failures == 0
