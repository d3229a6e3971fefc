"""The YAML documents ktrain reads (ktrain/inputs/documents.py): deep nesting, alias bombs, values YAML
cannot make, long lines. Each is an error at file:line:col with exit 3, never a crash, a hang or
unbounded memory (issue #12)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hostile_input import JOB, no_traceback

from ktrain.errors import ExitCode, InputError
from ktrain.inputs.documents import MAX_DEPTH, load_documents

# --- deep nesting --------------------------------------------------------------------------------


def test_deeply_nested_job_file_is_refused_fast(cli, tmp_path: Path) -> None:
    for depth in (400, 10_000):
        job = tmp_path / "deep.yaml"
        job.write_text(JOB + "  x: " + "[" * depth + "]" * depth + "\n")
        started = time.monotonic()
        r = cli("job", "validate", "-f", str(job))
        assert time.monotonic() - started < 5
        assert r.exit_code == ExitCode.INVALID, r.stderr
        assert f"{job}:8:" in r.stderr and f"nested more than {MAX_DEPTH} levels deep" in r.stderr
        no_traceback(r.stderr)


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
    no_traceback(r.stderr)


def test_deeply_nested_values_file_is_an_error(cli, tmp_path: Path) -> None:
    template = tmp_path / "job.yaml.j2"
    template.write_text(JOB)
    values = tmp_path / "values.yaml"
    values.write_text("x: " + "{a: " * 400 + "1" + "}" * 400 + "\n")
    r = cli("render", "-f", str(template), "--values", str(values))
    assert r.exit_code == ExitCode.INVALID and f"{values}:1:" in r.stderr and "nested more than" in r.stderr


# --- alias bombs ---------------------------------------------------------------------------------


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
    no_traceback(r.stderr)


def test_alias_repeating_a_long_text_is_refused() -> None:
    text = f'a: &b "{"x" * 200_000}"\nc: [' + ",".join(["*b"] * 100) + "]\n"
    with pytest.raises(InputError, match="aliases repeat more than 16 MiB of text"):
        load_documents(text, "f")


def test_ordinary_aliases_and_merge_keys_still_work() -> None:
    doc = load_documents("base: &b {image: x, env: [{name: A, value: '1'}]}\njob:\n  <<: *b\n  more: *b\n", "f")[0]
    assert doc.data["job"]["image"] == "x" and doc.data["job"]["more"]["env"][0]["name"] == "A"
    many = load_documents("x: [" + ",".join(["a"] * 3000) + "]", "f")[0]  # one-character scalars share an object
    assert len(many.data["x"]) == 3000


# --- values YAML cannot make (found while fuzzing) -----------------------------------------------


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
