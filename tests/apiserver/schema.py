"""Structural-schema handling for custom resources, from the reference CRD YAMLs.

Mirrors what apiextensions-apiserver does to a custom resource on write: prune fields the schema
does not know (reported as `unknown field` warnings, or a 400 under fieldValidation=Strict), drop
nulls for non-nullable fields, apply `default:` values, then validate against the
`openAPIV3Schema`. `x-kubernetes-*` extensions are ignored for validation (no CEL rules here; JobSet's
transition rules are in jobset_admission).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .errors import (
    FieldError,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
    type_invalid,
)

JSON = dict[str, Any]

# tests/apiserver/schema.py -> the repository -> its sibling `shared` directory.
DEFAULT_UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "upstream"

try:  # the C loader parses the ~1 MB CRDs about ten times faster
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

_lock = threading.Lock()
_docs: dict[Path, JSON] = {}
_schemas: dict[tuple[Path, str], CrdSchema] = {}


def load_crd(path: Path) -> JSON:
    """The parsed CRD document, cached for the whole test session."""
    resolved = path.resolve()
    with _lock:
        doc = _docs.get(resolved)
        if doc is None:
            with open(resolved, encoding="utf-8") as fh:
                doc = yaml.load(fh, Loader=_Loader)
            _docs[resolved] = doc
        return doc


def crd_schema(path: Path, version: str) -> CrdSchema:
    key = (path.resolve(), version)
    with _lock:
        cached = _schemas.get(key)
    if cached is not None:
        return cached
    doc = load_crd(path)
    for entry in doc["spec"]["versions"]:
        if entry["name"] == version:
            schema = CrdSchema(entry["schema"]["openAPIV3Schema"])
            break
    else:
        raise KeyError(f"{path} does not define version {version}")
    with _lock:
        _schemas.setdefault(key, schema)
        return _schemas[key]


def format_path(parts: Iterable[str | int]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _to_jsonschema(node: Any) -> Any:
    """Drop Kubernetes extensions and translate `nullable` / int-or-string into JSON Schema."""
    if isinstance(node, list):
        return [_to_jsonschema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: JSON = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key in ("description", "default", "nullable"):
            continue
        if key == "properties":
            out[key] = {name: _to_jsonschema(sub) for name, sub in value.items()}
        else:
            out[key] = _to_jsonschema(value)
    if node.get("x-kubernetes-int-or-string") and "type" not in out and "anyOf" not in out:
        out["type"] = ["integer", "string"]
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


# Go's largest exactly representable integer in a float64 (go-openapi swag.IsFloat64AJSONInteger's bound).
_MAX_JSON_INTEGER = 2**53 - 1


def _json_numbers(value: Any) -> Any:
    """A custom resource's numbers as the real server keeps them: decoded into float64 unless
    written as integers, validated with go-openapi's rule that a float with an integral value is
    an `integer` (kube-openapi `validate/type.go`: `isFloatInt`, `swag.IsFloat64AJSONInteger`),
    and written back by encoding/json, which prints float64(2) as `2`. So `2.0` is the integer 2
    here; `0.5` stays a number (and fails an integer or int-or-string field)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_JSON_INTEGER:
        return int(value)
    if isinstance(value, list):
        return [_json_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _json_numbers(item) for key, item in value.items()}
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _shown(value: Any) -> Any:
    # field.Invalid prints composite values by type name in CRD validation errors.
    return _json_type(value) if isinstance(value, (dict, list)) else value


