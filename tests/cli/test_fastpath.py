"""The typer-free render path (`ktrain.cli.fastpath`) behaves exactly as the typer command.

Each argv runs through the fast path (`try_render`, which the console script calls first) and
through the typer app (`main`, what KTRAIN_NO_FASTPATH=1 runs); stdout, stderr and the exit
code must be byte-identical. Argv the fast path is not sure about must be declined, so typer
keeps every message about the command line.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from ktrain.cli import main
from ktrain.cli.fastpath import Parser, command_node, parse_render, try_render
from ktrain.cli.jobinput import JobInput
from ktrain.errors import ExitCode
from ktrain.structs import fields

REPO = Path(__file__).resolve().parents[2]

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
        "manager: acme.io/tuning\ntrainingRuntimeSpec:\n  template:\n    metadata:\n      labels: {tuned: 'yes'}\n")
    (tmp_path / "bad.yaml").write_text("kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainr: {}\n")
    runtime = (REPO / "runtimes" / "torch-distributed.yaml").read_text()
    (tmp_path / "mine.yaml").write_text(runtime.replace("name: torch-distributed", "name: my-torch", 1))
    (tmp_path / "rtdir").mkdir()
    (tmp_path / "rtdir" / "r.yaml").write_text(runtime.replace("name: torch-distributed", "name: dir-torch", 1))
    return {p.name: str(p) for p in tmp_path.iterdir()} | {"missing": str(tmp_path / "missing.yaml")}


TORCH = ["--runtime", "torch-distributed"]

# (argv, stdin): every JobInput option at least once, both spellings, short forms, repeats, --, errors.
CASES: list[tuple[Callable[[dict[str, str]], list[str]], str]] = [
    (lambda f: ["job", "render", *TORCH, "--nodes", "4", "--", "torchrun", "train.py"], ""),
    (lambda f: ["render", "--runtime=torch-distributed", "--nodes=2", "--nproc-per-node=8"], ""),
    (lambda f: ["render", "-r", "torch-distributed", "-n", "team-a", "--name", "exp1"], ""),
    (lambda f: ["render", "-rtorch-distributed", "-nteam-b", "--namespace=team-c"], ""),  # last one wins
    (lambda f: ["render", *TORCH, "--image", "reg/trainer:1", "--cpu", "4", "--memory", "16Gi",
                "--resource", "nvidia.com/gpu=8", "--resource=example.com/nic=1"], ""),
    (lambda f: ["render", *TORCH, "--env", "LR=1e-3", "-e", "B=2", "-eC=3", "--env=D="], ""),
    (lambda f: ["render", *TORCH, "--label", "team=ml", "-l", "tier=gold", "--annotation", "a=b", "--queue", "gpu"], ""),
    (lambda f: ["render", *TORCH, "--dataset", "hf://org/ds", "--dataset-secret", "hf-token",
                "--model", "hf://org/m", "--model-secret", "m-token"], ""),
    (lambda f: ["render", "--runtime", "torchtune-llama3.2-1b", "--dataset=hf://org/other", "--model", "hf://org/m"], ""),
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
    (lambda f: ["render", "-f", f["job.yaml.j2"], "--values", f["values.yaml"], "--values", f["more.yaml"],
                "--set", "name=over", "--set=nodes=6"], ""),
    (lambda f: ["render", "--runtime-file", f["mine.yaml"], "--runtime", "my-torch"], ""),
    (lambda f: ["render", "--runtimes-dir", f["rtdir"], "--runtimes-dir=" + f["rtdir"], "-r", "dir-torch"], ""),
    (lambda f: ["render", *TORCH, "--patch", f["patch.yaml"]], ""),
    (lambda f: ["render", "--runtime", "deepspeed-distributed", "--nodes", "3", "--ssh-secret", "keys",
                "--allow-extensions", "--", "mpirun", "python", "t.py"], ""),
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
]


def _captured(call: Callable[[list[str]], int | None], argv: list[str], stdin: str,
               monkeypatch: pytest.MonkeyPatch) -> tuple[int | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", out)
        m.setattr(sys, "stderr", err)
        m.setattr(sys, "stdin", io.StringIO(stdin))
        code = call(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_fast_path_output_is_byte_identical_to_typer(case: int, files: dict[str, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    make_argv, stdin = CASES[case]
    argv = make_argv(files)
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    fast = _captured(try_render, argv, stdin, monkeypatch)
    assert fast[0] is not None, f"the fast path declined {argv}"
    typer_path = _captured(main, argv, stdin, monkeypatch)
    assert fast == typer_path, argv


def test_the_table_covers_every_option_and_both_outcomes(files: dict[str, str]) -> None:
    """Every option of the command appears in the equivalence table, spelt some way."""
    used = {arg.split("=", 1)[0] for make_argv, _ in CASES for arg in make_argv(files)}
    used |= {arg[:2] for make_argv, _ in CASES for arg in make_argv(files) if arg[:1] == "-" and arg[1:2] != "-"}
    parser = Parser(command_node(("render",)))
    options = {name for name, option in {**parser.long, **parser.short}.items() if option is not None}
    missing = {name for name in options if name not in used}
    # each option needs one of its spellings only
    dests = {parser.long.get(n, parser.short.get(n))["dest"] for n in missing}  # type: ignore[index]
    covered = {parser.long.get(n, parser.short.get(n))["dest"] for n in options - missing}  # type: ignore[index]
    assert dests <= covered, f"options never exercised: {sorted(dests - covered)}"


def test_fast_path_parses_into_the_same_job_input_typer_builds(files: dict[str, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import ktrain.cli.job as job_commands

    seen: list[tuple[JobInput, dict[str, Any]]] = []
    monkeypatch.setattr(job_commands, "render_job",
                        lambda job_input, output, explain: seen.append((job_input, {"output": output,
                                                                                    "explain": explain})))
    for make_argv, _ in CASES:
        argv = make_argv(files)
        seen.clear()
        assert main(argv) == 0
        assert parse_render(argv) == seen[0], argv


@pytest.mark.parametrize("failure, message, code", [
    (KeyboardInterrupt, "interrupted\n", ExitCode.INTERRUPTED),
    (RuntimeError("boom"), "internal error: RuntimeError: boom\nre-run with --debug for a traceback\n", ExitCode.ERROR),
])
def test_interrupts_and_crashes_come_out_the_same_way(failure: BaseException, message: str, code: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import ktrain.cluster_runtimes

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr(ktrain.cluster_runtimes, "render_resolving", fail)
    argv = ["render", *TORCH]
    assert _captured(try_render, argv, "", monkeypatch) == (code, "", message)
    assert _captured(main, argv, "", monkeypatch) == (code, "", message)


DECLINED = [
    (["render", "-h"], 0, "Usage: ktrain render"),
    (["job", "render", "--help"], 0, "Usage: ktrain job render"),
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
    (["render", *TORCH, "--", "x", "--debug"], 0, ""),  # --debug anywhere: typer's wrapper shows tracebacks
    (["job", "validate", *TORCH], 0, "valid"),
    (["runtime", "list"], 0, "torch-distributed"),
]


@pytest.mark.parametrize("argv, code, text", DECLINED)
def test_the_fast_path_declines_what_it_is_not_sure_about(argv: list[str], code: int | None, text: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    assert parse_render(argv) is None
    assert _captured(try_render, argv, "", monkeypatch) == (None, "", "")
    got, out, err = _captured(main, argv, "", monkeypatch)
    if code is not None:
        assert got == code, out + err
    else:
        assert got != 0
    assert text in out + err


def test_ktrain_no_fastpath_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["render", *TORCH]
    monkeypatch.setenv("KTRAIN_NO_FASTPATH", "1")
    assert try_render(argv) is None
    monkeypatch.setenv("KTRAIN_NO_FASTPATH", "0")
    assert _captured(try_render, argv, "", monkeypatch)[0] == 0


# --- the console script: fast path first, typer when it declines or is turned off --------------
def _ktrain(args: list[str], stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    probe = ("import sys\nfrom ktrain.launcher import run\nsys.argv = ['ktrain', *sys.argv[1:]]\ntry:\n    run()\n"
             "finally:\n    sys.stderr.write('TYPER %s\\n' % ('typer' in sys.modules))\n")
    return subprocess.run([sys.executable, "-c", probe, *args], input=stdin, capture_output=True, text=True,
                          env={**os.environ, **env})


@pytest.mark.parametrize("args, stdin", [
    (["job", "render", *TORCH, "--nodes", "4", "--", "torchrun", "train.py"], ""),
    (["render", "-f", "-", "-o", "json"], JOB),
    (["render", "--runtime", "no-such-runtime"], ""),
])
def test_the_console_script_takes_the_fast_path_with_identical_results(args: list[str], stdin: str) -> None:
    fast = _ktrain(args, stdin)
    slow = _ktrain(args, stdin, KTRAIN_NO_FASTPATH="1")
    assert fast.stderr.endswith("TYPER False\n") and slow.stderr.endswith("TYPER True\n")
    assert (fast.returncode, fast.stdout, fast.stderr.replace("TYPER False\n", "")) == \
        (slow.returncode, slow.stdout, slow.stderr.replace("TYPER True\n", ""))


def test_the_console_script_falls_back_to_typer_when_declined() -> None:
    out = _ktrain(["render", "--nodes", "four"])
    assert out.returncode == 2 and "Invalid value for '--nodes'" in out.stderr and out.stderr.endswith("TYPER True\n")


# --- the option table cannot drift from the typer command ---------------------------------------
@pytest.mark.parametrize("path", [("job", "render"), ("render",)])
def test_fast_parser_knows_every_option_of_the_typer_command(path: tuple[str, ...]) -> None:
    import typer.main

    from ktrain.cli import app

    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    parser = Parser(command_node(path))
    table = {**parser.long, **parser.short}
    typer_names = set()
    for param in command.params:
        if param.param_type_name == "argument":
            assert parser.argument is not None and parser.argument["dest"] == param.name
            assert param.nargs == -1 and parser.defaults[param.name] == param.default
            continue
        for name in [*param.opts, *param.secondary_opts]:
            typer_names.add(name)
            entry = table[name]
            assert entry is not None and entry["dest"] == param.name, name
            assert entry["takes_value"] == (not param.is_flag), name
            assert bool(entry.get("multiple")) == param.multiple, name
            assert (name in entry.get("false_names", ())) == (name in param.secondary_opts), name
        assert parser.defaults[param.name] == param.default, param.name
    help_names = {name for name, entry in table.items() if entry is None}
    assert help_names == {"-h", "--help"}
    assert set(table) - help_names == typer_names
    assert parse_render(list(path)) is not None  # the destinations are exactly JobInput + render_job's


def test_every_job_input_field_has_its_typer_declaration_and_vice_versa() -> None:
    import typing

    import typer.models

    from ktrain.cli.options import JOB_INPUT_OPTIONS

    assert list(JOB_INPUT_OPTIONS) == [f.name for f in fields(JobInput)]
    for name, annotation in JOB_INPUT_OPTIONS.items():
        metadata = typing.get_args(annotation)[1:]
        assert any(isinstance(m, typer.models.ParameterInfo) for m in metadata), name
