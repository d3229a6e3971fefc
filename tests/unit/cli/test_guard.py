"""The error wrapper every command runs inside (`ktrain.cli.guard.run_guarded`): what escapes a command
becomes one message on stderr and its exit code, the same whether typer or the fast path parsed argv;
a traceback only with `--debug` (before any `--`), and the message and code stay the same with it."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from ktrain.cli.guard import Aborted, ExitStatus, run_guarded
from ktrain.errors import ExitCode, RuntimeNotFoundError, UsageError


def _raise(exc: BaseException) -> Callable[[], int]:
    def command() -> int:
        raise exc

    return command


def test_debug_requested_only_before_double_dash() -> None:
    from ktrain.cli.fastpath import parse_command
    from ktrain.cli.guard import debug_requested

    assert debug_requested(["--debug", "job", "render"])
    assert not debug_requested(["job", "render", "--", "python", "--debug"])
    assert debug_requested(["--debug", "job", "render", "--", "x"])
    # the fast path no longer declines a command whose training command says --debug
    assert parse_command(["job", "render", "-r", "torch-distributed", "--", "python", "--debug"]) is not None


@pytest.mark.parametrize(
    "exc, code, message",
    [
        (UsageError("bad flag", hint="try --x"), ExitCode.USAGE, "error: bad flag\nhint: try --x\n"),
        (RuntimeNotFoundError("runtime nope not found"), ExitCode.NOT_FOUND, "error: runtime nope not found\n"),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, "interrupted\n"),
        (Aborted(), ExitCode.ERROR, "aborted\n"),  # the user said no: 1, not Ctrl-C's 130
        (EOFError(), ExitCode.INTERRUPTED, "\naborted\n"),  # stdin closed at a question
        (ExitStatus(1), 1, ""),  # `job diff`'s answer: the code alone
        (ExitStatus(0), 0, ""),
        (
            ZeroDivisionError("division by zero"),
            ExitCode.ERROR,
            "internal error: ZeroDivisionError: division by zero\n",
        ),
    ],
)
@pytest.mark.parametrize("debug", [False, True])
def test_what_escapes_a_command_is_one_message_and_its_exit_code(
    exc: BaseException, code: int, message: str, debug: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_guarded(_raise(exc), debug=debug) == code
    out, err = capsys.readouterr()
    assert out == ""
    crash = isinstance(exc, ZeroDivisionError)
    traced = debug and (crash or isinstance(exc, UsageError | RuntimeNotFoundError))
    assert ("Traceback (most recent call last)" in err) == traced, err
    assert err.endswith(message + ("re-run with --debug for a traceback\n" if crash and not debug else "")), err


def test_a_command_that_returns_gives_its_code_and_prints_nothing_more(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded(lambda: 3, debug=False) == 3
    assert capsys.readouterr() == ("", "")


def test_a_reader_that_went_away_is_no_error(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ktrain render | head`: the pipe closes, the command stops quietly with 0, and stdout is pointed
    at /dev/null so the interpreter's last flush cannot fail again."""
    import os

    read, write = os.pipe()
    os.close(read)
    with open(write, "w") as closed_pipe:
        monkeypatch.setattr(sys, "stdout", closed_pipe)
        assert run_guarded(_raise(BrokenPipeError()), debug=False) == 0
        os.write(closed_pipe.fileno(), b"more")  # would raise BrokenPipeError without the redirect
