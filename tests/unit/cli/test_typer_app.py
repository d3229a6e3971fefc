"""ktrain.cli.typer_app: the typer app built from the command declarations — its help is the
command tree's (`ktrain.cli.helptext`), a group alone prints its help with exit 2, each command's
options are its declaration's, and `job_input` arrives as one `JobInput`."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from ktrain import __version__
from ktrain.cli import typer_app
from ktrain.cli.commands import command_functions, job_render
from ktrain.cli.helptext import render_help
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import Argument, Option, info_of
from ktrain.cli.typer_app import JOB_OPTIONS_PANEL, app, typer_function, typer_parameter_info

RUNNER = CliRunner()


@pytest.fixture(autouse=True)
def _width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


@pytest.mark.parametrize(
    "path", [(), ("job",), ("job", "render"), ("job", "create"), ("render",), ("runtime", "list"), ("schema", "export")]
)
def test_help_is_the_command_trees(path: tuple[str, ...]) -> None:
    result = RUNNER.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert result.stdout == render_help(path, width=100)


@pytest.mark.parametrize("path", [(), ("job",), ("runtime",)])
def test_a_group_alone_prints_its_help_on_stdout_with_exit_2(path: tuple[str, ...]) -> None:
    result = RUNNER.invoke(app, list(path))
    assert result.exit_code == 2
    assert result.stdout == render_help(path, width=100)


def test_a_usage_error_shows_the_trees_usage() -> None:
    result = RUNNER.invoke(app, ["job", "get"])  # its NAME is missing
    assert result.exit_code == 2
    assert "Usage: ktrain job get [OPTIONS] NAME" in result.stderr


def test_version() -> None:
    result = RUNNER.invoke(app, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"ktrain {__version__}\n")


def test_job_input_arrives_as_one_value_with_the_commands_own_options(monkeypatch: pytest.MonkeyPatch) -> None:
    received: dict[str, Any] = {}
    monkeypatch.setattr(job_render, "render_job", lambda **kwargs: received.update(kwargs))
    args = ["job", "render", "-r", "torch-distributed", "--nodes", "3", "-o", "json", "--", "torchrun", "t.py", "-x"]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert received == {
        "job_input": JobInput(runtime="torch-distributed", nodes=3, command=["torchrun", "t.py", "-x"]),
        "output": "json",
        "explain": False,
    }


def test_the_alias_runs_the_same_body(monkeypatch: pytest.MonkeyPatch) -> None:
    received: list[JobInput] = []
    monkeypatch.setattr(job_render, "render_job", lambda job_input, **_: received.append(job_input))
    assert RUNNER.invoke(app, ["render", "--name", "j"]).exit_code == 0
    assert received == [JobInput(name="j")]


def test_the_signature_puts_the_trainer_command_first_and_the_job_options_in_their_panel() -> None:
    func = typer_function(job_render.render_job)
    params = list(inspect.signature(func).parameters.values())
    names = [p.name for p in params]
    assert names[0] == "command"
    assert names[1:3] == ["output", "explain"]
    assert set(names) == {"output", "explain", *(f for f in typer_app.JOB_INPUT_FIELDS)}
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    by_name = {p.name: p.annotation.__metadata__[0] for p in params}
    assert by_name["nodes"].rich_help_panel == JOB_OPTIONS_PANEL
    assert by_name["output"].rich_help_panel is None
    assert func.__doc__ == job_render.render_job.__doc__


def test_plain_declarations_become_typers() -> None:
    option = typer_parameter_info(Option("-o", "--output", help="yaml | json"), panel="Output")
    assert isinstance(option, typer.models.OptionInfo)
    # typer's Annotated style: the first name sits where the default would (typer reads it as a name)
    assert (option.default, *option.param_decls) == ("-o", "--output")
    assert (option.help, option.rich_help_panel) == ("yaml | json", "Output")
    argument = typer_parameter_info(Argument(help="The job."))
    assert isinstance(argument, typer.models.ArgumentInfo)
    assert argument.help == "The job."


def test_every_declared_command_and_alias_is_in_the_app() -> None:
    root = typer.main.get_command(app)
    for func in command_functions():
        info = info_of(func)
        assert info is not None
        for path in (info.path, *info.aliases):
            node: Any = root
            for name in path:
                node = node.commands[name]
            assert node.callback.__name__ == func.__name__, path
