"""JSON Schemas for editors and validation, generated from the pydantic API models."""

from __future__ import annotations

import json
from typing import Any

SCHEMA_FILES = {"trainjob.schema.json": "TrainJob", "runtime.schema.json": "TrainingRuntime"}


def generate() -> dict[str, str]:
    """File name -> JSON text of every schema we ship in `schemas/`."""
    from ktrain.api import TrainingRuntime, TrainJob

    models: dict[str, Any] = {"TrainJob": TrainJob, "TrainingRuntime": TrainingRuntime}
    out = {}
    for filename, model in SCHEMA_FILES.items():
        schema = models[model].model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[filename] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out
