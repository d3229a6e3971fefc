"""`--help` comes from the command tree (`ktrain.cli.helptext`), on the fast path and through typer alike.

The fast path (`ktrain.cli.fastpath.print_help`) answers help without typer; the typer app routes
its own help (and a group given alone) to the same renderer. Both must print the same bytes with
the same exit code, and the text must name every option and argument the typer app has.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from ktrain.cli import main
from ktrain.cli.fastpath import help_request, try_fast
from ktrain.cli.helptext import render_help, wrap
from ktrain.completion.tree import load_tree

TREE = load_tree()


def _paths(node: dict[str, Any] | None = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    node = TREE["root"] if node is None else node
    yield path
    for name, sub in node.get("commands", {}).items():
        yield from _paths(sub, (*path, name))


PATHS = list(_paths())


def _captured(call: Any, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", out)
        m.setattr(sys, "stderr", err)
        m.setenv("COLUMNS", "80")
        code = call(argv)
    return code, out.getvalue(), err.getvalue()


# Verified by hand against the declarations (ktrain.cli.typer_app, ktrain.cli.commands.runtime_show).
ROOT_HELP = """\
Usage: ktrain [OPTIONS] COMMAND [ARGS]...

  Author, render and submit Kubeflow Trainer v2 training jobs.

Options:
  --debug     Show tracebacks for errors.
  --version   Print the version.
  -h, --help  Show this message and exit.

Commands:
  render      Alias of `ktrain job render`.
  job         Render and manage TrainJobs.
  runtime     Runtime blueprints (ClusterTrainingRuntime / TrainingRuntime).
  schema      JSON Schemas for editors (yaml-language-server) and CI.
  completion  Shell completion scripts.
"""

RUNTIME_SHOW_HELP = """\
Usage: ktrain runtime show [OPTIONS] NAME

  Show a blueprint, and what the engine injects when a job runs on it.

Arguments:
  NAME                     Runtime name.

