"""The JSON Schemas in schemas/ are what the API models generate, and they accept real jobs."""

from __future__ import annotations

import json

import yaml

from conftest import CASES, REPO
from ktrain.schemas import generate


def test_schemas_are_up_to_date() -> None:
    for name, text in generate().items():
        assert (REPO / "schemas" / name).read_text() == text, f"schemas/{name} is stale: regenerate it"


def test_trainjob_schema_accepts_conformance_jobs_and_rejects_a_typo() -> None:
    import jsonschema

    schema = json.loads((REPO / "schemas" / "trainjob.schema.json").read_text())
    jobs = sorted(CASES.glob("*/trainjob.yaml")) if CASES.is_dir() else []
    for path in jobs[:10]:
        data = yaml.safe_load(path.read_text())
        if isinstance((data.get("spec") or {}).get("trainer", {}).get("numNodes"), int):
            jsonschema.validate(data, schema)
    bad = {"spec": {"runtimeRef": {"name": "x"}, "trainer": {"numNode": 4}}}
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
