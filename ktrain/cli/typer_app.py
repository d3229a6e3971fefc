"""The typer app, built from the command declarations in `ktrain.cli.commands`.

Imported only when typer must parse argv (`ktrain.cli.main`: help, `--debug`, a command the fast
path declined or does not handle) and by the generator (`python -m ktrain.cli.generate`).
Each `@command` function becomes a typer command whose signature (`__signature__`) is the
function's own, with every `Option`/`Argument` of `ktrain.cli.spec` turned into typer's, and a
`job_input: JobInput` parameter expanded into the JobInput options.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
import typer.core

from ktrain import __version__
from ktrain.cli.commands import GROUPS, command_functions
from ktrain.cli.helptext import node_at, render_help
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import Argument, Option, info_of
from ktrain.completion.tree import load_tree
from ktrain.util.structs import fields

JOB_INPUT = "job_input"  # a command parameter of this name receives the JobInput options as one value
JOB_INPUT_FIELDS = [f.name for f in fields(JobInput)]
JOB_OPTIONS_PANEL = "Job options"  # where `--help` lists the JobInput options


def _help_path(ctx: Any) -> tuple[str, ...]:
    """The command's path below `ktrain` (("job", "create")), from its click context."""
    path: list[str] = []
    while ctx.parent is not None:
        path.insert(0, ctx.info_name)
        ctx = ctx.parent
    return tuple(path)


class _TreeHelp:
    """Help and usage from the command tree (`ktrain.cli.helptext`), not typer's rich layout: the
    same text the typer-free fast path prints."""

    def get_help(self, ctx: Any) -> str:
        return render_help(_help_path(ctx)).rstrip("\n")  # click's echo adds the newline back

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """What follows the command in `Usage: ...` (error messages too): the tree's usage."""
        return [node_at(load_tree(), _help_path(ctx)).get("usage", "[OPTIONS]")]


class HelpCommand(_TreeHelp, typer.core.TyperCommand):
    pass


class HelpGroup(_TreeHelp, typer.core.TyperGroup):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """A group alone (`ktrain`, `ktrain job`): its help on stdout and exit code 2, as before
        (click would print it on stderr)."""
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            sys.stdout.write(self.get_help(ctx) + "\n")
            ctx.exit(2)
        return super().parse_args(ctx, args)


def typer_parameter_info(spec: Option | Argument, panel: str | None = None) -> Any:
    """`typer.Option(...)` / `typer.Argument(...)` for a plain declaration; `panel`: the help
    section an option is listed under (default: Options)."""
    if isinstance(spec, Option):
        settings = {"rich_help_panel": panel, **spec.settings} if panel else spec.settings
        return typer.Option(*spec.names, **settings)
    return typer.Argument(**spec.settings)


def _resolved(owner: Any, names: list[str], panel: str | None = None) -> dict[str, Any]:
    """`Annotated[type, typer info]` for each declared parameter of a function or a struct.

    The annotations are strings (`from __future__ import annotations`); they are evaluated here
    in their module, with `Annotated` (which the modules import for type checkers only). Not
    with `typing.get_type_hints`: before Python 3.11 it wraps a None default's `Annotated`
    in `Optional`, hiding the declaration.
    """
    namespace = {**vars(sys.modules[owner.__module__]), "Annotated": Annotated}
    out = {}
    for name in names:
        hint = owner.__annotations__[name]
        if isinstance(hint, str):
            hint = eval(hint, namespace)  # noqa: S307 - ktrain's own source, as typing.get_type_hints does
        declared = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, (Option, Argument))]
        if len(declared) != 1:
            raise TypeError(f"{owner.__qualname__}.{name}: annotate it Annotated[<type>, Option(...) or Argument(...)]")
        out[name] = Annotated[hint.__origin__, typer_parameter_info(declared[0], panel)]
    return out


def _is_argument(annotation: Any) -> bool:
    return any(isinstance(m, typer.models.ArgumentInfo) for m in getattr(annotation, "__metadata__", ()))


def typer_function(func: Callable[..., Any]) -> Callable[..., None]:
    """A function typer can read (its signature, help) that calls `func` when the command runs.

    `func` is looked up in its module at call time, so a test may replace it there.
    """
    module, name = func.__module__, func.__name__
    own = list(inspect.signature(func).parameters.values())
    takes_job_input = bool(own) and own[0].name == JOB_INPUT
    if takes_job_input:
        own = own[1:]
    annotations = _resolved(func, [p.name for p in own])
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=annotations[p.name]) for p in own]
    if takes_job_input:
        job_annotations = _resolved(JobInput, JOB_INPUT_FIELDS, JOB_OPTIONS_PANEL)
        shared = [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=job_annotations[f.name]
            )
            for f in fields(JobInput)
        ]
        # The trainer command is a positional argument that takes every word left: after the
        # command's own arguments (`job diff NAME -- torchrun ...`), before everything else.
        own_arguments = [p for p in params if _is_argument(p.annotation)]
        rest = [p for p in params if not _is_argument(p.annotation)]
        params = [*own_arguments, shared[0], *rest, *shared[1:]]

    def run(**kwargs: Any) -> None:
        body = getattr(importlib.import_module(module), name)
        if takes_job_input:
            kwargs = {JOB_INPUT: JobInput(**{n: kwargs.pop(n) for n in JOB_INPUT_FIELDS}), **kwargs}
        body(**kwargs)

    run.__name__ = name
    run.__qualname__ = name
    run.__module__ = module
    run.__doc__ = func.__doc__
    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"ktrain {__version__}\n")
        raise typer.Exit()


def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = None,
) -> None:
    """Author, render and submit Kubeflow Trainer v2 training jobs."""


def build_app() -> typer.Typer:
    """`ktrain`: the root options, one sub-app per group, every command, then the aliases."""
    app = typer.Typer(
        cls=HelpGroup,
        name="ktrain",
        help="Author, render and submit Kubeflow Trainer v2 training jobs.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    groups = {name: typer.Typer(cls=HelpGroup, help=text, no_args_is_help=True) for name, text in GROUPS.items()}
    for name, group in groups.items():
        app.add_typer(group, name=name)
    aliases = []
    for func in command_functions():
        info = info_of(func)
        assert info is not None
        group_name, command_name = info.path
        groups[group_name].command(command_name, cls=HelpCommand)(typer_function(func))
        aliases += [(path, text, func) for path, text in info.aliases.items()]
    for (alias,), text, func in aliases:  # top-level aliases (`ktrain render`)
        app.command(alias, cls=HelpCommand, help=text)(typer_function(func))
    return app


app = build_app()
