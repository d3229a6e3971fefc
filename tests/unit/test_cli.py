"""ktrain.cli (the package): `main(argv)`, the typer app run under the error wrapper, returning the
exit code scripts see, and `app`, imported lazily so that `import ktrain.cli` stays typer-free."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ktrain.cli
from ktrain import __version__
from ktrain.cli import main
from ktrain.cli.commands import job_render
from ktrain.errors import ExitCode, UsageError

REPO = Path(__file__).resolve().parents[2]


def test_importing_the_package_does_not_import_typer() -> None:
    code = "import sys, ktrain.cli; print('typer' in sys.modules, 'ktrain.cli.typer_app' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "False"]


def test_app_is_the_typer_app_and_other_names_are_missing() -> None:
    from ktrain.cli.typer_app import app

    assert ktrain.cli.app is app
    with pytest.raises(AttributeError, match=r"module 'ktrain\.cli' has no attribute 'nope'"):
        ktrain.cli.nope  # noqa: B018


def test_version_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ktrain {__version__}\n"


def test_a_usage_error_exits_2_with_the_message_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["job", "render", "--no-such-flag"]) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert "No such option: --no-such-flag" in captured.err
    assert captured.out == ""


def test_a_group_alone_exits_2_with_its_help_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["job"]) == 2
    assert capsys.readouterr().out.startswith("Usage: ktrain job ")


def _raising(exc: BaseException) -> Any:
    def body(**_: Any) -> None:
        raise exc

    return body


def test_a_ktrain_error_is_a_message_and_its_code_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(job_render, "render_job", _raising(UsageError("bad thing", hint="do this")))
    assert main(["job", "render"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "bad thing" in err and "do this" in err
    assert "Traceback" not in err


def test_debug_adds_the_traceback_and_keeps_the_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(job_render, "render_job", _raising(UsageError("bad thing")))
    assert main(["--debug", "job", "render"]) == ExitCode.USAGE
    assert "Traceback" in capsys.readouterr().err


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(job_render, "render_job", _raising(KeyboardInterrupt()))
    assert main(["job", "render"]) == ExitCode.INTERRUPTED
    assert "Traceback" not in capsys.readouterr().err


def test_argv_defaults_to_the_processs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["ktrain", "--version"])
    assert main() == 0
    assert capsys.readouterr().out == f"ktrain {__version__}\n"
