"""ktrain.cli.spec: how a command declares itself (plain values that the typer app and the fast path read)."""

from __future__ import annotations

from typing import Any

from ktrain.cli.spec import (
    ATTRIBUTE,
    JOB_NAME,
    NAMESPACE,
    Argument,
    CommandInfo,
    Option,
    command,
    info_of,
)


def test_option_keeps_its_names_in_order_and_its_typer_settings() -> None:
    option = Option("-o", "--output", help="yaml | json", show_default=False)
    assert option.names == ("-o", "--output")
    assert option.settings == {"help": "yaml | json", "show_default": False}
    assert repr(option) == "Option('-o', '--output')"


def test_argument_keeps_its_typer_settings() -> None:
    argument = Argument(help="The job.", show_default=False)
    assert argument.settings == {"help": "The job.", "show_default": False}
    assert repr(argument) == "Argument()"


def test_command_marks_the_function_and_returns_it_unchanged() -> None:
    def body(name: str) -> str:
        return name.upper()

    marked = command("job", "get", fast=True, aliases={("get",): "Show a job."})(body)
    assert marked is body
    assert marked("x") == "X"
    info = info_of(marked)
    assert isinstance(info, CommandInfo)
    assert info.path == ("job", "get")
    assert info.fast is True
    assert info.aliases == {("get",): "Show a job."}


def test_command_defaults_are_slow_path_and_no_aliases() -> None:
    @command("schema", "export")
    def body() -> None:
        """Export."""

    info = info_of(body)
    assert info is not None
    assert (info.path, info.fast, info.aliases) == (("schema", "export"), False, {})


def test_each_command_gets_its_own_aliases_dict() -> None:
    aliases: dict[tuple[str, ...], str] = {("render",): "Render."}
    mark = command("job", "render", aliases=aliases)

    def one() -> None: ...

    mark(one)
    aliases[("other",)] = "changed afterwards"
    info = info_of(one)
    assert info is not None
    assert info.aliases == {("render",): "Render."}


def test_info_of_is_none_for_an_unmarked_function_or_a_foreign_attribute() -> None:
    def plain() -> None: ...

    assert info_of(plain) is None
    impostor: Any = lambda: None  # noqa: E731
    setattr(impostor, ATTRIBUTE, ("job", "get"))  # not a CommandInfo
    assert info_of(impostor) is None
    assert info_of(None) is None


def test_the_shared_options_use_kubectls_names() -> None:
    assert NAMESPACE.names == ("-n", "--namespace")
    assert "help" in JOB_NAME.settings
