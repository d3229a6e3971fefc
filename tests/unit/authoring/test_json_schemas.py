"""The JSON Schemas in schemas/ are what the API models generate, and they accept real jobs."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import CASES, REPO

from ktrain.authoring.json_schemas import generate


def test_schemas_are_up_to_date() -> None:
    for name, text in generate().items():
        assert (REPO / "schemas" / name).read_text() == text, f"schemas/{name} is stale: regenerate it"


@pytest.mark.shared(optional=True)  # the conformance jobs when ../shared is there
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


def test_schema_export_writes_what_generate_returns(cli, tmp_path) -> None:
    r = cli("schema", "export", "--dir", str(tmp_path / "out"))
    assert r.exit_code == 0, r.stderr
    for name, text in generate().items():
        assert (tmp_path / "out" / name).read_text() == text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(generate())


def test_values_schema_accepts_variables_and_rejects_bad_names() -> None:
    import jsonschema

    schema = json.loads((REPO / "schemas" / "values.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"lr": "3e-4", "optim": {"betas": [0.9, 0.99]}, "_n": 2})
    assert not validator.is_valid({"learning-rate": 1})
    assert not validator.is_valid(["lr"])
