"""Property tests (Hypothesis) over what ktrain reads: the YAML reader, `--set` paths, values
files and template variables. For any input the outcome is a parsed result or a KtrainError,
never another exception, and it comes quickly (issue #12).

Bounded for CI: small inputs, a fixed number of examples per property, no example database.
`KTRAIN_FUZZ_SCALE=20` runs twenty times as many examples (a longer search, by hand).
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Callable
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ktrain.authoring.set_paths import apply_assignment, nest, parse_assignment, template_value  # noqa: E402
from ktrain.authoring.templating import load_values, render_template  # noqa: E402
from ktrain.errors import KtrainError  # noqa: E402
from ktrain.inputs.documents import load_documents  # noqa: E402
from ktrain.inputs.reading import decode  # noqa: E402

SECONDS = 5.0  # per example: real inputs take milliseconds; this only catches a hang or a blow-up

SCALE = float(os.environ.get("KTRAIN_FUZZ_SCALE", "1"))


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


BOUNDED = settings(
    max_examples=examples(150),
    deadline=None,  # timed below instead, generously (CI machines are shared)
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def outcome(call: Callable[[], Any]) -> Any:
    """The result of `call`, or its KtrainError; any other exception fails the property."""
    started = time.monotonic()
    try:
        return call()
    except KtrainError as exc:
        assert exc.message, "a KtrainError says what is wrong"
        return exc
    finally:
        assert time.monotonic() - started < SECONDS, "took too long"


# Text that looks like YAML: the tokens that change how it is read, indentation, odd unicode.
YAML_TOKENS = [
    *"[]{}:-,?#&*!|>'\"%@`\\",
    "\n",
    "  ",
    "\t",
    "- ",
    ": ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "<<: ",
    "!!str ",
    "!!binary ",
    "!!python/object ",
    "--- ",
    "...",
    "key",
    "kind: TrainJob",
    "0777",
    "on",
    "1e3",
    "~",
    "null",
    "2024-01-01",
    "\ufeff",
    "\u2028",
    "\x85",
    "\x00",
    "\x1b[31m",
    "\U0001f600",
    "\u202e",
    "\ud800",
    # values a YAML constructor cannot make, and tags
    "2024-13-45",
    "2001-12-14 21:59:43.10 -5",
    "59:59:59",
    "0x" + "f" * 40,
    "1" * 5000,
    "0b1",
    "0o7",
    ".nan",
    ".inf",
    "!!int ",
    "!!float ",
    "!!bool ",
    "!!null ",
    "!!timestamp ",
    "!!omap ",
    "!!pairs ",
    "!!set ",
    "!!seq ",
    "!!map ",
    "!!merge ",
    "!foo ",
    "!<tag:yaml.org,2002:int> ",
    "%YAML 1.1\n",
    "%TAG ! tag:x,\n",
    "? ",
]
yamlish = st.lists(st.sampled_from(YAML_TOKENS) | st.text(max_size=4), max_size=60).map("".join)
any_text = st.text(max_size=200)

# Nested structures, written as flow YAML (JSON is flow YAML) and as block YAML.
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
structures = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


def _block(value: Any, indent: int = 0) -> str:
    pad = " " * indent
    if isinstance(value, dict) and value:
        return "".join(f"{pad}{k!r}:\n{_block(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list) and value:
        return "".join(f"{pad}-\n{_block(v, indent + 2)}" for v in value)
    import json

    return f"{pad}{json.dumps(value)}\n"


@settings(BOUNDED, max_examples=examples(100))
@given(st.one_of(any_text, yamlish))
def test_yaml_reader_returns_documents_or_an_input_error(text: str) -> None:
    result = outcome(lambda: load_documents(text, "fuzz.yaml"))
    if not isinstance(result, KtrainError):
        assert all(doc.file == "fuzz.yaml" for doc in result)


@BOUNDED
@given(structures)
def test_yaml_reader_reads_back_nested_structures(value: Any) -> None:
    import json

    for text in (json.dumps(value), _block(value)):
        outcome(lambda text=text: load_documents(text, "fuzz.yaml"))


@BOUNDED
@given(st.binary(max_size=200) | st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_decode_to_text_or_an_error_at_a_position(data: bytes) -> None:
    result = outcome(lambda: decode(data, "fuzz.yaml"))
    if isinstance(result, KtrainError):
        assert result.line is not None and result.column is not None and result.line >= 1
    else:
        outcome(lambda: load_documents(result, "fuzz.yaml"))


@settings(BOUNDED, max_examples=examples(40))
@given(st.integers(1, 500), st.sampled_from(["[", "{a: ", "- ", "k:\n  "]))
def test_any_nesting_depth_is_read_or_refused_quickly(depth: int, opener: str) -> None:
    closer = {"[": "]", "{a: ": "}"}.get(opener, "")
    if opener == "k:\n  ":
        text = "".join(" " * i + "k:\n" for i in range(depth))
    else:
        text = "x: " + opener * depth + "1" + closer * depth
    outcome(lambda: load_documents(text, "fuzz.yaml"))


@settings(BOUNDED, max_examples=examples(30))
@given(st.integers(1, 10), st.integers(1, 10))
def test_any_alias_fan_out_is_read_or_refused_quickly(levels: int, fan: int) -> None:
    text = "a0: &a0 [x, y]\n" + "".join(
        f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fan) + "]\n" for i in range(1, levels + 1)
    )
    outcome(lambda: load_documents(text, "fuzz.yaml"))


# --- --set paths --------------------------------------------------------------------------------

SET_TOKENS = [
    *".=[]\"'\\",
    "trainer",
    "numNodes",
    "env",
    "name=X",
    "0",
    "1",
    "9" * 30,
    "spec",
    "command",
    "metadata",
    "labels",
    "suspend",
    "true",
    "runtimeRef",
    "resourcesPerNode",
]
set_text = st.lists(st.sampled_from(SET_TOKENS) | st.text(max_size=3), max_size=30).map("".join)
set_values = st.one_of(yamlish, any_text, structures.map(__import__("json").dumps))


def _job() -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "x"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"env": [{"name": "A", "value": "1"}]}},
    }


@BOUNDED
@given(st.one_of(set_text, any_text), set_values)
def test_set_paths_parse_and_apply_or_raise_an_input_error(path: str, value: str) -> None:
    text = path if "=" in path and path.index("=") < len(path) - 1 and path[-1] != "=" else f"{path}={value}"
    assignment = outcome(lambda: parse_assignment(text))
    if isinstance(assignment, KtrainError):
        return
    job = _job()
    outcome(lambda: apply_assignment(job, assignment))
    values: dict[str, Any] = {}
    outcome(lambda: nest(values, *template_value(assignment)))


# --- values files and template variables --------------------------------------------------------


@BOUNDED
@given(st.one_of(yamlish, any_text, structures.map(_block)))
def test_values_files_load_or_raise_an_input_error(text: str) -> None:
    result = outcome(lambda: load_values([("values.yaml", text)]))
    if not isinstance(result, KtrainError):
        assert isinstance(result, dict)


TEMPLATE_TOKENS = [
    "{{ ",
    " }}",
    "{% ",
    " %}",
    "{# ",
    " #}",
    "x",
    "n",
    "lr",
    "(",
    ")",
    "[",
    "]",
    "|",
    "length",
    "default",
    "upper",
    "join",
    "int",
    "1",
    "0",
    "'a'",
    " * ",
    " + ",
    " / ",
    " ~ ",
    " % ",
    " ** ",
    ".",
    "__class__",
    "if ",
    "for i in range(3)",
    "endfor",
    "endif",
    "set ",
    " = ",
    "macro f()",
    "endmacro",
    "f()",
    "\n",
    "kind: TrainJob\n",
]
templates = st.lists(st.sampled_from(TEMPLATE_TOKENS), max_size=30).map("".join)


@settings(BOUNDED, max_examples=examples(100))
@given(templates, st.dictionaries(st.sampled_from(["x", "n", "lr"]), structures, max_size=3))
def test_templates_render_or_raise_an_input_error(text: str, values: dict[str, Any]) -> None:
    result = outcome(lambda: render_template(text, "job.yaml.j2", values))
    if isinstance(result, str):
        outcome(lambda: load_documents(result, "job.yaml.j2"))


@settings(BOUNDED, max_examples=examples(15))
@given(st.binary(max_size=300) | yamlish.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_job_validate_on_any_file_exits_cleanly(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    from ktrain.cli import main

    path = tmp_path_factory.mktemp("fuzz") / "job.yaml"
    path.write_bytes(data)
    err = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["job", "validate", "-f", str(path)])
    assert time.monotonic() - started < SECONDS
    assert code in (0, 2, 3, 4), (code, err.getvalue())
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue()
