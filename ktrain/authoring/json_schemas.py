"""JSON Schemas for editors and validation, generated from the pydantic API models.

`ktrain schema export` writes them (the files in `schemas/` are that command's output; a test
fails when they are stale). `schema_errors` checks a document against a shipped schema and
words the problems the way the rest of ktrain does (unknown field -> did you mean ...).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from ktrain.errors import FieldError, Located

SCHEMA_FILES = {
    "trainjob.schema.json": "TrainJob",
    "runtime.schema.json": "TrainingRuntime",
    "values.schema.json": "TemplateValues",
}


def generate() -> dict[str, str]:
    """File name -> JSON text of every schema we ship in `schemas/`."""
    from ktrain.api import TrainingRuntime, TrainJob
    from ktrain.api.values import TemplateValues

    models: dict[str, Any] = {
        "TrainJob": TrainJob,
        "TrainingRuntime": TrainingRuntime,
        "TemplateValues": TemplateValues,
    }
    out = {}
    for filename, model in SCHEMA_FILES.items():
        schema = models[model].model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[filename] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def export(directory: str | Path) -> list[Path]:
    """Write every schema into `directory` (created if needed); returns the files written."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def load_schema(filename: str) -> dict[str, Any]:
    from ktrain.inputs.bundled import schemas_dir

    schema: dict[str, Any] = json.loads((schemas_dir() / filename).read_text(encoding="utf-8"))
    return schema


_TYPES = {
    "integer": "an integer",
    "string": "a string",
    "boolean": "a boolean (true or false)",
    "array": "a list",
    "object": "a mapping",
    "number": "a number",
    "null": "null",
}


def _path_text(parts: list[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _problems(error: Any) -> list[tuple[list[Any], str, bool]]:
    """(path, message, points_at_key) for one jsonschema error."""
    from jsonschema.exceptions import best_match

    path = list(error.absolute_path)
    if error.validator in ("anyOf", "oneOf") and error.context:
        # Optional fields are anyOf [X, null]: the null branch's complaint is noise.
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            if sub.validator == "type" and sub.validator_value == "null":
                continue
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        if len(branches) == 1:
            return [p for sub in next(iter(branches.values())) for p in _problems(sub)]
        return _problems(best_match(error.context))
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list((error.schema.get("properties") or {}).keys())
        out = []
        for key in error.instance:
            if key in known:
                continue
            close = difflib.get_close_matches(str(key), known, n=1)
            out.append(
                ([*path, key], f"unknown field {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""), True)
            )
        return out
    if error.validator == "required" and isinstance(error.instance, dict):
        return [([*path, name], "is required", False) for name in error.validator_value if name not in error.instance]
    if error.validator == "type":
        wanted: list[str] = (
            error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        )
        words = " or ".join(_TYPES.get(w, w) for w in wanted)
        got = error.instance
        return [(path, f"must be {words}, got {type(got).__name__} {got!r}"[:200], False)]
    if error.validator in ("enum", "const"):
        allowed = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return [(path, "must be one of " + ", ".join(json.dumps(a) for a in allowed), False)]
    return [(path, error.message, False)]


def schema_errors(doc: Any, filename: str) -> list[tuple[FieldError, Located | None]]:
    """Every problem of `doc` (a loader Document) against the shipped schema `filename`,
    each with where it is in the file when known."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema(filename))
    found: list[tuple[list[Any], str, bool]] = []
    for error in validator.iter_errors(doc.data):
        found.extend(_problems(error))
    found.sort(key=lambda item: [str(p) for p in item[0]])
    out: list[tuple[FieldError, Located | None]] = []
    seen: set[tuple[str, str]] = set()
    for path, message, at_key in found:
        text = _path_text(path)
        if (text, message) in seen:
            continue
        seen.add((text, message))
        line, column = doc.locate(tuple(path), key=at_key)
        where = None
        if line is not None and doc.lines:
            where = Located(file=doc.file, line=line, column=column, source_line=doc.source_line(line))
        out.append((FieldError(text, message), where))
    # In file order, like a compiler; problems without a position last.
    out.sort(key=lambda item: (item[1] is None, item[1].line if item[1] and item[1].line else 0))
    return out
