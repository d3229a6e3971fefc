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

    from ktrain.errors import ExitCode, KtrainError
    from ktrain.output.errors import format_error

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        app(args=args, prog_name="ktrain", standalone_mode=False)
    except typer_exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click_exceptions.ClickException as exc:
        exc.show(file=sys.stderr)
        return int(exc.exit_code)
    except typer_exceptions.Abort:
        sys.stderr.write("aborted\n")
        return int(ExitCode.INTERRUPTED)
    except KtrainError as exc:
        if debug:
            raise
        sys.stderr.write(format_error(exc))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place that turns crashes into a message
        if debug:
            raise
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc}\nre-run with --debug for a traceback\n")
        return int(ExitCode.ERROR)
    return 0


def run() -> None:
    sys.exit(main())