Options:
  --runtime-file TEXT      A runtime YAML file.
  --runtimes-dir TEXT      A directory of runtimes.
  -o, --output TEXT        text | yaml | json [default: text]
  --source TEXT            all | local | cluster: where to read runtimes from
                           (the cluster's ClusterTrainingRuntimes and the
                           namespace's TrainingRuntimes). [default: all]
  -n, --namespace TEXT     Namespace (default: the context's, else default).
  --kubeconfig TEXT        Path to the kubeconfig file(s) (default: $KUBECONFIG,
                           ~/.kube/config).
  --context TEXT           The kubeconfig context to use.
  --request-timeout FLOAT  Seconds to wait for the cluster. [default: 10.0]
  -h, --help               Show this message and exit.
"""

# The start of `job convert --help` at 60 columns: a two-paragraph description, re-wrapped,
# and a required option; the job options of `job render` under their own heading.
CONVERT_HEAD_AT_60 = """\
Usage: ktrain job convert [OPTIONS]

  Convert Training Operator v1 jobs (PyTorchJob, TFJob,
  MPIJob, XGBoostJob, JAXJob, PaddleJob, MXJob) to
  TrainJobs.

  Prints the TrainJob(s), and a TrainingRuntime generated
  from the v1 pod templates when no bundled runtime fits;
  the report on stderr says where every v1 field went, or
  why it was dropped.

Options:
  -f, --filename TEXT  A v1 job file: one job, several
                       documents or a List (- for stdin).
                       [required]
"""


def test_golden_root_and_runtime_show() -> None:
    assert render_help((), width=80) == ROOT_HELP
    assert render_help(("runtime", "show"), width=80) == RUNTIME_SHOW_HELP
    assert render_help(("job", "convert"), width=60).startswith(CONVERT_HEAD_AT_60)
    render = render_help(("job", "render"), width=80)
    assert "cluster.\n\nAliases:\n  ktrain render\n\nArguments:\n" in render  # ktrain.cli.commands.job_render
    assert "\nOptions:\n  -o, --output TEXT" in render and "\nJob options:\n  -f, --filename TEXT" in render
    assert "  --gpus INTEGER " in render and "[x>=0]" in render
    assert "  --train-on-input / --no-train-on-input\n" in render  # too wide for the column: own line


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "ktrain")
def test_help_names_every_option_argument_and_command_of_the_typer_app(path: tuple[str, ...]) -> None:
    import typer.main

    from ktrain.cli.typer_app import app

    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    text = render_help(path, width=200)
    words = text.replace(",", " ").split()
    assert text.startswith(f"Usage: {' '.join(['ktrain', *path])} ")
    flat = " ".join(text.split())
    assert " ".join((command.help or "").split()) in flat  # the whole description
    for param in command.params:
        if param.param_type_name == "argument":
            assert (param.metavar or param.name.upper()) in text, param.name  # as typer names it in usage
        else:
            for name in [*param.opts, *param.secondary_opts]:
                assert name in words, name
            if param.required:
                assert "[required]" in text
        assert " ".join((param.help or "").split()) in flat, param.name
    assert "-h" in words and "--help" in words
    for name, sub in getattr(command, "commands", {}).items():
        assert f"\n  {name} " in text, name
        assert " ".join((sub.help or "").split("\n")[0].split()) in flat


@pytest.mark.parametrize("width", [40, 50, 61, 80, 100])
@pytest.mark.parametrize("path", [(), ("job",), ("job", "create"), ("job", "convert"), ("runtime", "list")])
def test_wrapping_keeps_lines_within_the_width_and_loses_nothing(path: tuple[str, ...], width: int) -> None:
    text = render_help(path, width=width)
    assert all(len(line) <= width for line in text.splitlines()), width
    assert "".join(text.split()) == "".join(render_help(path, width=1000).split())


def test_wrap_cuts_only_words_longer_than_the_line() -> None:
    assert wrap("a bb ccc", 4) == ["a bb", "ccc"]
    assert wrap("rank=,alpha=,dropout= x", 14) == ["rank=,alpha=,", "dropout= x"]
    assert wrap("abcdefgh", 3) == ["abc", "def", "gh"]


def test_the_terminal_width_comes_from_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from ktrain.cli.helptext import terminal_width

    for columns, width in (("50", 50), ("10", 40), ("500", 100), ("", 80), ("x", 80)):
        monkeypatch.setenv("COLUMNS", columns)
        assert terminal_width() == width, columns


HELP_ARGV = [
    [],
    ["--help"],
    ["-h"],
    ["job"],
    ["runtime"],
    ["--debug", "job"],
    ["job", "-h", "bogus"],  # the group's help: click reads -h before the command
    ["--help", "job", "create"],
    ["render", "-h"],
    ["render", "--runtime", "torch-distributed", "--nodes", "x", "--help"],  # help before conversion errors
    ["render", "stray", "words", "--help"],
    ["job", "create", "--help"],
    ["job", "delete", "-yh"],  # a run of short flags ending in -h
    ["runtime", "show", "--help"],
    ["runtime", "show", "-h", "--", "-x"],
    ["schema", "export", "-h"],
    ["completion", "install", "--help"],
]

NOT_HELP_ARGV = [
    ["render", "-r", "--help"],  # --help is the value of -r, as click reads it
    ["runtime", "list", "-oh"],  # -o takes the rest of the word: output "h"
    ["render", "--bogus", "--help"],  # the unknown option is reported first
    ["render", "--help", "--bogus"],
    ["runtime", "list", "--help=x"],
    ["render", "--", "--help"],  # after --: the trainer's own flag
    ["job", "bogus", "--help"],  # no such command
    ["--debug"],  # missing command
    ["--version", "--help"],  # typer decides which eager option wins
    ["render", "--nodes"],
    ["runtime", "list"],
]


@pytest.mark.parametrize("argv", HELP_ARGV, ids=" ".join)
def test_fast_path_help_is_byte_identical_to_typer_help(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    assert help_request(argv) is not None
    fast = _captured(try_fast, argv, monkeypatch)
    typer_path = _captured(main, argv, monkeypatch)
    assert fast == typer_path
    code, out, err = fast
    assert out.startswith("Usage: ktrain") and err == ""
    path, alone = help_request(argv)  # type: ignore[misc]
    assert code == (2 if alone else 0)  # a group given alone: its help, and a usage error's code
    assert out == render_help(path, width=80)
    assert "\x1b" not in out


@pytest.mark.parametrize("argv", NOT_HELP_ARGV, ids=" ".join)
def test_what_is_not_certainly_help_is_left_to_typer(argv: list[str]) -> None:
    assert help_request(argv) is None


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "ktrain")
def test_short_and_long_help_print_the_same(path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    long = _captured(try_fast, [*path, "--help"], monkeypatch)
    assert long == _captured(try_fast, [*path, "-h"], monkeypatch)
    assert long == (0, render_help(path, width=80), "")


def test_typer_error_messages_use_the_same_usage_line(monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = _captured(main, ["render", "--bogus"], monkeypatch)
    assert code == 2 and err.startswith("Usage: ktrain render [OPTIONS] [COMMAND]...\n"), err
    code, _, err = _captured(main, ["runtime", "show"], monkeypatch)
    assert code == 2 and err.startswith("Usage: ktrain runtime show [OPTIONS] NAME\n"), err


def _ktrain(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    probe = "import sys\nfrom ktrain.launcher import run\nsys.argv = ['ktrain', *sys.argv[1:]]\nrun()\n"
    return subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, env={**os.environ, **env}
    )


def test_the_console_script_wraps_to_columns_with_or_without_the_fast_path() -> None:
    narrow = _ktrain("job", "create", "--help", COLUMNS="52")
    assert narrow.returncode == 0 and narrow.stderr == ""
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 52
    assert narrow.stdout == render_help(("job", "create"), width=52)
    assert _ktrain("job", "create", "--help", COLUMNS="52", KTRAIN_NO_FASTPATH="1").stdout == narrow.stdout
    alone = _ktrain("runtime", COLUMNS="80")
    assert (alone.returncode, alone.stdout, alone.stderr) == (2, render_help(("runtime",), width=80), "")
