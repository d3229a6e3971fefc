"""Each command is declared once, in its own module of ktrain/cli/commands, without typer.

The typer app (ktrain.cli.typer_app), the command tree and docs/commands.md are built from these
declarations (tests/architecture/test_completion_sync.py checks the generated files).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ktrain.cli.commands import GROUPS, MODULES, command_functions
from ktrain.cli.spec import Option, command, info_of
from ktrain.completion.scripts import SCRIPTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Annotated

COMMANDS_DIR = Path(__file__).resolve().parents[2] / "ktrain" / "cli" / "commands"


def test_every_command_module_is_listed_and_declares_a_command() -> None:
    on_disk = sorted(p.stem for p in COMMANDS_DIR.glob("*.py") if p.stem != "__init__")
    assert sorted(MODULES) == on_disk, "list each module of ktrain/cli/commands in MODULES (its --help order)"
    declared = {f.__module__.rsplit(".", 1)[1] for f in command_functions()}
    assert declared == set(MODULES), f"modules without a @command: {sorted(set(MODULES) - declared)}"


def test_every_command_path_is_declared_once_in_a_known_group() -> None:
    paths = []
    for func in command_functions():
        info = info_of(func)
        assert info is not None
        paths += [info.path, *info.aliases]
        assert info.path[0] in GROUPS, info.path
    assert len(paths) == len(set(paths)), "a command path is declared twice"
    assert {("completion", shell) for shell in SCRIPTS} <= set(paths), "a shell without `ktrain completion <shell>`"


def test_the_declarations_load_without_typer() -> None:
    """The fast path imports command modules; typer (and click) stay out of the process."""
    code = (
        "import sys\nfrom ktrain.cli.commands import command_functions\ncommand_functions()\n"
        "print(sorted(m for m in ('typer', 'click', 'rich', 'kubernetes') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_parameter_without_a_declaration_is_refused_by_name() -> None:
    from ktrain.cli.typer_app import typer_function

    @command("job", "example")
    def example(count: int = 1, name: Annotated[str, Option("--name", help="A name.")] = "x") -> None:
        """An example."""

    with pytest.raises(TypeError, match=r"example\.count"):
        typer_function(example)
