"""How a command declares itself: plain values, no typer.

A command is one function in a module of `ktrain.cli.commands`, marked with `@command(...)`.
Its docstring is its help; each parameter is annotated `Annotated[<type>, Option(...)]` or
`Annotated[<type>, Argument(...)]`, with the default after `=`, as typer's own `Annotated` style
(the keyword arguments are typer's). A parameter `job_input: JobInput` stands for every job option
(`ktrain.cli.jobinput.JobInput`, whose fields are declared the same way).

The command modules start with `from __future__ import annotations`, so these annotations stay
strings until the typer app is built (`ktrain.cli.typer_app`, which evaluates them, turns each `Option`
into a `typer.Option`): the fast path (`ktrain.cli.fastpath`) imports and calls the very same
function without importing typer or even `typing`. Everything else — the command tree that
completion and the fast parser read, docs/commands.md — is generated from the typer app
(`python -m ktrain.cli.generate`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])

ATTRIBUTE = "ktrain_command"  # where `@command` keeps a function's CommandInfo


class Option:
    """`typer.Option(*names, **settings)`, declared without typer."""

    __slots__ = ("names", "settings")

    def __init__(self, *names: str, **settings: Any) -> None:
        self.names = names
        self.settings = settings

    def __repr__(self) -> str:
        return f"Option{(*self.names,)!r}"


class Argument:
    """`typer.Argument(**settings)`, declared without typer."""

    __slots__ = ("settings",)

    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def __repr__(self) -> str:
        return "Argument()"


class CommandInfo:
    """Where a command sits in `ktrain ...` and how the launcher may run it."""

    __slots__ = ("aliases", "fast", "path")

    def __init__(self, path: tuple[str, ...], fast: bool, aliases: dict[tuple[str, ...], str]) -> None:
        self.path = path  # ("job", "delete"): `ktrain job delete`
        self.fast = fast  # the launcher parses it without typer (ktrain.cli.fastpath)
        self.aliases = aliases  # another path -> its help text (`ktrain render`)


def command(*path: str, fast: bool = False, aliases: dict[tuple[str, ...], str] | None = None) -> Callable[[F], F]:
    """Mark a function as the command `ktrain <path>`; it is returned unchanged.

    `fast=True`: the launcher's typer-free parser handles it (every parameter must be a kind
    `ktrain.cli.fastpath.Parser` reads, and it needs equivalence tests in tests/cli/test_fastpath*.py).
    """

    def mark(func: F) -> F:
        setattr(func, ATTRIBUTE, CommandInfo(tuple(path), fast, dict(aliases or {})))
        return func

    return mark


def info_of(func: Any) -> CommandInfo | None:
    """The CommandInfo `@command` gave `func`, if any."""
    info = getattr(func, ATTRIBUTE, None)
    return info if isinstance(info, CommandInfo) else None


# --- options several commands share ------------------------------------------------------------
# Connecting to a cluster (kubectl's flags).
KUBECONFIG = Option("--kubeconfig", help="Path to the kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config).")
CONTEXT = Option("--context", help="The kubeconfig context to use.")
NAMESPACE = Option("-n", "--namespace", help="Namespace (default: the context's, else default).")
REQUEST_TIMEOUT = Option(
    "--request-timeout", help="Seconds each API request may take in all (connect, answer, body); -f: until it starts."
)
JOB_NAME = Argument(help="The job (TrainJob or JobSet) name.")
