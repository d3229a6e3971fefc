"""What the tests of the API models (`test_runtime.py`, `test_trainjob.py`) hold against upstream's CRDs
(../shared): a model's fields, walked alongside the CRD's openAPI schema, with their defaults."""

from __future__ import annotations

import typing
from typing import Any

import yaml
from conftest import UPSTREAM
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from ktrain.api.base import camel

NONE = "<no default>"


def crd_schema(plural: str) -> dict[str, Any]:
    """The openAPI schema of upstream's CRD `trainer.kubeflow.org_<plural>.yaml`."""
    path = UPSTREAM / "trainer" / "crds" / f"trainer.kubeflow.org_{plural}.yaml"
    (version,) = yaml.safe_load(path.read_text())["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def field_defaults(model: type[BaseModel], schema: dict[str, Any], path: str = "") -> dict[str, tuple[Any, Any]]:
    """{path: (the model's default, the CRD's default)} of every typed field under `spec`, where either
    has one; a field the CRD does not have is `(default, None)` under the key `"unknown:" + path`."""
    found: dict[str, tuple[Any, Any]] = {}
    for name, info in model.model_fields.items():
        key = path + camel(name)
        if key in ("apiVersion", "kind", "metadata", "status"):
            continue
        prop = (schema.get("properties") or {}).get(camel(name))
        if prop is None:
            found["unknown:" + key] = (info.default, None)
            continue
        ours = NONE if info.default in (PydanticUndefined, None) else info.default
        if ours != NONE or "default" in prop:
            found[key] = (ours, prop.get("default", NONE))
        for sub in _models_in(info.annotation):
            found.update(field_defaults(sub, prop["items"] if prop.get("type") == "array" else prop, key + "."))
    return found
