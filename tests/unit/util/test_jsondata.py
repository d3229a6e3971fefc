"""`ktrain.util.jsondata` stands in for `json.loads`, `json.dumps` and `copy.deepcopy` on the
render and completion paths: it must give exactly what they give."""

from __future__ import annotations

import copy
import datetime
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.util import jsondata

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN included (NaN != NaN), and of the same types all the way down."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=300)
@given(DATA, st.booleans())
def test_dumps_is_json_dumps(value: Any, sort_keys: bool) -> None:
    assert jsondata.dumps(value, sort_keys=sort_keys) == json.dumps(value, sort_keys=sort_keys)


@settings(max_examples=100)
@given(st.dictionaries(KEYS, SCALARS, max_size=5))
def test_dumps_converts_keys_as_json_dumps_does(value: dict[Any, Any]) -> None:
    assert jsondata.dumps(value) == json.dumps(value)


def test_dumps_refuses_what_json_dumps_refuses() -> None:
    for bad in ({"when": datetime.date(2020, 1, 1)}, {(1, 2): 3}, {1: 1, "a": 2}):
        with pytest.raises(TypeError):
            json.dumps(bad, sort_keys=True)
        with pytest.raises(TypeError):
            jsondata.dumps(bad, sort_keys=True)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        jsondata.dumps(loop)


@settings(max_examples=300)
@given(DATA, st.sampled_from(["", " ", "\n", " \t\r\n "]))
def test_loads_is_json_loads(value: Any, padding: str) -> None:
    text = padding + json.dumps(value, indent=1 if padding else None) + padding
    assert _same(jsondata.loads(text), json.loads(text))


@pytest.mark.parametrize(
    "text", ["", "  ", "[1] x", "{", '{"a" 1}', "nan", "[1,]", '"\x01"', "\ufeff[]", "01", "[1] [2]", "tru"]
)
def test_loads_refuses_what_json_loads_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsondata.loads(text)


def test_loads_reads_json_constants_and_duplicate_keys_as_json_loads_does() -> None:
    text = '{"a": NaN, "b": [Infinity, -Infinity], "a": 1e400, "c": 12345678901234567890}'
    assert _same(jsondata.loads(text), json.loads(text))


@settings(max_examples=300)
@given(st.text())
def test_quote_is_json_dumps_without_ascii_escapes(text: str) -> None:
    assert jsondata.quote(text) == json.dumps(text, ensure_ascii=False)


@settings(max_examples=200)
@given(DATA)
def test_deep_copy_is_deepcopy(value: Any) -> None:
    copied = jsondata.deep_copy(value)
    assert _same(copied, copy.deepcopy(value))
    if isinstance(value, (dict, list)):
        assert copied is not value


def test_deep_copy_keeps_shared_objects_shared_and_copies_the_rest() -> None:
    inner = {"image": "x", "env": [{"name": "A"}]}
    data = {"one": inner, "two": inner, "when": [datetime.date(2024, 1, 2)]}
    for copied in (jsondata.deep_copy(data), jsondata.deep_copy({"one": inner, "two": inner})):
        assert copied["one"] is copied["two"]
        assert copied["one"] == inner and copied["one"] is not inner
        assert copied["one"]["env"][0] is not inner["env"][0]
    assert jsondata.deep_copy(data)["when"] == [datetime.date(2024, 1, 2)]  # not plain data: deepcopy


def test_deep_copy_of_a_subclass_is_deepcopy() -> None:
    class Tagged(dict):  # type: ignore[type-arg]
        pass

    copied = jsondata.deep_copy({"a": Tagged(b=[1])})
    assert type(copied["a"]) is Tagged and copied["a"] == {"b": [1]}
