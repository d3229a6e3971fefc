"""Shared pydantic base and small Kubernetes types."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ktrain.api.base import camel as _camel
from ktrain.api.base import openapi_type as openapi_type


class KubeModel(BaseModel):
    """camelCase on the wire, strict types (the API server does not coerce "4" to 4),
    unknown fields rejected (kubectl's strict field validation)."""

    model_config = ConfigDict(
        alias_generator=_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        frozen=True,
    )

    def to_dict(self) -> dict[str, Any]:
        """The object as the API server would store it (defaults filled, nulls dropped)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class ObjectMeta(BaseModel):
    """metadata: only the fields ktrain reads are typed; the rest (resourceVersion,
    managedFields, ...) is accepted so `kubectl get -o yaml` output can be fed back."""

    model_config = ConfigDict(alias_generator=_camel, populate_by_name=True, extra="allow", frozen=True)

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class LocalObjectReference(KubeModel):
    name: str = ""


class EnvVar(KubeModel):
    name: str
    value: str | None = None
    value_from: dict[str, Any] | None = None


class ResourceRequirements(KubeModel):
    # Quantities may be written as YAML numbers (`nvidia.com/gpu: 4`) or strings.
    limits: dict[str, str | int | float] | None = None
    requests: dict[str, str | int | float] | None = None
    claims: list[dict[str, Any]] | None = None
