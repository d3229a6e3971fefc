"""The `ktrain` command line: one typer app, one error wrapper (httpie's raw_main pattern).

The commands are declared, typer-free, in `ktrain.cli.commands` (see `ktrain.cli.spec`); the
typer app is built from them in `ktrain.cli.typer_app`, imported only when typer must parse argv.
The console script first offers argv to the typer-free fast path (`ktrain.cli.fastpath`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


def __getattr__(name: str) -> Any:
    if name == "app":  # `from ktrain.cli import app`, without importing typer up front
        from ktrain.cli.typer_app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    import typer.exceptions as typer_exceptions
    from typer._click import exceptions as click_exceptions  # typer vendors click
    from typer.main import get_command

    from ktrain.cli.guard import debug_requested, run_guarded
    from ktrain.cli.typer_app import app
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
        except typer_exceptions.Abort:  # ktrain's own bodies raise guard.Aborted instead
            sys.stderr.write("aborted\n")
            return int(ExitCode.INTERRUPTED)
        return 0

    return run_guarded(run_app, debug=debug_requested(args))


def run() -> None:
    sys.exit(main())
