"""The error wrapper every command runs inside, typer-free.

Both the typer app (`ktrain.cli.main`) and the fast path (`ktrain.cli.fastpath`) run their
command through `run_guarded`, so a KtrainError, an interrupt or a crash comes out the same
way whichever parsed the command line.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable


class Aborted(Exception):
    """The user declined a confirmation: `aborted`, exit 1 (a refusal, not Ctrl-C's 130), without typer."""


class ExitStatus(Exception):  # noqa: N818 - an outcome, not an error
    """A command's answer is its exit status, with nothing more to say, its answer being on stdout
    already (`job diff`: 1 when the objects differ, as `diff` and `kubectl diff` answer; `job why`: 1
    when the job is not running)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def debug_requested(argv: list[str]) -> bool:
    """Whether the command line asks for tracebacks: a `--debug` before any `--` (what follows
    `--` is the training command's own, e.g. `-- python train.py --debug`)."""
    end = argv.index("--") if "--" in argv else len(argv)
    return "--debug" in argv[:end]


def run_guarded(command: Callable[[], int], debug: bool) -> int:
    """Run `command` (which returns an exit code); turn what escapes it into a message and a code.

    With `debug`, a traceback is printed first (what the user asked for); the message and the
    exit code stay what they are without it, so scripts see the same codes either way.
    """
    from ktrain.errors import ExitCode, KtrainError

    try:
        return command()
    except ExitStatus as exc:
        return exc.code
    except KtrainError as exc:
        if debug:
            _traceback()
        from ktrain.output.errors import format_error

        sys.stderr.write(format_error(exc))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except Aborted:  # the user said no: a refusal (1), not an interrupt (130)
        sys.stderr.write("aborted\n")
        return int(ExitCode.ERROR)
    except EOFError:  # stdin closed where an answer was expected
        sys.stderr.write("\naborted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # The reader went away (`ktrain render | head`): not an error. Point stdout at devnull
        # so the interpreter's final flush does not raise again.
        import os

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place that turns crashes into a message
        if debug:
            _traceback()
            sys.stderr.write(f"internal error: {type(exc).__name__}: {exc}\n")
            return int(ExitCode.ERROR)
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc}\nre-run with --debug for a traceback\n")
        return int(ExitCode.ERROR)


def _traceback() -> None:
    """The traceback of the exception being handled, on stderr (`--debug`)."""
    import traceback

    traceback.print_exc(file=sys.stderr)
