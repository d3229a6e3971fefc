"""The typer-free fast path (`ktrain.cli.fastpath`) behaves exactly as the typer commands.

Each argv runs through the fast path (`try_fast`, which the console script calls first) and
through the typer app (`main`, what KTRAIN_NO_FASTPATH=1 runs); stdout, stderr and the exit
code must be byte-identical. Argv the fast path is not sure about must be declined, so typer
keeps every message about the command line. No test reads the machine's kubeconfig: the
autouse fixture in tests/conftest.py points KUBECONFIG at a file that does not exist.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ktrain.cli import main
from ktrain.cli.fastpath import (
    COMMANDS,
    Declined,
    Parser,
    command_node,
    command_path,
    handler_of,
    parse_command,
    try_fast,
)
from ktrain.cli.jobinput import JobInput
from ktrain.errors import ExitCode
from ktrain.util.structs import fields

REPO = Path(__file__).resolve().parents[3]

TEMPLATE = """\
kind: TrainJob
metadata:
  name: {{ name }}
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: {{ nodes }}
"""
JOB = "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    command: [python, t.py]\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "job.yaml.j2").write_text(TEMPLATE)
    (tmp_path / "values.yaml").write_text("name: tmpl\nnodes: 2\n")
    (tmp_path / "more.yaml").write_text("nodes: 3\n")
    (tmp_path / "patch.yaml").write_text(
        "manager: acme.io/tuning\ntrainingRuntimeSpec:\n  template:\n    metadata:\n      labels: {tuned: 'yes'}\n"
    )
    (tmp_path / "bad.yaml").write_text("kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainr: {}\n")
    runtime = (REPO / "runtimes" / "torch-distributed.yaml").read_text()
    (tmp_path / "mine.yaml").write_text(runtime.replace("name: torch-distributed", "name: my-torch", 1))
    (tmp_path / "same.yaml").write_text(runtime)  # shadows the bundled torch-distributed
    (tmp_path / "rtdir").mkdir()
    (tmp_path / "rtdir" / "r.yaml").write_text(runtime.replace("name: torch-distributed", "name: dir-torch", 1))
    return {p.name: str(p) for p in tmp_path.iterdir()} | {"missing": str(tmp_path / "missing.yaml")}


TORCH = ["--runtime", "torch-distributed"]

# (argv, stdin) per command: every option at least once, both spellings, short forms, repeats, --,
# and errors the command body reports after parsing.
Case = tuple[Callable[[dict[str, str]], list[str]], str]


def _prefixed(command: list[str], make: Callable[[dict[str, str]], list[str]]) -> Callable[[dict[str, str]], list[str]]:
    return lambda f: [*command, *make(f)]


# Fine-tuning, placement, queues and code flags (issues #15, #16).
TUNE = ["--runtime", "torchtune-llama3.2-1b"]
NEW_FLAG_CASES: list[Case] = [
    (
        lambda f: [
            *TUNE,
            "--epochs",
            "2",
            "--batch-size=4",
            "--dtype",
            "bf16",
            "--loss",
            "CEWithChunkedOutputLoss",
            "--lora",
            "rank=16,alpha=32",
            "--dataset-source",
            "json",
            "--dataset-split",
            "train[:10%]",
            "--dataset-column-map",
            "input=q,output=a",
            "--train-on-input",
            "--system-prompt",
            "Be terse.",
        ],
        "",
    ),
    (lambda f: [*TUNE, "--qlora", "default", "--no-train-on-input"], ""),
    (lambda f: [*TUNE, "--dora", "rank=x"], ""),  # a usage error from the body
    (
        lambda f: [
            *TORCH,
            "--kueue-queue",
            "q",
            "--kueue-priority-class",
            "batch-high",
            "--priority-class",
            "high",
            "--node-selector",
            "pool=a",
            "--toleration",
            "gpu:NoSchedule",
            "--gpus",
            "2",
            "--gpu-type",
            "A100",
            "--gpu-type-label",
            "gpu/model",
            "--",
            "torchrun",
            "t.py",
        ],
        "",
    ),
    (
        lambda f: [
            *TORCH,
            "--scheduler",
            "kai",
            "--queue",
            "team",
            "--elastic",
            "1:2",
            "--max-restarts",
            "3",
            "--allow-extensions",
            "--",
            "torchrun",
            "t.py",
        ],
        "",
    ),
    (
        lambda f: [
            *TORCH,
            "--max-restarts",
            "2",
            "--restart-on-preemption",
            "--fail-on-exit-code",
            "2,42",
            "--restart-strategy",
            "blocking-recreate",
            "--ttl",
            "12h",
            "--checkpoint",
            "ckpt:/ckpt",
            "--",
            "torchrun",
            "t.py",
        ],
        "",
    ),
    (lambda f: [*TORCH, "--no-restart-on-preemption", "--fail-on-exit-code", "0", "--", "t.py"], ""),
    (
        lambda f: [
            *TORCH,
            "--code",
            f["job.yaml"],
            "--code-include",
            "*.yaml",
            "--pip",
            "numpy",
            "--pip-index-url",
            "https://pypi.example/simple",
            "--requirements",
            f["job.yaml"],
            "--",
            "python",
            "job.yaml",
        ],
        "",
    ),
]

RENDER_CASES: list[Case] = [
    (lambda f: ["job", "render", *TORCH, "--nodes", "4", "--", "torchrun", "train.py"], ""),
    (lambda f: ["render", "--runtime=torch-distributed", "--nodes=2", "--nproc-per-node=8"], ""),
    (lambda f: ["render", "-r", "torch-distributed", "-n", "team-a", "--name", "exp1"], ""),
    (lambda f: ["render", "-rtorch-distributed", "-nteam-b", "--namespace=team-c"], ""),  # last one wins
    (
        lambda f: [
            "render",
            *TORCH,
            "--image",
            "reg/trainer:1",
            "--cpu",
            "4",
            "--memory",
            "16Gi",
            "--resource",
            "nvidia.com/gpu=8",
            "--resource=example.com/nic=1",
        ],
        "",
    ),
    (lambda f: ["render", *TORCH, "--env", "LR=1e-3", "-e", "B=2", "-eC=3", "--env=D="], ""),
    (lambda f: ["render", *TORCH, "--feature-gates", "TrainJobStatus=true", "--status-server=trainer.ops:8443"], ""),
    (lambda f: ["render", *TORCH, "--feature-gates=TrainJobStatus=maybe"], ""),
    (
        lambda f: ["render", *TORCH, "--label", "team=ml", "-l", "tier=gold", "--annotation", "a=b", "--queue", "gpu"],
        "",
    ),
    (
        lambda f: [
            "render",
            *TORCH,
            "--dataset",
            "hf://org/ds",
            "--dataset-secret",
            "hf-token",
            "--model",
            "hf://org/m",
            "--model-secret",
            "m-token",
        ],
        "",
    ),
    (
        lambda f: ["render", "--runtime", "torchtune-llama3.2-1b", "--dataset=hf://org/other", "--model", "hf://org/m"],
        "",
    ),
    (lambda f: ["render", *TORCH, "--suspend"], ""),
    (lambda f: ["render", *TORCH, "--suspend", "--no-suspend"], ""),
    (lambda f: ["render", *TORCH, "--no-suspend", "--suspend", "-o", "json"], ""),
    (lambda f: ["render", *TORCH, "-oname"], ""),
    (lambda f: ["render", *TORCH, "--output=json", "--", "python", "-m", "train", "--nodes", "9", "--", "x"], ""),
    (lambda f: ["render", "torchrun", *TORCH, "--nodes", "2", "train.py"], ""),  # arguments between options
    (lambda f: ["render", "torchrun", *TORCH, "train.py", "--", "--lr", "1"], ""),  # interspersed, then --
    (lambda f: ["render", "-f", f["job.yaml"], "--nodes", "3"], ""),
    (lambda f: ["render", "--filename", "-", "-o", "name"], JOB),
    (lambda f: ["render", "-f-", "--set", "trainer.numNodes=5"], JOB),
    (
        lambda f: [
            "render",
            "-f",
            f["job.yaml.j2"],
            "--values",
            f["values.yaml"],
            "--values",
            f["more.yaml"],
            "--set",
            "name=over",
            "--set=nodes=6",
        ],
        "",
    ),
    (lambda f: ["render", "--runtime-file", f["mine.yaml"], "--runtime", "my-torch"], ""),
    (lambda f: ["render", *TORCH, "--runtime-kind", "ClusterTrainingRuntime"], ""),
    (lambda f: ["render", *TORCH, "--runtime-kind=TrainingRuntime"], ""),
    (lambda f: ["render", "--runtimes-dir", f["rtdir"], "--runtimes-dir=" + f["rtdir"], "-r", "dir-torch"], ""),
    (lambda f: ["render", *TORCH, "--patch", f["patch.yaml"]], ""),
    (
        lambda f: [
            "render",
            "--runtime",
            "deepspeed-distributed",
            "--nodes",
            "3",
            "--ssh-secret",
            "keys",
            "--allow-extensions",
            "--",
            "mpirun",
            "python",
            "t.py",
        ],
        "",
    ),
    (lambda f: ["render", *TORCH, "--explain"], ""),
    (lambda f: ["render", *TORCH, "--explain", "-o", "json"], ""),  # an error from the render body
    (lambda f: ["render", "--runtime", "no-such-runtime"], ""),
    (lambda f: ["render"], ""),
    (lambda f: ["render", *TORCH, "--env", "NOEQUALS"], ""),
    (lambda f: ["render", *TORCH, "--label", "=v"], ""),
    (lambda f: ["render", "-f", f["missing"]], ""),
    (lambda f: ["render", "-f", f["bad.yaml"]], ""),
    (lambda f: ["render", "-f", "-"], "kind: TrainJob\nspec: [\n"),
    (lambda f: ["render", "--patch", f["missing"], *TORCH], ""),
    (lambda f: ["render", *TORCH, "--kubeconfig", f["missing"], "--context", "nowhere"], ""),
    (lambda f: ["render", "--runtime", "--nodes"], ""),  # `--nodes` is --runtime's value, as in click
    *[(_prefixed(["job", "render"], make), stdin) for make, stdin in NEW_FLAG_CASES],
]

VALIDATE_CASES: list[Case] = [
    (lambda f: ["job", "validate", *TORCH, "--runtime-kind", "ClusterTrainingRuntime", "--name", "j"], ""),
    (lambda f: ["job", "validate", *TORCH], ""),
    (lambda f: ["job", "validate", *TORCH, "--feature-gates", "TrainJobStatus=1", "--status-server", "a.b:1"], ""),
    (lambda f: ["job", "validate", "-f", f["job.yaml"], "--nodes=3", "--", "torchrun", "t.py"], ""),
    (lambda f: ["job", "validate", "--filename", "-"], JOB),
    (lambda f: ["job", "validate", "-f", f["bad.yaml"]], ""),  # exit 3, every problem listed
    (lambda f: ["job", "validate", "-f", "-"], "kind: TrainJob\nspec: [\n"),
    (lambda f: ["job", "validate", "--runtime", "no-such-runtime"], ""),
    (lambda f: ["job", "validate"], ""),
    (lambda f: ["job", "validate", *TORCH, "--env", "NOEQUALS"], ""),
    (lambda f: ["job", "validate", "-f", f["job.yaml.j2"], "--values", f["values.yaml"], "--set", "nodes=4"], ""),
    (
        lambda f: [
            "job",
            "validate",
            "--runtime-file",
            f["mine.yaml"],
            "-r",
            "my-torch",
            "--runtimes-dir",
            f["rtdir"],
            "--name",
            "exp",
            "-n",
            "team-a",
            "--namespace=team-b",
            "--nodes",
            "2",
            "--nproc-per-node",
            "4",
            "--image",
            "reg/t:1",
            "--env",
            "A=1",
            "-e",
            "B=2",
            "--resource",
            "nvidia.com/gpu=1",
            "--cpu",
            "2",
            "--memory",
            "4Gi",
            "--label",
            "a=b",
            "-l",
            "c=d",
            "--annotation",
            "x=y",
            "--queue",
            "q",
            "--patch",
            f["patch.yaml"],
            "--suspend",
            "--kubeconfig",
            f["missing"],
            "--context",
            "nowhere",
        ],
        "",
    ),
    (
        lambda f: [
            "job",
            "validate",
            "--runtime",
            "torchtune-llama3.2-1b",
            "--dataset",
            "hf://org/ds",
            "--model",
            "hf://org/m",
            "--dataset-secret",
            "d",
            "--model-secret",
            "m",
            "--no-suspend",
        ],
        "",
    ),
    (
        lambda f: [
            "job",
            "validate",
            "--runtime",
            "deepspeed-distributed",
            "--ssh-secret",
            "keys",
            "--allow-extensions",
            "--",
            "mpirun",
            "python",
            "t.py",
        ],
        "",
    ),
    (lambda f: ["job", "validate", *TORCH, "--patch", f["missing"]], ""),
    *[(_prefixed(["job", "validate"], make), stdin) for make, stdin in NEW_FLAG_CASES],
]

INIT_CASES: list[Case] = [
    (lambda f: ["job", "init", "-r", "torch-distributed"], ""),
    (lambda f: ["job", "init", "--runtime=deepspeed-distributed", "--schema", "https://example.com/tj.json"], ""),
    (lambda f: ["job", "init", "--schema=./tj.json", "-rmlx-distributed"], ""),
    (lambda f: ["job", "init", "--runtime-file", f["mine.yaml"], "--runtime", "my-torch"], ""),
    (lambda f: ["job", "init", "-r", "dir-torch", "--runtimes-dir", f["rtdir"], "--runtimes-dir=" + f["rtdir"]], ""),
    (lambda f: ["job", "init", "-r", "no-such-runtime"], ""),
    (lambda f: ["job", "init", "-r", "torch-distributed", "--runtime-file", f["missing"]], ""),
    (lambda f: ["job", "init", "-r", "a", "-r", "torch-distributed"], ""),  # the last one wins
    (lambda f: ["job", "init", "-r", "torch-distributed", "--kubeconfig", f["missing"], "--context", "nowhere"], ""),
]

RUNTIME_LIST_CASES: list[Case] = [
    (lambda f: ["runtime", "list"], ""),  # --source all without a kubeconfig: the local ones, silently
    (lambda f: ["runtime", "list", "--source", "local"], ""),
    (lambda f: ["runtime", "list", "-o", "wide", "--source=local"], ""),
    (lambda f: ["runtime", "list", "-oname"], ""),
    (lambda f: ["runtime", "list", "--output=yaml", "--runtime-file", f["mine.yaml"], "--source", "local"], ""),
    (lambda f: ["runtime", "list", "-o", "json", "--runtimes-dir", f["rtdir"]], ""),
    (lambda f: ["runtime", "list", "--runtime-file", f["same.yaml"], "--runtime-file", f["mine.yaml"]], ""),
    (lambda f: ["runtime", "list", "--source", "bogus"], ""),
    (lambda f: ["runtime", "list", "--runtime-file", f["missing"], "--source", "local"], ""),
    (lambda f: ["runtime", "list", "--source", "cluster", "--kubeconfig", f["missing"]], ""),
    (
        lambda f: [
            "runtime",
            "list",
            "-o",
            "name",
            "--kubeconfig",
            f["missing"],
            "--context",
            "nowhere",
            "-n",
            "team-a",
            "--namespace=team-b",
            "--request-timeout",
            "2.5",
        ],
        "",
    ),
    (lambda f: ["runtime", "list", "-o", "name", "--source", "local", "--request-timeout=10"], ""),
]

RUNTIME_SHOW_CASES: list[Case] = [
    (lambda f: ["runtime", "show", "torch-distributed", "--source", "local"], ""),
    (lambda f: ["runtime", "show", "-o", "yaml", "deepspeed-distributed"], ""),  # the name after the options
    (lambda f: ["runtime", "show", "--output=json", "--", "mlx-distributed"], ""),
    (lambda f: ["runtime", "show", "my-torch", "--runtime-file", f["mine.yaml"], "-otext"], ""),
    (lambda f: ["runtime", "show", "torch-distributed", "--runtime-file", f["same.yaml"], "--source=local"], ""),
    (
        lambda f: [
            "runtime",
            "show",
            "--runtimes-dir",
            f["rtdir"],
            "dir-torch",
            "-n",
            "x",
            "--context",
            "c",
            "--request-timeout",
            "3",
        ],
        "",
    ),
    (lambda f: ["runtime", "show", "no-such-runtime", "--source", "local"], ""),
    (lambda f: ["runtime", "show", "torch-distributed", "--source", "cluster", "--kubeconfig", f["missing"]], ""),
    (lambda f: ["runtime", "show", "torch-distributed", "--source", "bogus"], ""),
]


# fmt: off
def _every_job_option(f: dict[str, str]) -> list[str]:
    return [
        "job", "run", "-f", f["job.yaml.j2"], "--values", f["values.yaml"], "--set", "nodes=2",
        "--runtime-file", f["mine.yaml"], "--runtimes-dir", f["rtdir"], "-r", "my-torch",
        "--runtime-kind", "ClusterTrainingRuntime", "--name", "x", "-n", "ns", "--nodes", "2",
        "--nproc-per-node", "2", "--image", "i", "-e", "A=1", "--resource", "r=1", "--cpu", "1",
        "--memory", "1Gi", "-l", "a=b", "--annotation", "c=d", "--dataset", "hf://d", "--model", "hf://m",
        "--dataset-secret", "s", "--model-secret", "t", "--patch", f["patch.yaml"], "--suspend",
        "--ssh-secret", "k", "--allow-extensions", "--kubeconfig", f["missing"], "--context", "c",
        "--queue", "q", "--", "python", "t.py",
    ]
# fmt: on


# `job run --local` starts real processes: the runs here are one pod with a fixed output (which
# pod fails first among several is not fixed); every job option is parsed in cases that stop
# at the missing --local, before anything runs.
RUN_CASES: list[Case] = [
    (lambda f: ["job", "run", "--local", *TORCH, "--", "sh", "-c", "echo hello; echo err >&2"], ""),
    (
        lambda f: [
            *["job", "run", "--local", *TORCH, "--feature-gates", "TrainJobStatus=true", "--status-server", "a.b:1"],
            *["--", "sh", "-c", 'test -s "$KUBEFLOW_TRAINER_SERVER_TOKEN" && echo the run serves its status'],
        ],
        "",
    ),
    (
        lambda f: [
            "job",
            "run",
            "--local",
            *TORCH,
            "--timeout",
            "30s",
            "--max-local-procs=1",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
        "",
    ),
    (lambda f: ["job", "run", "--local", *TORCH, "--nodes", "2", "--max-local-procs", "1", "--", "true"], ""),
    (lambda f: ["job", "run", "--local", *TORCH, "--timeout", "soon", "--", "true"], ""),
    (lambda f: ["job", "run", "--local", *TORCH], ""),  # the image's entrypoint: refused
    (lambda f: ["job", "run", "--keep", *TORCH, "--", "true"], ""),  # no --local
    (lambda f: ["job", "run", "--local", "--container", "lxc", *TORCH, "--", "true"], ""),  # not an engine
    (_every_job_option, ""),
    (lambda f: ["job", "run", "--filename", "-", "--no-suspend"], JOB),
    *[(_prefixed(["job", "run"], make), stdin) for make, stdin in NEW_FLAG_CASES],
]

TABLES = {
    "ktrain.cli.commands.job_render:render_job": RENDER_CASES,
    "ktrain.cli.commands.job_run:run_job": RUN_CASES,
    "ktrain.cli.commands.job_validate:validate_job": VALIDATE_CASES,
    "ktrain.cli.commands.job_init:init_job": INIT_CASES,
    "ktrain.cli.commands.runtime_list:list_runtimes": RUNTIME_LIST_CASES,
    "ktrain.cli.commands.runtime_show:show_runtime": RUNTIME_SHOW_CASES,
}
CASES = [case for table in TABLES.values() for case in table]


def _captured(
    call: Callable[[list[str]], int | None], argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", out)
        m.setattr(sys, "stderr", err)
        m.setattr(sys, "stdin", io.StringIO(stdin))
        code = call(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_fast_path_output_is_byte_identical_to_typer(
    case: int, files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_argv, stdin = CASES[case]
    argv = make_argv(files)
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    fast = _captured(try_fast, argv, stdin, monkeypatch)
    assert fast[0] is not None, f"the fast path declined {argv}"
    typer_path = _captured(main, argv, stdin, monkeypatch)
    assert fast == typer_path, argv


# The cluster commands (job create/list/get/logs/wait/delete) have their tables in
# tests/cli/test_fastpath_cluster.py, which runs them against the API-server double.
CLUSTER_BODIES = {
    "ktrain.cli.commands.job_create:submit_job",
    "ktrain.cli.commands.job_list:list_jobs",
    "ktrain.cli.commands.job_get:show_job",
    "ktrain.cli.commands.job_logs:print_logs",
    "ktrain.cli.commands.job_wait:wait_job",
    "ktrain.cli.commands.job_watch:watch_job",
    "ktrain.cli.commands.job_why:explain_job",
    "ktrain.cli.commands.job_delete:delete_jobs",
}


def test_every_fast_command_has_its_table_and_the_tables_cover_both_outcomes(files: dict[str, str]) -> None:
    assert set(TABLES) == set(COMMANDS.values()) - CLUSTER_BODIES
    used_paths = {command_path(make_argv(files))[0] for make_argv, _ in CASES}  # type: ignore[index]
    assert used_paths == {path for path, body in COMMANDS.items() if body not in CLUSTER_BODIES}, (
        "a fast command with no case"
    )


@pytest.mark.parametrize("body", sorted(TABLES))
def test_each_table_covers_every_option_of_its_command(body: str, files: dict[str, str]) -> None:
    """Every option of the command appears in its equivalence table, spelt some way."""
    argvs = [make_argv(files) for make_argv, _ in TABLES[body]]
    used = {arg.split("=", 1)[0] for argv in argvs for arg in argv}
    used |= {arg[:2] for argv in argvs for arg in argv if arg[:1] == "-" and arg[1:2] != "-"}
    path = next(path for path, name in COMMANDS.items() if name == body)
    parser = Parser(command_node(path))
    options = {name: option for name, option in {**parser.long, **parser.short}.items() if option is not None}
    dests = {option["dest"] for option in options.values()}
    covered = {option["dest"] for name, option in options.items() if name in used}  # one spelling is enough
    assert dests == covered, f"options never exercised: {sorted(dests - covered)}"


def _typer_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """Record, instead of running, what each typer command passes to its body (the typer app
    looks the body up in its module when the command runs; the fast path keeps seeing the body)."""
    import importlib
    import inspect

    import ktrain.cli.fastpath

    seen: list[tuple[Any, dict[str, Any]]] = []
    originals = {path: handler_of(path) for path in COMMANDS}
    monkeypatch.setattr(ktrain.cli.fastpath, "handler_of", originals.__getitem__)
    for body in set(originals.values()):  # `render` and `job render` share theirs
        module = importlib.import_module(body.__module__)

        def record(*args: Any, _body: Any = body, **kwargs: Any) -> None:
            seen.append((_body, dict(inspect.signature(_body).bind(*args, **kwargs).arguments)))

        monkeypatch.setattr(module, body.__name__, record)
    return seen


def test_fast_path_passes_each_body_what_the_typer_command_passes(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _typer_calls(monkeypatch)
    for make_argv, _ in CASES:
        argv = make_argv(files)
        seen.clear()
        assert main(argv) == 0
        assert len(seen) == 1, argv
        body, kwargs = seen[0]
        assert parse_command(argv) == (body, kwargs), argv


def test_plain_decimals_read_as_typer_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """--request-timeout: the fast path converts plain decimals with float(); typer goes through
    pydantic. Both must give the very same float (anything else is declined, see DECLINED)."""
    import random

    rng = random.Random(6)
    samples = ["0", "10", "007", "2.5", "0.1", "1.000", "123456789012345", "9999999999999.9"]
    for _ in range(150):
        whole = str(rng.randrange(10 ** rng.randrange(1, 8)))
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 15 - len(whole))))
        samples.append(whole + ("." + fraction if fraction else ""))
    seen = _typer_calls(monkeypatch)
    for raw in samples:
        argv = ["runtime", "list", "--request-timeout", raw]
        seen.clear()
        assert main(argv) == 0
        parsed = parse_command(argv)
        assert parsed is not None, raw
        assert repr(parsed[1]["request_timeout"]) == repr(seen[0][1]["request_timeout"]), raw


def test_values_outside_typer_bounds_are_left_to_typer() -> None:
    """typer's min=/max= (inclusive) reach the parser through the tree; outside them typer reports
    the value (or clamps it), so the fast parser declines."""
    for kind, ok, out in (("int", ["2", "5", "03"], ["1", "6", "0"]), ("float", ["2", "4.5", "5.0"], ["1.99", "5.01"])):
        node = {
            "options": [
                {"names": ["--n"], "dest": "n", "type": kind, "default": None, "takes_value": True, "min": 2, "max": 5}
            ]
        }
        for raw in ok:
            assert Parser(node).parse(["--n", raw]) == {"n": float(raw) if kind == "float" else int(raw)}, raw
        for raw in out:
            with pytest.raises(Declined):
                Parser(node).parse(["--n", raw])
    int_argument = {
        "options": [],
        "arguments": [{"name": "n", "dest": "n", "type": "int", "nargs": 1, "required": True, "default": None}],
    }
    with pytest.raises(Declined):  # its words would reach the body as str, typer's as int
        Parser(int_argument)
    node_option = next(o for o in command_node(("job", "logs"))["options"] if o.get("dest") == "node")
    assert node_option["min"] == 0  # `job logs --node`: typer's min=0


@pytest.mark.parametrize(
    "failure, message, code",
    [
        (KeyboardInterrupt, "interrupted\n", ExitCode.INTERRUPTED),
        (
            RuntimeError("boom"),
            "internal error: RuntimeError: boom\nre-run with --debug for a traceback\n",
            ExitCode.ERROR,
        ),
    ],
)
def test_interrupts_and_crashes_come_out_the_same_way(
    failure: BaseException, message: str, code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ktrain.service.render

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr(ktrain.service.render, "render_resolving", fail)
    argv = ["render", *TORCH]
    assert _captured(try_fast, argv, "", monkeypatch) == (code, "", message)
    assert _captured(main, argv, "", monkeypatch) == (code, "", message)


DECLINED = [
    (["render", *TORCH, "--bogus"], 2, "No such option: --bogus"),
    (["render", *TORCH, "-x"], 2, "No such option: -x"),
    (["render", "torchrun", *TORCH, "train.py", "--lr"], 2, "No such option: --lr"),  # the trainer's flag, no --
    (["render", "--nodes", "four"], 2, "Invalid value for '--nodes'"),
    (["render", "--nodes"], 2, "Option '--nodes' requires an argument"),
    (["render", *TORCH, "-r"], 2, "Option '-r' requires an argument"),
    (["render", *TORCH, "--explain=yes"], 2, "Option '--explain' does not take a value"),
    (["render", *TORCH, "--debug"], 2, "No such option: --debug"),
    (["render", *TORCH, "--nodes", " 4"], 0, ""),  # typer's lax int: left to typer, which accepts it
    (["render", *TORCH, "--nodes", "+4"], 0, ""),
    (["render", *TORCH, "--nodes", "-1"], None, ""),
    (["render", *TORCH, "-o", "xml"], None, "xml"),
    (["job", "validate", *TORCH, "--explain"], 2, "No such option: --explain"),  # render's, not validate's
    (["job", "validate", *TORCH, "--nodes", "0x10"], 2, "Invalid value for '--nodes'"),
    (["job", "init"], 2, "Missing option '--runtime'"),  # a required option
    (["job", "init", "--schema", "s.json"], 2, "Missing option '--runtime'"),
    (["job", "init", "-r"], 2, "Option '-r' requires an argument"),
    (["job", "init", "-r", "torch-distributed", "extra"], 2, "unexpected extra argument(s) (extra)"),
    (["job", "init", "-r", "torch-distributed", "--debug"], 2, "No such option: --debug"),
    (["runtime", "list", "stray"], 2, "unexpected extra argument(s) (stray)"),
    (["runtime", "list", "-o", "xml"], 2, "unknown output format 'xml'"),  # not one of the choices
    (["runtime", "list", "--source", "local", "--request-timeout", "ten"], 2, "Invalid value for '--request-timeout'"),
    (["runtime", "list", "-o", "name", "--source", "local", "--request-timeout", "1e1"], 0, "torch-distributed"),
    (["runtime", "list", "-o", "name", "--source", "local", "--request-timeout", " 5"], 0, "torch-distributed"),
    (["runtime", "list", "-o", "name", "--source", "local", "--request-timeout", ".5"], 0, "torch-distributed"),
    (["runtime", "list", "--request-timeout"], 2, "Option '--request-timeout' requires an argument"),
    (["runtime", "show"], 2, "Missing argument 'name'"),  # the required positional argument
    (["runtime", "show", "--source", "local"], 2, "Missing argument 'name'"),
    (["runtime", "show", "torch-distributed", "mlx-distributed"], 2, "Got unexpected extra argument"),
    (["runtime", "show", "torch-distributed", "--output"], 2, "Option '--output' requires an argument"),
    (["runtime", "show", "torch-distributed", "--debug"], 2, "No such option: --debug"),
    (["job", "create", "-r", "torch-distributed", "--nodes", "x"], 2, "Invalid value for '--nodes'"),
    (["job", "run", "--local", "--max-local-procs", "0"], 2, "Invalid value for '--max-local-procs'"),
    (["job", "create", "-r", "torch-distributed", "--request-timeout", "1e1"], None, "no kubeconfig found"),
    (["job", "create", "-r", "torch-distributed", "--wait=yes"], 2, "Option '--wait' does not take a value"),
    (["job", "create", "-r", "torch-distributed", "--debug"], 2, "No such option: --debug"),
    (["job", "list", "-o", "xml"], 2, "unknown output format 'xml'"),  # not one of the choices
    (["job", "list", "stray"], 2, "unexpected extra argument(s) (stray)"),
    (["job", "list", "--request-timeout", ".5"], None, "no kubeconfig found"),
    (["job", "get"], 2, "Missing argument 'name'"),
    (["job", "get", "a", "b"], 2, "unexpected extra argument(s) (b)"),
    (["job", "get", "a", "-o"], 2, "Option '-o' requires an argument"),
    (["job", "logs", "a", "--node", "-1"], 2, "Invalid value for '--node'"),  # below typer's min=0
    (["job", "logs", "a", "--node", "1x"], 2, "Invalid value for '--node'"),
    (["job", "logs", "a", "--tail", "-1"], None, "no kubeconfig found"),  # kubectl's -1: typer reads it
    (["job", "logs", "a", "--step", "bogus"], 2, "--step 'bogus'"),
    (["job", "logs", "a", "-x"], 2, "No such option: -x"),
    (["job", "wait", "a", "--for", "bogus"], 2, "--for 'bogus'"),
    (["job", "delete", "a", "--yes=1"], 2, "Option '--yes' does not take a value"),
    (["job", "delete", "a", "--debug"], 2, "No such option: --debug"),
]


@pytest.mark.parametrize("argv, code, text", DECLINED)
def test_the_fast_path_declines_what_it_is_not_sure_about(
    argv: list[str], code: int | None, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    assert parse_command(argv) is None
    assert _captured(try_fast, argv, "", monkeypatch) == (None, "", "")
    got, out, err = _captured(main, argv, "", monkeypatch)
    if code is not None:
        assert got == code, out + err
    else:
        assert got != 0
    assert text in out + err


@pytest.mark.parametrize("argv", [["render", *TORCH], ["runtime", "list", "-o", "name"], ["job", "init", "-r", "x"]])
def test_ktrain_no_fastpath_turns_it_off(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KTRAIN_NO_FASTPATH", "1")
    assert try_fast(argv) is None
    monkeypatch.setenv("KTRAIN_NO_FASTPATH", "0")
    assert _captured(try_fast, argv, "", monkeypatch)[0] is not None


# --- the console script: fast path first, typer when it declines or is turned off --------------
def _ktrain(args: list[str], stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    probe = (
        "import sys\nfrom ktrain.launcher import run\nsys.argv = ['ktrain', *sys.argv[1:]]\ntry:\n    run()\n"
        "finally:\n    sys.stderr.write('TYPER %s\\n' % ('typer' in sys.modules))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe, *args], input=stdin, capture_output=True, text=True, env={**os.environ, **env}
    )


@pytest.mark.parametrize(
    "args, stdin",
    [
        (["job", "render", *TORCH, "--nodes", "4", "--", "torchrun", "train.py"], ""),
        (["render", "-f", "-", "-o", "json"], JOB),
        (["render", "--runtime", "no-such-runtime"], ""),
        (["job", "validate", "-f", "-"], JOB),
        (["job", "init", "-r", "torch-distributed"], ""),
        (["runtime", "list"], ""),
        (["runtime", "list", "-o", "wide", "--source", "local"], ""),
        (["runtime", "show", "deepspeed-distributed", "--source", "local"], ""),
        (["runtime", "show", "no-such-runtime"], ""),
    ],
)
def test_the_console_script_takes_the_fast_path_with_identical_results(args: list[str], stdin: str) -> None:
    fast = _ktrain(args, stdin)
    slow = _ktrain(args, stdin, KTRAIN_NO_FASTPATH="1")
    assert fast.stderr.endswith("TYPER False\n") and slow.stderr.endswith("TYPER True\n")
    assert (fast.returncode, fast.stdout, fast.stderr.replace("TYPER False\n", "")) == (
        slow.returncode,
        slow.stdout,
        slow.stderr.replace("TYPER True\n", ""),
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["render", "--nodes", "four"], "Invalid value for '--nodes'"),
        (["runtime", "show"], "Missing argument 'name'"),
        (["job", "init"], "Missing option '--runtime'"),
    ],
)
def test_the_console_script_falls_back_to_typer_when_declined(args: list[str], message: str) -> None:
    out = _ktrain(args)
    assert out.returncode == 2 and message in out.stderr and out.stderr.endswith("TYPER True\n")


# --- the option table cannot drift from the typer commands, nor from the bodies ------------------
@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_fast_parser_knows_every_parameter_of_the_typer_command(path: tuple[str, ...]) -> None:
    import typer.main

    from ktrain.cli import app

    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    parser = Parser(command_node(path))
    table = {**parser.long, **parser.short}
    typer_names = set()
    minimal = list(path)  # the command with only its required parameters
    for param in command.params:
        if param.param_type_name == "argument":
            assert parser.argument is not None and parser.argument["dest"] == param.name
            assert (parser.argument["nargs"], bool(parser.argument.get("required"))) == (param.nargs, param.required)
            assert parser.defaults[param.name] == param.default
            if param.required:
                minimal.append("x")
            continue
        for name in [*param.opts, *param.secondary_opts]:
            typer_names.add(name)
            entry = table[name]
            assert entry is not None and entry["dest"] == param.name, name
            assert entry["takes_value"] == (not param.is_flag), name
            assert bool(entry.get("multiple")) == param.multiple, name
            assert (name in entry.get("false_names", ())) == (name in param.secondary_opts), name
            assert (entry.get("min"), entry.get("max")) == (param.min, param.max), name  # typer's bounds
        assert (param.name in parser.required) == param.required, param.name
        if param.required:
            minimal += [param.opts[0], "x"]
        assert parser.defaults[param.name] == param.default, param.name
    if parser.argument is not None:
        assert any(p.param_type_name == "argument" for p in command.params)
    help_names = {name for name, entry in table.items() if entry is None}
    assert help_names == {"-h", "--help"}
    assert set(table) - help_names == typer_names
    # the destinations are exactly the body's parameters (JobInput's fields for `job_input`)
    parsed = parse_command(minimal)
    assert parsed is not None and parsed[0] is handler_of(path), minimal


def test_a_body_whose_parameters_differ_from_the_tree_is_never_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dispatch checks the body against the tree's destinations, as the sync test does."""
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    argv = ["runtime", "list", "-o", "name", "--source", "local"]
    assert parse_command(argv) is not None
    # show_runtime takes a NAME that `runtime list` never gives; render_job takes a JobInput
    for wrong in ("ktrain.cli.commands.runtime_show:show_runtime", "ktrain.cli.commands.job_render:render_job"):
        monkeypatch.setitem(command_node(("runtime", "list")), "handler", wrong)
        assert parse_command(argv) is None
        assert _captured(try_fast, argv, "", monkeypatch) == (None, "", "")


def test_every_job_input_field_is_declared_as_an_option_or_argument() -> None:
    """The typer app turns each JobInput field's declaration into a typer parameter."""
    import typer.models

    from ktrain.cli.typer_app import JOB_INPUT_FIELDS, _resolved

    assert [f.name for f in fields(JobInput)] == JOB_INPUT_FIELDS
    for name, annotation in _resolved(JobInput, JOB_INPUT_FIELDS).items():
        assert any(isinstance(m, typer.models.ParameterInfo) for m in annotation.__metadata__), name
