"""The generated table of the plain records (ktrain/api/record_spec.py): closed (every model a field
names is in it), every behaviour it names exists, and it says of each model what pydantic says."""

from __future__ import annotations

import importlib

import pytest

from ktrain.api import base
from ktrain.api.record_spec import MODELS


def _models(spec: tuple) -> list[str]:  # type: ignore[type-arg]
    if spec[0] == "model":
        return [spec[1]]
    if spec[0] in ("opt", "list", "dict"):
        return _models(spec[1])
    if spec[0] == "union":
        return [m for member in spec[1] for m in _models(member)]
    return []


def test_every_model_a_field_names_is_in_the_table() -> None:
    named = {m for entry in MODELS.values() for field in entry["fields"] for m in _models(field[2])}
    named |= {field[4] for entry in MODELS.values() for field in entry["fields"] if field[3] == "factory"} - {
        "dict",
        "list",
    }
    assert named and named <= set(MODELS)


def test_every_behaviour_it_names_is_one_of_the_api_bases() -> None:
    for name, entry in MODELS.items():
        for behaviour in entry["behaviours"]:
            assert issubclass(getattr(base, behaviour), base.Behaviour), (name, behaviour)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_entry_is_what_pydantic_says_of_its_model(name: str) -> None:
    entry = MODELS[name]
    model = getattr(importlib.import_module(entry["module"]), name)
    assert [(f[0], f[1]) for f in entry["fields"]] == [(a, i.alias or a) for a, i in model.model_fields.items()]
    assert [f[3] == "required" for f in entry["fields"]] == [i.is_required() for i in model.model_fields.values()]
    assert entry["extra"] == model.model_config.get("extra")
