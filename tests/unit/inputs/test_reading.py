"""Reading an input file (ktrain/inputs/reading.py): not UTF-8, special files, the size cap. Each is an
error at file:line:col with exit 3, never a crash, a hang or unbounded memory (issue #12)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hostile_input import JOB, NOT_UTF8, needs_fifo, no_traceback

from ktrain.errors import ExitCode, InputError
from ktrain.inputs import reading

# --- not UTF-8 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["-f", "--runtime-file", "--patch", "--values"])
def test_non_utf8_input_file_is_an_error_at_its_position(cli, tmp_path: Path, flag: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(NOT_UTF8)
    template = tmp_path / "job.yaml.j2"
    template.write_text(JOB)
    args = {
        "-f": ["job", "validate", "-f", str(bad)],
        "--runtime-file": ["render", "--runtime-file", str(bad), "--runtime", "x"],
        "--patch": ["render", "--runtime", "torch-distributed", "--patch", str(bad)],
        "--values": ["render", "-f", str(template), "--values", str(bad)],
    }[flag]
    r = cli(*args)
    assert r.exit_code == ExitCode.INVALID, r.stderr
    assert f"error: {bad}:9:15:" in r.stderr and "is not UTF-8 text: byte 0xe9" in r.stderr
    assert "    image: caf\ufffd:1\n" + " " * 18 + "^" in r.stderr  # the caret under the bad byte
    no_traceback(r.stderr)


def test_non_utf8_job_file_is_an_error_at_its_position() -> None:
    with pytest.raises(InputError) as err:
        reading.decode(b"a: 1\nb: \xff\xfe\n", "job.yaml", "job file")
    assert (err.value.line, err.value.column) == (2, 4)


# --- special files, size cap ---------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("flag", ["-f", "--patch", "--runtime-file", "--values"])
def test_dev_zero_input_is_refused_before_reading(cli, tmp_path: Path, flag: str) -> None:
    template = tmp_path / "job.yaml.j2"
    template.write_text(JOB)
    extra = ["-f", str(template)] if flag == "--values" else ["--runtime", "torch-distributed"]
    started = time.monotonic()
    r = cli("render", *([] if flag == "-f" else extra), flag, "/dev/zero")
    assert r.exit_code == ExitCode.INVALID, r.stderr
    assert "/dev/zero: cannot read" in r.stderr and "character device, not a regular file" in r.stderr
    assert time.monotonic() - started < 5
    no_traceback(r.stderr)


@needs_fifo
def test_fifo_input_is_refused_without_waiting_for_a_writer(cli, tmp_path: Path) -> None:
    fifo = tmp_path / "job.fifo"
    os.mkfifo(fifo)
    r = cli("job", "validate", "-f", str(fifo))
    assert r.exit_code == ExitCode.INVALID and "FIFO (named pipe), not a regular file" in r.stderr
    assert "pass `-`" in r.stderr  # how to read a pipe instead


def test_directory_and_missing_inputs_are_errors(cli, tmp_path: Path) -> None:
    r = cli("render", "-f", str(tmp_path))
    assert r.exit_code == ExitCode.INVALID and "a directory, not a regular file" in r.stderr
    r = cli("render", "-f", str(tmp_path / "nope.yaml"))
    assert r.exit_code == ExitCode.INVALID and "No such file or directory" in r.stderr


def test_input_larger_than_the_size_cap_is_refused(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(reading, "MAX_INPUT_BYTES", 1000)
    big = tmp_path / "big.yaml"
    big.write_text(JOB + "#" * 2000 + "\n")
    r = cli("render", "-f", str(big))
    assert r.exit_code == ExitCode.INVALID and "larger than 1000 bytes" in r.stderr


def test_input_over_the_size_cap_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:  # sparse: 17 MiB of nothing
        fh.truncate(reading.MAX_INPUT_BYTES + 1024 * 1024)
    with pytest.raises(InputError, match="larger than 16 MiB"):
        reading.read_input(str(big), what="job file")


def test_stdin_over_the_size_cap_is_refused(cli, monkeypatch) -> None:
    monkeypatch.setattr(reading, "MAX_INPUT_BYTES", 100)
    r = cli("render", "-f", "-", stdin=JOB + "#" * 200)
    assert r.exit_code == ExitCode.INVALID and "<stdin>: job file is larger than 100 bytes" in r.stderr


def test_a_symlink_to_a_regular_file_is_read(cli, tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(JOB)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    assert cli("render", "-f", str(link), "-o", "name").exit_code == 0
