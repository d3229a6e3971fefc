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

from ktrain import __version__
from ktrain.cli.commands import GROUPS, command_functions
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import Argument, Option, info_of
from ktrain.util.structs import fields

JOB_INPUT = "job_input"  # a command parameter of this name receives the JobInput options as one value
JOB_INPUT_FIELDS = [f.name for f in fields(JobInput)]


def typer_parameter_info(spec: Option | Argument) -> Any:
    """`typer.Option(...)` / `typer.Argument(...)` for a plain declaration."""
    if isinstance(spec, Option):
        return typer.Option(*spec.names, **spec.settings)
    return typer.Argument(**spec.settings)


def _resolved(owner: Any, names: list[str]) -> dict[str, Any]:
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
        out[name] = Annotated[hint.__origin__, typer_parameter_info(declared[0])]
    return out


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
        job_annotations = _resolved(JobInput, JOB_INPUT_FIELDS)
        shared = [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=job_annotations[f.name]
            )
            for f in fields(JobInput)
        ]
        # The trainer command is a positional argument; keep it first so `-- torchrun ...` works.
        params = [shared[0], *params, *shared[1:]]

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
        name="ktrain",
        help="Author, render and submit Kubeflow Trainer v2 training jobs.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    groups = {name: typer.Typer(help=text, no_args_is_help=True) for name, text in GROUPS.items()}
    for name, group in groups.items():
        app.add_typer(group, name=name)
    aliases = []
    for func in command_functions():
        info = info_of(func)
        assert info is not None
        group_name, command_name = info.path
        groups[group_name].command(command_name)(typer_function(func))
        aliases += [(path, text, func) for path, text in info.aliases.items()]
    for (alias,), text, func in aliases:  # top-level aliases (`ktrain render`)
        app.command(alias, help=text)(typer_function(func))
    return app


app = build_app()
