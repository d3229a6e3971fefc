"""The `ktrain` command line: one typer app, one error wrapper (httpie's raw_main pattern)."""

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


def main(argv: list[str] | None = None) -> int:
    import typer.exceptions as typer_exceptions
    from typer._click import exceptions as click_exceptions  # typer vendors click
    from typer.main import get_command

    from ktrain.cli.guard import run_guarded
    from ktrain.errors import ExitCode

    args = list(sys.argv[1:] if argv is None else argv)

    def run_app() -> int:
        # Parse and invoke directly rather than through `app()`: typer's own main would turn
        # Ctrl-C into a silent exit 0 and a closed pipe into exit 1 before run_guarded sees them.
        command = get_command(app)
        try:
            with command.make_context("ktrain", args) as ctx:
                command.invoke(ctx)
        except typer_exceptions.Exit as exc:
            return int(exc.exit_code or 0)
        except click_exceptions.ClickException as exc:
            exc.show(file=sys.stderr)
            return int(exc.exit_code)
        except (typer_exceptions.Abort, EOFError) as exc:
            sys.stderr.write("\naborted\n" if isinstance(exc, EOFError) else "aborted\n")
            return int(ExitCode.INTERRUPTED)
        return 0

    return run_guarded(run_app, debug="--debug" in args)


def run() -> None:
    sys.exit(main())
