"""Hostile and broken input files (issue #12): an error at file:line:col with exit 3, never a
crash, a hang or unbounded memory."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

from ktrain.errors import ExitCode, InputError
from ktrain.inputs import parse_cache as cache
from ktrain.inputs import reading, registry
from ktrain.inputs.documents import MAX_DEPTH, load_documents
from ktrain.output.errors import ECHO_WIDTH, format_error

JOB = (
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: x\n"
    "spec:\n  runtimeRef:\n    name: torch-distributed\n"
)
NOT_UTF8 = JOB.encode() + b"  trainer:\n    image: caf\xe9:1\n"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr


# --- item 4: not UTF-8 ---------------------------------------------------------------------------


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
    _no_traceback(r.stderr)


def test_non_utf8_job_file_is_an_error_at_its_position() -> None:
    with pytest.raises(InputError) as err:
        reading.decode(b"a: 1\nb: \xff\xfe\n", "job.yaml", "job file")
    assert (err.value.line, err.value.column) == (2, 4)


# --- item 10: special files, size cap -----------------------------------------------------------


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
    _no_traceback(r.stderr)


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


# --- item 6: deep nesting -----------------------------------------------------------------------


def test_deeply_nested_job_file_is_refused_fast(cli, tmp_path: Path) -> None:
    for depth in (400, 10_000):
        job = tmp_path / "deep.yaml"
        job.write_text(JOB + "  x: " + "[" * depth + "]" * depth + "\n")
        started = time.monotonic()
        r = cli("job", "validate", "-f", str(job))
        assert time.monotonic() - started < 5
        assert r.exit_code == ExitCode.INVALID, r.stderr
        assert f"{job}:8:" in r.stderr and f"nested more than {MAX_DEPTH} levels deep" in r.stderr
        _no_traceback(r.stderr)


def test_deeply_nested_block_yaml_is_refused() -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 50))
    with pytest.raises(InputError, match="nested more than") as err:
        load_documents(text, "deep.yaml")
    assert err.value.line == MAX_DEPTH + 1


def test_nesting_up_to_the_limit_is_read() -> None:
    data = load_documents("x: " + "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1), "f")[0].data
    data = data["x"]  # the document is level 1, the outer list level 2
    for _ in range(MAX_DEPTH - 2):
        data = data[0]
    assert data == [1]


def test_deep_nesting_through_aliases_is_refused() -> None:
    text = "a0: &a0 " + "[" * 60 + "]" * 60 + "\n"
    text += "".join(f"a{i}: &a{i} " + "[" * 60 + f"*a{i - 1}" + "]" * 60 + "\n" for i in range(1, 30))
    with pytest.raises(InputError, match="through aliases"):
        load_documents(text, "f")


def test_deeply_nested_set_flow_value_is_an_error(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.command=" + "[" * 400 + "]" * 400)
    assert r.exit_code == ExitCode.INVALID and "nested more than" in r.stderr
    _no_traceback(r.stderr)


def test_deeply_nested_values_file_is_an_error(cli, tmp_path: Path) -> None:
    template = tmp_path / "job.yaml.j2"
    template.write_text(JOB)
    values = tmp_path / "values.yaml"
    values.write_text("x: " + "{a: " * 400 + "1" + "}" * 400 + "\n")
    r = cli("render", "-f", str(template), "--values", str(values))
    assert r.exit_code == ExitCode.INVALID and f"{values}:1:" in r.stderr and "nested more than" in r.stderr


def test_set_path_with_too_many_parts_is_an_error(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--set", "a." * 5000 + "b=1")
    assert r.exit_code == ExitCode.INVALID and "more than 100 parts" in r.stderr
    _no_traceback(r.stderr)


# --- item 8: alias bombs ------------------------------------------------------------------------


def _billion_laughs(levels: int = 9) -> str:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels + 1):
        text += f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9) + "]\n"
    return text


def test_alias_bomb_under_an_unknown_key_is_refused_fast(cli, tmp_path: Path) -> None:
    job = tmp_path / "bomb.yaml"
    job.write_text(JOB + "  unknown:\n" + "".join("    " + line + "\n" for line in _billion_laughs().splitlines()))
    started = time.monotonic()
    r = cli("job", "validate", "-f", str(job))
    assert time.monotonic() - started < 5
    assert r.exit_code == ExitCode.INVALID and "excessive aliasing" in r.stderr and f"{job}:" in r.stderr
    _no_traceback(r.stderr)


def test_alias_repeating_a_long_text_is_refused() -> None:
    text = f'a: &b "{"x" * 200_000}"\nc: [' + ",".join(["*b"] * 100) + "]\n"
    with pytest.raises(InputError, match="aliases repeat more than 16 MiB of text"):
        load_documents(text, "f")


def test_ordinary_aliases_and_merge_keys_still_work() -> None:
    doc = load_documents("base: &b {image: x, env: [{name: A, value: '1'}]}\njob:\n  <<: *b\n  more: *b\n", "f")[0]
    assert doc.data["job"]["image"] == "x" and doc.data["job"]["more"]["env"][0]["name"] == "A"
    many = load_documents("x: [" + ",".join(["a"] * 3000) + "]", "f")[0]  # one-character scalars share an object
    assert len(many.data["x"]) == 3000


# --- item 16: long lines in error messages ------------------------------------------------------


def test_long_offending_line_is_cut_around_the_column(cli, tmp_path: Path) -> None:
    job = tmp_path / "long.yaml"
    job.write_text(JOB + '  trainer:\n    image: "' + "x" * 300_000 + '" ]\n')
    r = cli("job", "validate", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert len(r.stderr) < 2000, len(r.stderr)
    echoed, caret = [line for line in r.stderr.splitlines() if line.startswith("    ")][:2]
    assert len(echoed) <= 4 + ECHO_WIDTH + 2 and "\u2026" in echoed
    assert echoed[caret.index("^")] == "]"  # the caret is still under the character at fault


def test_echoed_line_keeps_the_caret_under_the_column() -> None:
    line = "a" * 1000 + "X" + "b" * 1000
    text = format_error(InputError("bad", file="f", line=1, column=1001, source_line=line))
    echoed, caret = text.splitlines()[1:3]
    assert echoed[caret.index("^")] == "X" and echoed.startswith("    \u2026") and echoed.endswith("\u2026")
    short = format_error(InputError("bad", file="f", line=1, column=3, source_line="ab\x1b[2Jc"))
    assert "\x1b" not in short and short.splitlines()[1:3] == ["    ab?[2Jc", "      ^"]


def test_a_hundred_long_duplicates_fill_a_screen_not_a_scrollback(cli, tmp_path: Path) -> None:
    """Found by the mutation fuzzer: 100 problems each quoting a 1,000-character value made 8 KiB of
    stderr. The list stops at a screenful and says how many were left out."""
    name = "a" * 2000
    jobs = "".join(f"      - &job{{name: {name}}}\n" if i == 0 else "      - *job\n" for i in range(101))
    runtime = tmp_path / "rt.yaml"
    runtime.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata:\n  name: rt\n"
        "spec:\n  mlPolicy:\n    numNodes: 1\n  template:\n    spec:\n      replicatedJobs:\n"
        + jobs.replace("      - ", "        - ")
    )
    result = cli("job", "render", "--runtime-file", str(runtime), "-r", "rt", "--image", "x")
    assert result.exit_code == int(ExitCode.INVALID), result.stderr
    _no_traceback(result.stderr)
    assert len(result.stderr.encode()) < 8192
    first, *rest = result.stderr.splitlines()
    assert first.startswith("error: ClusterTrainingRuntime rt is invalid (") and "problems):" in first
    listed = sum(1 for line in rest if line.startswith("  - "))
    total = int(first.split("(")[1].split()[0])
    assert 1 <= listed < total and f"  ... and {total - listed} more problems" in rest


# --- item 14: the parse cache -------------------------------------------------------------------

RUNTIME = (REPO / "runtimes" / "torch-distributed.yaml").read_text()


@pytest.fixture
def runtimes_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    directory = tmp_path / "runtimes"
    directory.mkdir()
    (directory / "rt.yaml").write_text(RUNTIME)
    return directory


def _entry(runtimes_dir: Path) -> Path:
    return Path(cache.entry_path("runtimes", str((runtimes_dir / "rt.yaml").resolve())))


def _image(runtimes_dir: Path) -> str:
    entries = registry.RuntimeRegistry(dirs=[str(runtimes_dir)], bundled=False).entries()
    return json.dumps(entries[0].document.data)


def test_edited_cache_entry_is_not_trusted(runtimes_dir: Path) -> None:
    _image(runtimes_dir)
    entry = _entry(runtimes_dir)
    text = entry.read_text()
    assert "pytorch/pytorch" in text
    entry.write_text(text.replace("pytorch/pytorch", "evil/evil"))
    assert "evil/evil" not in _image(runtimes_dir)
    assert "evil/evil" not in entry.read_text()  # re-parsed and rewritten


def test_deeply_nested_cache_entry_is_not_trusted(runtimes_dir: Path) -> None:
    _image(runtimes_dir)
    entry = _entry(runtimes_dir)
    header, _, _body = entry.read_text().partition("\n")
    entry.write_text(header + "\n" + "[" * 100_000 + "]" * 100_000)
    assert "pytorch" in _image(runtimes_dir)
    entry.write_bytes(cache._HEADER + cache.checksum(b"[" * 100_000).encode() + b"\n" + b"[" * 100_000)
    assert "pytorch" in _image(runtimes_dir)  # even with a matching checksum: never a crash


@needs_fifo
def test_fifo_or_device_at_a_cache_entry_is_not_read(runtimes_dir: Path) -> None:
    _image(runtimes_dir)
    entry = _entry(runtimes_dir)
    entry.unlink()
    os.mkfifo(entry)
    assert "pytorch" in _image(runtimes_dir)  # did not block
    entry.unlink()
    if os.path.exists("/dev/zero"):
        entry.symlink_to("/dev/zero")
        assert "pytorch" in _image(runtimes_dir)  # O_NOFOLLOW: not followed


def test_cache_entry_through_a_symlink_is_not_followed(runtimes_dir: Path, tmp_path: Path) -> None:
    _image(runtimes_dir)
    entry = _entry(runtimes_dir)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(entry.read_bytes().replace(b"pytorch/pytorch", b"evil/evil"))
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert "evil/evil" not in _image(runtimes_dir)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_cache_directory_writable_by_others_is_not_used(runtimes_dir: Path) -> None:
    _image(runtimes_dir)
    entry = _entry(runtimes_dir)
    assert entry.parent.stat().st_mode & 0o777 == 0o700
    entry.parent.chmod(0o777)
    assert cache.read_json(str(entry), verified=True) is None  # in doubt: parse again
    assert "pytorch" in _image(runtimes_dir)
    entry.parent.chmod(0o700)
    assert cache.read_json(str(entry), verified=True) is not None


# --- values YAML cannot make (found while fuzzing) ----------------------------------------------


@pytest.mark.parametrize(
    "value, message",
    [
        ("!!int abc", "cannot read this value"),
        ("!!bool maybe", "cannot read this value"),
        ("1" * 5000, "cannot read this value"),
        ("0x" + "f" * 5000, "integer out of range"),
        (":".join(["59"] * 3000), "integer out of range"),
    ],
)
def test_unconstructable_yaml_value_is_an_error_at_its_position(value: str, message: str) -> None:
    with pytest.raises(InputError, match="invalid YAML: " + message) as err:
        load_documents(f"kind: TrainJob\nx: {value}\n", "job.yaml")
    assert (err.value.line, err.value.column) == (2, 4)


def test_a_timestamp_is_the_text_written_as_kubectl_reads_it() -> None:
    """go-yaml v2 (kubectl's YAML-to-JSON step) decodes a timestamp into an untyped value as its
    text: `2024-13-45` is no error, `2001-12-14 21:59:43.10 -5` is not respelled (issue #37)."""
    text = "a: 2024-13-45\nb: 2001-12-14 21:59:43.10 -5\nc: 2002-12-14\n"
    assert load_documents(text, "f")[0].data == {"a": "2024-13-45", "b": "2001-12-14 21:59:43.10 -5", "c": "2002-12-14"}


def test_sets_binary_and_unknown_tags_read_as_plain_data() -> None:
    data = load_documents("a: !!set {x, z}\nb: !!binary aGk=\nc: !foo 1\nd: !!python/name:os.system\n", "f")[0].data
    assert data == {"a": {"x": None, "z": None}, "b": "aGk=", "c": "1", "d": ""}


def test_set_integer_longer_than_64_bits_is_an_error(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.numNodes=" + "9" * 5000)
    assert r.exit_code == ExitCode.INVALID and "must be an integer of at most 64 bits" in r.stderr
    _no_traceback(r.stderr)


def test_a_line_longer_than_512_kib_is_refused_at_its_line_before_parsing(tmp_path: Path) -> None:
    """The YAML scanner reads a plain scalar a character per call: a 1 MB line took 26 s under
    `python -m ktrain` on CPython 3.11. Such a line is an error at its line number instead."""
    from ktrain.inputs.documents import MAX_LINE_CHARS

    text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: " + "a" * 1_000_000 + "\n"
    started = time.monotonic()
    with pytest.raises(InputError, match=r"line 4 is 1,000,008 characters long") as info:
        load_documents(text, "job.yaml")
    assert time.monotonic() - started < 1.0
    assert (info.value.file, info.value.line) == ("job.yaml", 4)
    fits = "a: " + "b" * (MAX_LINE_CHARS - 3) + "\n"
    assert load_documents(fits, "ok.yaml")[0].data == {"a": "b" * (MAX_LINE_CHARS - 3)}
