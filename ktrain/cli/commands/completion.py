"""`ktrain completion bash|zsh|fish|powershell|install`: the shell completion scripts.

The scripts themselves live in `ktrain.completion.scripts` (one per shell in `SCRIPTS`; a test
checks each has its command here).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ktrain.cli.spec import Option, command
from ktrain.completion.scripts import SCRIPTS, detect_shell, install, script
from ktrain.errors import UsageError

if TYPE_CHECKING:
    from typing import Annotated


@command("completion", "bash")
def print_bash() -> None:
    """Print the bash completion script."""
    sys.stdout.write(script("bash"))


@command("completion", "zsh")
def print_zsh() -> None:
    """Print the zsh completion script."""
    sys.stdout.write(script("zsh"))


@command("completion", "fish")
def print_fish() -> None:
    """Print the fish completion script."""
    sys.stdout.write(script("fish"))


@command("completion", "powershell")
def print_powershell() -> None:
    """Print the powershell completion script."""
    sys.stdout.write(script("powershell"))


@command("completion", "install")
def install_completion(
    shell: Annotated[
        str | None, Option("--shell", help="bash | zsh | fish | powershell (default: from $SHELL)")
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
