"""Plain, frozen records of the API models, validated without pydantic.

Importing pydantic and building its validators costs a cold `ktrain job render` more than
everything else it does (~150 ms on a 2-core VM). The render path therefore reads its inputs
into these records: one class per pydantic model, with the same attribute names, defaults and
behaviours (`base.py`), built from a table that `python -m ktrain.api.generate` derives from the
pydantic models (`record_spec.py`; a test fails when it is stale).

The checks here are deliberately narrower than pydantic's: whatever they are not sure of (a
type pydantic might coerce, an unknown or snake_case key, a missing field) raises `NotPlain`,
and `validate` hands the input to pydantic, which accepts it or explains what is wrong. So an
input pydantic rejects is never accepted here, and one it accepts renders the same either way
(tests/unit/api/test_records.py holds both sides to that).
"""

from __future__ import annotations

from ktrain.api import base
from ktrain.api.record_spec import MODELS

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any, ClassVar

_REQUIRED = "required"


class NotPlain(Exception):
    """This input needs pydantic: to be coerced, or to be explained as an error."""


class Record:
    """A validated model: fields as attributes, immutable, `to_dict()` as the API server stores it."""

    __slots__ = ()
    _fields: tuple[tuple[str, str, Any, str, Any], ...] = ()
    _aliases: ClassVar[dict[str, int]] = {}  # per subclass; never mutated
    _names: frozenset[str] = frozenset()
    _extra_allowed = False

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen; build a new one instead")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (
            all(getattr(self, f[0]) == getattr(other, f[0]) for f in self._fields) and self._extras() == other._extras()
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable, as the pydantic models; typeshed wants a method

    def __repr__(self) -> str:
        inner = ", ".join(f"{f[0]}={getattr(self, f[0])!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"

    def _extras(self) -> dict[str, Any]:
        return getattr(self, "_extra", None) or {}

    @property
    def model_extra(self) -> dict[str, Any] | None:
        return dict(self._extras()) if self._extra_allowed else None

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Record:
        """A shallow copy with some fields replaced (unvalidated, as pydantic's model_copy)."""
        obj = object.__new__(type(self))
        for attr, *_ in self._fields:
            object.__setattr__(obj, attr, getattr(self, attr))
        if self._extra_allowed:
            object.__setattr__(obj, "_extra", dict(self._extras()))
        for attr, value in (update or {}).items():
            if attr not in self._names:
                raise AttributeError(f"{type(self).__name__} has no field {attr!r}")
            object.__setattr__(obj, attr, value)
        return obj

    def to_dict(self) -> dict[str, Any]:
        """The object as the API server would store it: camelCase keys, defaults filled, nulls
        dropped (pydantic's `model_dump(by_alias=True, exclude_none=True)`)."""
        out: dict[str, Any] = {}
        for attr, alias, _, _, _ in self._fields:
            value = getattr(self, attr)
            if value is not None:
                out[alias] = _dump(value)
        for key, value in self._extras().items():
            if value is not None:
                out[key] = _dump(value)
        return out


def _dump(value: Any) -> Any:
    # Containers are copied, as model_dump does, so callers may change what they get.
    if isinstance(value, Record):
        return value.to_dict()
    if type(value) is dict:
        return {k: _dump(v) for k, v in value.items()}
    if type(value) is list:
        return [_dump(v) for v in value]
    return value


_CLASSES: dict[str, type[Record]] = {}


def _check(spec: Any, value: Any) -> Any:
    """`value` checked against a type spec (see record_spec.py), with records built for models."""
    kind = spec[0]
    if kind == "str":
        if type(value) is str:
            return value
    elif kind == "int":
        if type(value) is int:
            return value
    elif kind == "bool":
        if type(value) is bool:
            return value
    elif kind == "float":
        if type(value) is float:
            return value
    elif kind == "any":
        return value
    elif kind == "opt":
        return None if value is None else _check(spec[1], value)
    elif kind == "lit":
        if type(value) in (str, int, bool) and any(type(v) is type(value) and v == value for v in spec[1]):
            return value
    elif kind == "list":
        if type(value) is list:
            return [_check(spec[1], v) for v in value]
    elif kind == "dict":
        if type(value) is dict and all(type(k) is str for k in value):
            return {k: _check(spec[1], v) for k, v in value.items()}
    elif kind == "union":
        # pydantic's strict smart union takes the member of the value's exact type
        for member in spec[1]:
            if member[0] in ("str", "int", "bool", "float") and type(value).__name__ == member[0]:
                return value
    elif kind == "model":
        return build(_CLASSES[spec[1]], value)
    raise NotPlain


def build(cls: type[Record], data: Any) -> Record:
    """A record of `cls` from a mapping, or NotPlain."""
    if type(data) is not dict:
        raise NotPlain
    values: list[Any] = [_REQUIRED] * len(cls._fields)
    extra: dict[str, Any] | None = None
    aliases = cls._aliases
    for key, value in data.items():
        index = aliases.get(key)
        if index is None:
            # snake_case names (pydantic's populate_by_name) and unknown keys are pydantic's to judge
            if not cls._extra_allowed or type(key) is not str or key in cls._names:
                raise NotPlain
            if extra is None:
                extra = {}
            extra[key] = value
            continue
        values[index] = _check(cls._fields[index][2], value)
    obj = object.__new__(cls)
    setter = object.__setattr__
    for (attr, _, _, default_kind, default), value in zip(cls._fields, values, strict=False):
        if value is _REQUIRED:
            if default_kind == "value":
                value = default
            elif default_kind == "factory":
                value = _factory(default)
            else:
                raise NotPlain
        setter(obj, attr, value)
    if cls._extra_allowed:
        setter(obj, "_extra", extra or {})
    return obj


def _factory(name: str) -> Any:
    if name == "dict":
        return {}
    if name == "list":
        return []
    return build(_CLASSES[name], {})


def _make_classes() -> None:
    for name, model in MODELS.items():
        behaviours = tuple(getattr(base, b) for b in model["behaviours"])
        fields = tuple(model["fields"])
        slots = tuple(f[0] for f in fields) + (("_extra",) if model["extra"] == "allow" else ())
        cls = type(
            name,
            (Record, *behaviours),
            {
                "__slots__": slots,
                "__module__": __name__,
                "_fields": fields,
                "_aliases": {f[1]: i for i, f in enumerate(fields)},
                "_names": frozenset(f[0] for f in fields),
                "_extra_allowed": model["extra"] == "allow",
            },
        )
        _CLASSES[name] = cls


_make_classes()


def record_class(name: str) -> type[Record]:
    return _CLASSES[name]


def validate(model: str, data: Any) -> Any:
    """`data` as the model named `model`: a record when the plain checks accept it, else the
    pydantic model (which may raise pydantic's ValidationError)."""
    try:
        return build(_CLASSES[model], data)
    except NotPlain:
        return pydantic_model(model).model_validate(data)


def pydantic_model(name: str) -> Any:
    """The pydantic class a record mirrors (imports pydantic)."""
    import importlib

    return getattr(importlib.import_module(MODELS[name]["module"]), name)


TrainJob = _CLASSES["TrainJob"]
TrainingRuntime = _CLASSES["TrainingRuntime"]
MPIMLPolicySource = _CLASSES["MPIMLPolicySource"]


_JSON_TYPES = {"str": "string", "int": "integer", "bool": "boolean", "float": "number"}


def type_errors(
    model: str, data: Any, *, containers_only: bool = False
) -> list[tuple[tuple[str | int, ...], str, Any]]:
    """Where `data` has a value of the wrong JSON type for the model named `model`, as
    (path, the OpenAPI type expected, the value). Only types are checked: missing, unknown and
    literal fields are left to `build` and pydantic. Lets callers that read into a document
    before it is validated (the command-line overrides) refuse it first; `containers_only`
    reports only a non-mapping where a mapping belongs and a non-list where a list belongs
    (what such a caller would trip over), leaving wrong scalars to the full validation, which
    reports every problem at once."""
    found: list[tuple[tuple[str | int, ...], str, Any]] = []
    _types(("model", model), data, (), found, containers_only)
    return found


def _types(spec: Any, value: Any, path: tuple[str | int, ...], found: list[Any], containers: bool) -> None:
    kind = spec[0]
    if value is None or kind in ("any", "lit") or len(found) >= 20:
        return
    if kind == "opt":
        _types(spec[1], value, path, found, containers)
    elif kind in _JSON_TYPES:
        if containers:
            return
        expected = {"int": (int,), "str": (str,), "bool": (bool,), "float": (float, int)}[kind]
        if type(value) not in expected:
            found.append((path, _JSON_TYPES[kind], value))
    elif kind == "union":
        if not containers and not any(
            type(value).__name__ == member[0] for member in spec[1] if member[0] in _JSON_TYPES
        ):
            found.append((path, ",".join(_JSON_TYPES.get(m[0], m[0]) for m in spec[1]), value))
    elif kind == "list":
        if type(value) is not list:
            found.append((path, "array", value))
            return
        for i, item in enumerate(value):
            _types(spec[1], item, (*path, i), found, containers)
    elif type(value) is not dict:
        found.append((path, "object", value))
    elif kind == "dict":
        for key, item in value.items():
            _types(spec[1], item, (*path, key), found, containers)
    elif kind == "model":
        cls = _CLASSES[spec[1]]
        for key, item in value.items():
            index = cls._aliases.get(key)
            if index is not None:
                _types(cls._fields[index][2], item, (*path, key), found, containers)