class CrdSchema:
    def __init__(self, openapi: JSON) -> None:
        self.openapi = openapi
        self.validator = jsonschema.Draft4Validator(_to_jsonschema(openapi))

    # -- pruning and defaulting ------------------------------------------------------------

    def normalise(self, obj: JSON) -> tuple[JSON, list[str]]:
        """Return (pruned and defaulted copy, unknown field paths)."""
        result = _json_numbers(copy.deepcopy(obj))
        unknown: list[str] = []
        props = self.openapi.get("properties", {})
        for key in list(result):
            if key in ("apiVersion", "kind", "metadata"):
                continue  # ObjectMeta is handled by the generic metadata code
            sub = props.get(key)
            if sub is None:
                unknown.append(key)
                del result[key]
            elif result[key] is None and not sub.get("nullable"):
                del result[key]
            else:
                result[key] = self._walk(result[key], sub, [key], unknown)
        self._defaults(result, props, [], unknown, skip={"apiVersion", "kind", "metadata"})
        return result, unknown

    def _defaults(
        self,
        value: JSON,
        props: JSON,
        path: list[str | int],
        unknown: list[str],
        skip: AbstractSet[str] = frozenset(),
    ) -> None:
        for key, sub in props.items():
            if key not in value and key not in skip and "default" in sub:
                value[key] = self._walk(copy.deepcopy(sub["default"]), sub, [*path, key], unknown)

    def _walk(self, value: Any, schema: JSON, path: list[str | int], unknown: list[str]) -> Any:
        if isinstance(value, list):
            items = schema.get("items")
            if isinstance(items, dict):
                return [
                    item if item is None else self._walk(item, items, [*path, i], unknown)
                    for i, item in enumerate(value)
                ]
            return value
        if not isinstance(value, dict):
            return value
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        props: JSON = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key in list(value):
            sub: JSON | None = props.get(key)
            if sub is None and isinstance(additional, dict):
                sub = additional
            if sub is None:
                keep = preserve or additional is True or (embedded and key in ("apiVersion", "kind", "metadata"))
                if not keep:
                    unknown.append(format_path([*path, key]))
                    del value[key]
                continue
            if value[key] is None and not sub.get("nullable"):
                del value[key]
                continue
            value[key] = self._walk(value[key], sub, [*path, key], unknown)
        self._defaults(value, props, path, unknown)
        return value

    # -- validation ------------------------------------------------------------------------

    def validate(self, obj: JSON) -> list[FieldError]:
        found: list[FieldError] = []
        seen: set[tuple[str, str]] = set()
        errors = sorted(self.validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
        for err in errors:
            for field_error in _convert(err):
                key = (field_error.field, field_error.body)
                if key not in seen:
                    seen.add(key)
                    found.append(field_error)
        return found


def _convert(err: jsonschema.ValidationError) -> list[FieldError]:
    field = format_path(err.absolute_path)
    rule = err.validator
    want = err.validator_value
    value = err.instance
    shown = _shown(value)
    if rule == "required":
        present = value if isinstance(value, dict) else {}
        return [required(format_path([*list(err.absolute_path), name])) for name in want if name not in present]
    if rule == "type":
        expected = want if isinstance(want, str) else ",".join(want)
        actual = _json_type(value)
        detail = f'{field} in body must be of type {expected}: "{actual}"'
        return [type_invalid(field, actual, detail)]
    if rule == "enum":
        return [not_supported(field, shown, list(want))]
    if rule == "minimum":
        return [invalid(field, shown, f"{field} in body should be greater than or equal to {want}")]
    if rule == "maximum":
        return [invalid(field, shown, f"{field} in body should be less than or equal to {want}")]
    if rule == "minLength":
        return [invalid(field, shown, f"{field} in body should be at least {want} chars long")]
    if rule == "maxLength":
        return [too_long(field, f"may not be more than {want} bytes")]
    if rule == "pattern":
        return [invalid(field, shown, f"{field} in body should match '{want}'")]
    if rule == "maxItems":
        return [too_many(field, len(value), int(want))]
    if rule == "minItems":
        return [invalid(field, shown, f"{field} in body should have at least {want} items")]
    if rule == "minProperties":
        return [invalid(field, shown, f"{field} in body should have at least {want} properties")]
    return [invalid(field, shown, err.message)]
