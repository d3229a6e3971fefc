"""`ktrain-krm` passes the resources it does not render through as they were written (issue #37,
item 9a): every scalar means what it meant to kubectl (a YAML 1.1 reader) and, written on one line,
is spelled as it was (`1e3`, `0x10`, `1_000`, `012`, `on`, `~`, timestamps, quoted strings), in a
ResourceList on stdin (kpt, kustomize's KRM functions), in kustomize's exec-plugin stream, and in
JSON. Block scalars keep their meaning (a string), not their layout.

Bounded for CI (a fixed number of small examples, no example database); `KTRAIN_FUZZ_SCALE=20`
searches longer.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
import yaml  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ktrain.cli.krm import run_krm, run_plugin  # noqa: E402
from ktrain.errors import KtrainError  # noqa: E402
from ktrain.output.yamltext import quote  # noqa: E402

SCALE = float(os.environ.get("KTRAIN_FUZZ_SCALE", "1"))
BOUNDED = settings(
    max_examples=max(1, int(30 * SCALE)),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


class KubectlLoader(yaml.SafeLoader):
    """YAML 1.1 as kubectl reads it into JSON: go-yaml v2 decodes a timestamp into an untyped
    value as its text (sigs.k8s.io/yaml), where PyYAML would build a datetime."""


KubectlLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def kubectl_reads(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=KubectlLoader))  # noqa: S506 - a SafeLoader


# Plain scalars of every YAML 1.1 / 1.2 type, as people write them.
SPELLINGS = [
    # floats
    "1e3", "1E3", "-1.5e-3", "6.8523015e+5", "685.230_15e+03", ".5", "+.5", "1.", "1.0", "1_000.5",
    ".inf", "-.Inf", ".NaN", "190:20:30.15",
    # integers
    "0x10", "0xFF", "0o17", "012", "0777", "08", "0b101", "1_000", "+1", "-0", "190:20:30", "0", "685230",
    # booleans and nulls
    "y", "Y", "yes", "Yes", "no", "NO", "n", "on", "Off", "true", "False", "~", "null", "Null",
    # timestamps (one with no such day: kubectl keeps the text)
    "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14", "2020-02-30",
    # strings
    "hello", "a b", "torch-distributed", "x:y", "a#b", "-x",
]  # fmt: skip
numbers = st.from_regex(r"\A[-+]?(0|[1-9][0-9_]{0,6})(\.[0-9_]{0,4})?([eE][-+]?[0-9]{1,2})?\Z")
prefixed = st.from_regex(r"\A[-+]?0(x[0-9a-fA-F_]{1,6}|o[0-7_]{1,6}|b[01_]{1,6}|[0-7_]{1,6})\Z")
words = st.from_regex(r"\A[A-Za-z][A-Za-z0-9._/-]{0,10}\Z")
plain = st.one_of(st.sampled_from(SPELLINGS), numbers, prefixed, words)
# quoted as a careful writer quotes (single or double), or as the user chose
quoted = st.one_of(
    st.text(max_size=10).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=10).map(
        lambda s: "'" + s.replace("'", "''") + "'"
    ),
    st.sampled_from(SPELLINGS).map(lambda s: f"'{s}'"),
    st.text(max_size=10).map(quote),
)
tokens = st.one_of(plain, quoted)
blocks = st.tuples(
    st.sampled_from(["|", "|-", "|+", ">", ">-"]),
    st.lists(st.sampled_from([*SPELLINGS, "", "  indented"]), min_size=1, max_size=3),
)


@st.composite
def resource(draw: Any, flow: bool) -> str:
    """A resource of another kind, as YAML text at the indentation of a list item's contents."""
    lines = ["apiVersion: example.com/v1", "kind: Thing", "metadata:", "  name: thing", "spec:"]
    keys = draw(st.lists(tokens, min_size=1, max_size=6, unique=True))
    for i, key in enumerate(keys):
        shape = draw(st.sampled_from(["scalar", "list", "map", "block"]))
        if shape == "scalar":
            lines.append(f"  {key}: {draw(tokens)}")
        elif shape == "list":
            items = draw(st.lists(tokens, min_size=1, max_size=4))
            if flow:
                lines.append(f"  {key}: [{', '.join(items)}]")
            else:
                lines += [f"  {key}:", *(f"  - {t}" for t in items)]
        elif shape == "map":
            inner = draw(st.lists(st.tuples(tokens, tokens), min_size=1, max_size=3, unique_by=lambda kv: kv[0]))
            if flow:
                lines.append(f"  {key}: {{{', '.join(f'{k}: {v}' for k, v in inner)}}}")
            else:
                lines += [f"  {key}:", *(f"    {k}: {v}" for k, v in inner)]
        else:
            head, body = draw(blocks)
            lines += [f"  {key}: {head}", *(f"    {b}" if b else "" for b in body)]
        if i == 0 and draw(st.booleans()):
            lines.append("  # a comment")
    return "\n".join(lines) + "\n"


TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 2}
"""


def things(docs: list[Any]) -> list[Any]:
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "Thing"]


def normal(value: Any) -> Any:
    """`value` with NaN made comparable."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {normal(k): normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


def scalar_texts(text: str) -> dict[tuple[str, ...], tuple[str, str | None]]:
    """The text and style of every key and value scalar of the Thing in `text`, by its path of
    keys and indexes as written."""
    out: dict[tuple[str, ...], tuple[str, str | None]] = {}

    def collect(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                collect(key, (*path, "key", key.value))
                collect(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                collect(item, (*path, str(i)))
        else:
            out[path] = (node.start_mark.buffer[node.start_mark.pointer : node.end_mark.pointer], node.style)

    stack = list(yaml.compose_all(text, Loader=KubectlLoader))  # noqa: S506 - a SafeLoader
    while stack:
        node = stack.pop(0)
        if isinstance(node, yaml.MappingNode):
            if any(k.value == "kind" and v.value == "Thing" for k, v in node.value):
                collect(node, ())
            else:
                stack += [v for _, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return out


def check_passed_through(source: str, output: str, documents_in: list[Any], documents_out: list[Any]) -> None:
    before, after = things(documents_in), things(documents_out)
    assert len(after) == len(before) == 1, output
    assert normal(after[0]) == normal(before[0]), output  # the same meaning to kubectl
    written, emitted = scalar_texts(source), scalar_texts(output)
    assert set(written) == set(emitted), output
    for path, (text, style) in written.items():
        if style not in ("|", ">"):  # a block scalar is written from its value (the same string)
            assert emitted[path][0] == text, (path, output)  # spelled as written


def indented(text: str, first: str, rest: str) -> str:
    lines = text.rstrip("\n").split("\n")
    return "\n".join([first + lines[0], *((rest + line) if line else "" for line in lines[1:])]) + "\n"


def ktrain_reads(run: Any) -> tuple[str, int]:
    try:
        return run()  # type: ignore[no-any-return]
    except KtrainError as exc:  # two keys meaning the same to ktrain's YAML 1.2 reader (`on`, `'on'`)
        assume("duplicate key" not in exc.message)
        raise


@BOUNDED
@given(thing=st.booleans().flatmap(resource), with_job=st.booleans())
def test_a_resource_list_passes_other_resources_through_meaning_and_spelled_as_written(
    thing: str, with_job: bool
) -> None:
    items = [thing, TRAINJOB] if with_job else [thing]
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
    text += "".join(indented(item, "- ", "  ") for item in items)
    try:
        documents_in = kubectl_reads(text)
    except (yaml.YAMLError, ValueError):  # PyYAML fails on `0x_`
        assume(False)  # not YAML 1.1 (kubectl would refuse the file itself)
    output, code = ktrain_reads(lambda: run_krm(text))
    assert code == 0, output
    (rl,) = kubectl_reads(output)
    check_passed_through(text, output, documents_in[0]["items"], rl["items"])


@BOUNDED
@given(thing=st.booleans().flatmap(resource), with_job=st.booleans())
def test_the_exec_plugin_stream_passes_other_resources_through_meaning_and_spelled_as_written(
    thing: str, with_job: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    config = tmp_path_factory.mktemp("krm") / "config.yaml"
    config.write_text("apiVersion: ktrain.io/v1alpha1\nkind: KtrainRender\nmetadata: {name: r}\n")
    text = "---\n".join([thing, TRAINJOB] if with_job else [thing])
    try:
        documents_in = kubectl_reads(text)
    except (yaml.YAMLError, ValueError):  # PyYAML fails on `0x_`
        assume(False)
    output, code = ktrain_reads(lambda: run_plugin(str(config), text))
    assert code == 0, output
    check_passed_through(text, output, documents_in, kubectl_reads(output))


YAML_TEXT = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x85\u2028\u2029\ufeff\ufffe\uffff")
json_numbers = st.from_regex(r"\A-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,6})?([eE][-+]?[0-9]{1,3})?\Z")
json_values = st.recursive(
    st.one_of(json_numbers, st.sampled_from(["true", "false", "null", '"s"', '"1e3"'])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.text(YAML_TEXT, max_size=5), inner), max_size=3, unique_by=lambda kv: kv[0]).map(
            lambda kvs: "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {v}" for k, v in kvs) + "}"
        ),
    ),
    max_leaves=10,
)


@BOUNDED
@given(value=json_values)
def test_json_in_keeps_every_number_as_written(value: str) -> None:
    thing = f'{{"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {{"name": "t"}}, "spec": {value}}}'
    text = f'{{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{thing}]}}'
    output, code = run_krm(text)
    assert code == 0, output

    def exactly(t: str) -> Any:
        return json.loads(t, parse_float=lambda s: ("float", s), parse_int=lambda s: ("int", s))

    assert things(exactly(output)["items"]) == things(exactly(text)["items"])
    assert normal(things(kubectl_reads(output)[0]["items"])) == normal(things(kubectl_reads(text)[0]["items"]))


def test_ktrain_krm_keeps_1e3_0x10_and_1_000_as_written(tmp_path: Path) -> None:
    """The issue's sample: these came out `1000.0`, `16` and `1000`; `012` (10 to kubectl) came out
    `12`, a timestamp came out as Python's isoformat, and `2020-02-30` failed the run."""
    spec = "a: 1e3\nb: 0x10\nc: 1_000\nd: 012\ne: on\nf: 2001-12-14 21:59:43.10 -5\ng: 2020-02-30\nh: ~\n"
    thing = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + indented(spec, "  ", "  ")
    output, code = run_krm(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indented(thing, "- ", "  ")
    )
    assert code == 0
    assert indented(spec, "    ", "    ") in output
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: ktrain.io/v1alpha1\nkind: KtrainRender\nmetadata: {name: r}\n")
    output, code = run_plugin(str(config), thing)
    assert code == 0
    assert indented(spec, "  ", "  ") in output


def test_an_edited_value_is_written_from_its_data_and_the_rest_as_written() -> None:
    """kpt's index annotation is renumbered in a file that held a TrainJob: the new index is
    written (quoted, a string), the other scalars of the same resource as written."""
    text = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: trainer.kubeflow.org/v1alpha1
  kind: TrainJob
  metadata:
    name: job
    annotations: {config.kubernetes.io/path: a.yaml, config.kubernetes.io/index: '0'}
  spec: {runtimeRef: {name: torch-distributed}}
- apiVersion: example.com/v1
  kind: Thing
  metadata:
    name: thing
    annotations: {config.kubernetes.io/path: a.yaml, config.kubernetes.io/index: '5', size: 0x10}
"""
    output, code = run_krm(text)
    assert code == 0
    (rl,) = kubectl_reads(output)
    (thing,) = things(rl["items"])
    assert thing["metadata"]["annotations"]["config.kubernetes.io/index"] == "1"  # after the JobSet
    assert "config.kubernetes.io/index: '1'" in output and "'5'" not in output
    assert "size: 0x10" in output
