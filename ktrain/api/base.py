"""What the API types do besides holding fields, without pydantic.

The pydantic models (`common`, `trainjob`, `runtime`) and the plain records the render path
uses (`records`) share these behaviours, so the engine reads either the same way.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.api.policies import ML_POLICY_KEYS
from ktrain.util.jsondata import deep_copy

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from typing import Any, Protocol

    class ObjectMetadata(Protocol):
        """What the behaviours read of an object's metadata: `ktrain.api.common.ObjectMeta` (and
        its record) has it. A protocol, so this module does not import the models built on it."""

        @property
        def name(self) -> str | None: ...
        @property
        def namespace(self) -> str | None: ...
        @property
        def labels(self) -> dict[str, str] | None: ...


def camel(name: str) -> str:
    """snake_case field name -> the camelCase name on the wire."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def openapi_type(value: object) -> str:
    """The OpenAPI name of a JSON value's type, as the API server words type errors."""
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
    return "array" if isinstance(value, (list, tuple)) else "object"


class Behaviour:
    """Marks a mixin the records generator carries over to the record of the same model."""

    __slots__ = ()


class NamedBehaviour(Behaviour):
    """An object whose name is its metadata.name ("" when unset)."""

    __slots__ = ()
    if TYPE_CHECKING:  # every model (and record) with a behaviour has it; declared for the checker only
        metadata: ObjectMetadata

    @property
    def name(self) -> str:
        return self.metadata.name or ""


class TrainJobBehaviour(NamedBehaviour):
    __slots__ = ()

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"


class TrainingRuntimeBehaviour(NamedBehaviour):
    __slots__ = ()

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.metadata.labels or {})

    @property
    def framework(self) -> str:
        return self.labels.get(c.LABEL_FRAMEWORK, "")


class MLPolicyBehaviour(Behaviour):
    __slots__ = ()

    @property
    def policy_keys(self) -> list[str]:
        """The ML policies this mlPolicy sets, in `ktrain.api.policies.ML_POLICIES` order."""
        return [k for k in ML_POLICY_KEYS if getattr(self, k) is not None]


_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def default_jobset_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Apply the runtime CRD's structural defaults inside `spec.template.spec` (a copy is returned).

    Defaults apply only where the parent object exists, as the API server's structural
    defaulting does.
    """
    out = deep_copy(spec)
    failure = out.get("failurePolicy")
    if isinstance(failure, dict):
        failure.setdefault("restartStrategy", "Recreate")
    for vcp in out.get("volumeClaimPolicies") or []:
        if isinstance(vcp, dict) and isinstance(vcp.get("retentionPolicy"), dict):
            vcp["retentionPolicy"].setdefault("whenDeleted", "Delete")
    for rjob in out.get("replicatedJobs") or []:
        if not isinstance(rjob, dict):
            continue
        rjob.setdefault("groupName", "default")
        rjob.setdefault("replicas", 1)
        pod_spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        if not isinstance(pod_spec, dict):
            continue
        for key in _CONTAINER_LISTS:
            for container in pod_spec.get(key) or []:
                if isinstance(container, dict):
                    for port in container.get("ports") or []:
                        if isinstance(port, dict):
                            port.setdefault("protocol", "TCP")
    return out


def runtime_trainer_container(template_spec: Any) -> dict[str, Any]:
    """The trainer's `node` container in a runtime's JobSet template (a copy; {} when there is
    none). Tolerant of a malformed template: listings and flag handling read it before validation."""

    def at(node: Any, *keys: str) -> Any:
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    rjobs = template_spec.get("replicatedJobs") if isinstance(template_spec, dict) else None
    for rjob in rjobs if isinstance(rjobs, list) else []:
        labels = at(rjob, "template", "metadata", "labels")
        if isinstance(labels, dict) and labels.get(c.LABEL_ANCESTOR) == c.ANCESTOR_TRAINER:
            containers = at(rjob, "template", "spec", "template", "spec", "containers")
            for ct in containers if isinstance(containers, list) else []:
                if isinstance(ct, dict) and ct.get("name") == c.NODE:
                    return dict(ct)
    return {}
