"""The typer app: every `ktrain` command and the root options (`--debug`, `--version`).

Run it through `ktrain.cli.main`, which wraps it in the one error wrapper (`ktrain.cli.guard`).
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ktrain import __version__
from ktrain.cli import completion, job, runtime, schema

app = typer.Typer(
    name="ktrain",
    help="Author, render and submit Kubeflow Trainer v2 training jobs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(job.app, name="job")
app.add_typer(runtime.app, name="runtime")
app.add_typer(schema.app, name="schema")
app.add_typer(completion.app, name="completion")
app.command("render", help="Alias of `ktrain job render`.")(job.render_command)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"ktrain {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = None,
) -> None:
    """Author, render and submit Kubeflow Trainer v2 training jobs."""
