"""`ktrain completion bash|zsh|fish|powershell|install`."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ktrain.completion.scripts import SCRIPTS, detect_shell, install, script
from ktrain.errors import UsageError

app = typer.Typer(help="Shell completion scripts.", no_args_is_help=True)


def _printer(shell: str):  # type: ignore[no-untyped-def]
    def command() -> None:
        sys.stdout.write(script(shell))

    command.__doc__ = f"Print the {shell} completion script."
    return command


for _shell in SCRIPTS:
    app.command(_shell)(_printer(_shell))


@app.command("install")
def install_command(
    shell: Annotated[
        Optional[str], typer.Option("--shell", help="bash | zsh | fish | powershell (default: from $SHELL)")
    ] = None,
) -> None:
    """Install completion for your shell in its standard user location (safe to run twice)."""
    chosen = shell or detect_shell()
    if chosen not in SCRIPTS:
        raise UsageError(
            f"cannot tell which shell to install for ({chosen or 'SHELL is not set'})",
            hint="pass --shell bash|zsh|fish|powershell",
        )
    for line in install(chosen):
        sys.stderr.write(line + "\n")
    sys.stderr.write("open a new shell to use it\n")
