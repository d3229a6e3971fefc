"""Scalars as their file spells them (ktrain.inputs.spelling): the text kept for YAML and JSON
scalars, and dropped as soon as the value is changed or the container is a new one. The property
tests stay in tests/fuzz (test_krm_spelling_properties.py)."""

from __future__ import annotations

import json

from ktrain.inputs.documents import load_documents
from ktrain.inputs.spelling import Spelling, json_text
from ktrain.output.yamltext import dump


def _yaml(text: str, version: tuple[int, int] = (1, 2)) -> tuple[Spelling, list[object]]:
    data = [d.data for d in load_documents(text, "f.yaml", version=version) if d.data is not None]
    spelling = Spelling()
    spelling.add_yaml(text, data, version)
    return spelling, data


def test_yaml_scalars_keep_their_text() -> None:
    spelling, [doc] = _yaml("a: 1e3\nb: 0x10\nc: '012'\nd: \"x\"\ne: [1.50, on]\n")
    assert isinstance(doc, dict)
    assert doc["a"] == 1000.0
    assert spelling.value(doc, "a", doc["a"]) == "1e3"
    assert spelling.value(doc, "b", doc["b"]) == "0x10"
    assert spelling.value(doc, "c", doc["c"]) == "'012'"
    assert spelling.value(doc, "d", doc["d"]) == '"x"'
    assert spelling.value(doc["e"], 0, doc["e"][0]) == "1.50"
    assert spelling.value(doc["e"], 1, doc["e"][1]) == "on"
    assert bool(spelling)


def test_the_yaml_writer_passes_kept_text_through() -> None:
    spelling, [doc] = _yaml("a: 1e3\nb: 012\n")
    assert dump(doc, spell=spelling) == "a: 1e3\nb: 012\n"
    assert dump(doc) != "a: 1e3\nb: 012\n"  # without it the data is written from its values


def test_a_changed_value_or_a_new_container_is_written_from_its_data() -> None:
    spelling, [doc] = _yaml("a: 1e3\nb: 2\n")
    assert isinstance(doc, dict)
    assert spelling.value(doc, "a", 1001.0) is None
    assert spelling.value(doc, "a", 1000) is None  # same number, another type: not the value read
    assert spelling.value(dict(doc), "a", doc["a"]) is None
    assert spelling.value(doc, "missing", 1) is None


def test_keys_keep_their_text() -> None:
    spelling, [doc] = _yaml("'a': 1\n\"on\": 2\n")
    assert isinstance(doc, dict)
    assert spelling.key(doc, "a") == "'a'"
    assert spelling.key(doc, "on") == '"on"'
    assert spelling.key({}, "a") is None


def test_tags_anchors_block_and_multi_line_scalars_are_not_kept() -> None:
    spelling, [doc] = _yaml("a: !!str 1\nb: &x 2\nc: *x\nd: |\n  text\ne: 'two\n  lines'\n")
    assert isinstance(doc, dict)
    for key in "abcde":
        assert spelling.value(doc, key, doc[key]) is None, key


def test_a_merge_key_keeps_nothing_of_its_mapping() -> None:
    spelling, [doc] = _yaml("base: &b {x: 1e3}\nm:\n  <<: *b\n  w: 0x1\nz: 0x2\n", version=(1, 1))
    assert isinstance(doc, dict)
    assert doc["m"] == {"x": 1000.0, "w": 1}
    assert spelling.value(doc["m"], "w", doc["m"]["w"]) is None
    assert spelling.value(doc, "z", doc["z"]) == "0x2"  # the rest of the file is kept


def test_documents_that_do_not_line_up_keep_nothing() -> None:
    spelling = Spelling()
    spelling.add_yaml("a: 1e3\n---\nb: 2\n", [{"a": 1000.0}], (1, 2))
    assert not spelling


def test_null_documents_are_skipped_when_lining_up() -> None:
    spelling, docs = _yaml("---\n---\na: 1e3\n")
    assert len(docs) == 1
    assert spelling.value(docs[0], "a", 1000.0) == "1e3"


def test_json_numbers_keep_their_text() -> None:
    spelling = Spelling()
    data = spelling.load_json('{"a": 1e3, "b": 1.50, "c": -0, "d": [1e400, 7], "e": 3}')
    assert data == {"a": 1000.0, "b": 1.5, "c": 0, "d": [float("inf"), 7], "e": 3}
    assert type(data["c"]) is int and type(data["a"]) is float  # plain values, not the kept wrappers
    assert json_text(data, spelling) == '{"a": 1e3, "b": 1.50, "c": -0, "d": [1e400, 7], "e": 3}'


def test_json_text_writes_changed_values_from_data() -> None:
    spelling = Spelling()
    data = spelling.load_json('{"a": 1e3, "b": [1.50], "s": "é"}')
    data["a"] = 5
    data["b"].append({})
    assert json_text(data, spelling) == '{"a": 5, "b": [1.50, {}], "s": "é"}'


def test_json_text_without_spelling_is_json_dumps() -> None:
    value = {"a": [1.5, None, True], "k": "é", "e": {}}
    assert json_text(value, None) == json.dumps(value, ensure_ascii=False)
    assert json_text(value, Spelling()) == json.dumps(value, ensure_ascii=False)


def test_a_top_level_json_number_is_plain() -> None:
    assert Spelling().load_json("1e3") == 1000.0
