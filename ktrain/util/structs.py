"""`@struct`: the part of `dataclasses` the render path uses, without its start-up cost.

A cold `ktrain job render` spent about 27 ms of its ~85 ms on dataclasses: importing the module
pulls in `inspect` (9 ms), and each decorated class compiles its generated methods with
`exec()` (0.9 ms per class, 19 classes). `@struct` builds the same methods from closures: no
import beyond the stdlib core, about 40 µs per class (slots and frozen included).

Supported, with dataclasses' meaning: fields from annotations in definition order (base
structs' first), plain defaults and `field(default=..., default_factory=..., repr=...)`,
`frozen`, `slots`, `eq` (unhashable unless frozen), `__post_init__`, positional and keyword
arguments, `ClassVar` annotations skipped. Not supported (use dataclasses where needed):
`order`, `kw_only`, `InitVar`; `fields()` gives each field's name and default only.
tests/unit/util/test_structs.py holds `@struct` to dataclasses' behaviour.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    from typing_extensions import dataclass_transform  # typing has it from Python 3.11

    T = TypeVar("T")
else:  # the type checker's view only: at run time a no-op, as typing's own

    def dataclass_transform(**_: object) -> object:
        return lambda decorated: decorated


_MISSING = object()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen struct (as dataclasses.FrozenInstanceError)."""


class _FieldSpec:
    """What `field(...)` makes: a class attribute's value that `@struct` reads and replaces."""

    __slots__ = ("default", "default_factory", "repr")

    def __init__(
        self, *, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING, repr: bool = True
    ) -> None:  # noqa: A002
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.default = default
        self.default_factory = default_factory
        self.repr = repr


if TYPE_CHECKING:  # typed as dataclasses.field: the checker sees the field's value type, not a _FieldSpec

    @overload
    def field(*, default: T, repr: bool = True) -> T: ...
    @overload
    def field(*, default_factory: Callable[[], T], repr: bool = True) -> T: ...
    @overload
    def field(*, repr: bool = True) -> Any: ...
    def field(*, default: Any = _MISSING, default_factory: Any = _MISSING, repr: bool = True) -> Any: ...

else:
    field = _FieldSpec  # named as dataclasses.field, which it stands in for


class Field:
    """What `fields()` tells of one field (dataclasses.Field's `name` and `default`)."""

    __slots__ = ("default", "name")

    def __init__(self, name: str, default: Any) -> None:
        self.name = name
        self.default = default

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


MISSING = _MISSING


def fields(struct_or_instance: Any) -> tuple[Field, ...]:
    """The fields of a struct class or instance, in order (as dataclasses.fields)."""
    specs = getattr(struct_or_instance, "__struct_fields__", None)
    if specs is None:
        raise TypeError("must be called with a struct type or instance")
    return tuple(Field(name, default) for name, default, _, _ in specs)


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))
    return text.startswith(("ClassVar", "typing.ClassVar", "Final", "typing.Final"))


@dataclass_transform(eq_default=True, field_specifiers=(field,))
def struct(
    cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True, repr: bool = True
) -> Any:  # noqa: A002
    """Decorate a class as `@dataclass` would (see the module docstring for what is supported)."""

    def wrap(cls: type[T]) -> type[T]:
        processed: type[T] = _process(cls, frozen=frozen, slots=slots, eq=eq, with_repr=repr)
        return processed

    return wrap if cls is None else wrap(cls)


def _process(cls: Any, *, frozen: bool, slots: bool, eq: bool, with_repr: bool) -> Any:
    # (name, default, factory, shown in repr)
    specs: dict[str, tuple[str, Any, Any, bool]] = {}
    for base in reversed(cls.__mro__[1:]):
        for spec in getattr(base, "__struct_fields__", ()):
            specs[spec[0]] = spec
    # Not inspect.get_annotations: importing inspect is what this module exists to avoid.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, _FieldSpec):
            spec = (name, value.default, value.default_factory, value.repr)
        else:
            if isinstance(value, (list, dict, set)):
                raise ValueError(f"mutable default {type(value).__name__} for field {name}: use default_factory")
            spec = (name, value, _MISSING, True)
        specs.pop(name, None)
        specs[name] = spec
    fields = tuple(specs.values())
    names = tuple(f[0] for f in fields)
    post_init = getattr(cls, "__post_init__", None)
    setter = object.__setattr__

    name_set = frozenset(names)
    plain = {name: default for name, default, _, _ in fields if default is not _MISSING}
    factories = tuple((name, factory) for name, _, factory, _ in fields if factory is not _MISSING)

    # One generic __init__ for every struct: a dict merge instead of dataclasses' generated code.
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if args:
            if len(args) > len(names):
                raise TypeError(f"{cls.__name__}() takes {len(names)} arguments but {len(args)} were given")
            for name, value in zip(names, args, strict=False):
                if name in kwargs:
                    raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
                kwargs[name] = value
        if not name_set.issuperset(kwargs):
            unknown = next(k for k in kwargs if k not in name_set)
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unknown!r}")
        values = {**plain, **kwargs}
        for name, factory in factories:
            if name not in values:
                values[name] = factory()
        if len(values) != len(names):
            missing = next(n for n in names if n not in values)
            raise TypeError(f"{cls.__name__}() missing required argument: {missing!r}")
        if slots:
            for name in names:
                setter(self, name, values[name])
        else:
            self.__dict__.update(values)
        if post_init is not None:
            post_init(self)

    namespace: dict[str, Any] = {"__init__": __init__, "__struct_fields__": fields, "__match_args__": names}
    if with_repr and "__repr__" not in cls.__dict__:
        shown = tuple(f[0] for f in fields if f[3])

        def __repr__(self: Any) -> str:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
            return f"{type(self).__qualname__}({inner})"

        namespace["__repr__"] = __repr__
    if eq and "__eq__" not in cls.__dict__:

        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in names)

        namespace["__eq__"] = __eq__
        if frozen:

            def __hash__(self: Any) -> int:
                return hash(tuple(getattr(self, n) for n in names))

            namespace["__hash__"] = __hash__
        elif "__hash__" not in cls.__dict__:
            namespace["__hash__"] = None
    if frozen:

        def __setattr__(self: Any, name: str, value: Any) -> None:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self: Any, name: str) -> None:
            raise FrozenInstanceError(f"cannot delete field {name!r}")

        namespace["__setattr__"] = __setattr__
        namespace["__delattr__"] = __delattr__
    if slots:
        body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__") and k not in names}
        inherited = {s for base in cls.__mro__[1:] for s in getattr(base, "__slots__", ())}
        body["__slots__"] = tuple(n for n in names if n not in inherited)
        body.update(namespace)
        new = type(cls)(cls.__name__, cls.__bases__, body)
        new.__qualname__ = cls.__qualname__
        return new
    for key, value in namespace.items():
        setattr(cls, key, value)
    for name, default, _, _ in fields:  # class attributes hold plain defaults, as in dataclasses
        if isinstance(cls.__dict__.get(name), _FieldSpec):
            if default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, default)
    return cls
