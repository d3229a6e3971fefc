"""`@struct` (ktrain/util/structs.py) stands in for `@dataclass` on the render path: it must behave
like it wherever ktrain relies on it."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from ktrain.util.structs import FrozenInstanceError, field, struct


def _pair(**options):  # type: ignore[no-untyped-def]
    """The same class declared with dataclasses and with struct."""
    made = []
    for decorate, make_field in ((dataclasses.dataclass, dataclasses.field), (struct, field)):

        class Point:
            KIND: ClassVar[str] = "point"
            x: int
            y: int = 0
            tags: list[str] = make_field(default_factory=list)
            secret: str = make_field(default="s", repr=False)

            def norm(self) -> int:
                return abs(self.x) + abs(self.y)

        made.append(decorate(**options)(Point))
    return made


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True}])
def test_construction_repr_and_equality_match_dataclasses(options: dict[str, bool]) -> None:
    dc, st = _pair(**options)
    for args, kwargs in (((1,), {}), ((1, 2), {}), ((), {"x": 3, "tags": ["a"]}), ((1,), {"y": 5, "secret": "t"})):
        a, b = dc(*args, **kwargs), st(*args, **kwargs)
        assert repr(a).replace("Point", "P") == repr(b).replace("Point", "P")
        assert (a.x, a.y, a.tags, a.secret) == (b.x, b.y, b.tags, b.secret)
        assert b == st(*args, **kwargs) and b != st(99) and b.norm() == a.norm()
    assert st(1).tags is not st(1).tags, "default_factory runs per instance"
    assert st.KIND == "point" and "KIND" not in repr(st(1))
    assert st.__match_args__ == dc.__match_args__


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"slots": True}])
def test_argument_errors_match_dataclasses(options: dict[str, bool]) -> None:
    for cls in _pair(**options):
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1, x=2)
        with pytest.raises(TypeError):
            cls(1, z=2)
        with pytest.raises(TypeError):
            cls(1, 2, [], "s", 5)


def test_frozen_refuses_assignment_and_hashes_like_dataclasses() -> None:
    _dc, st = _pair(frozen=True)
    point = st(1, 2)
    with pytest.raises(FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):  # FrozenInstanceError is an AttributeError, as in dataclasses
        del point.y
    assert hash(st(1, 2, ("a",))) == hash(st(1, 2, ("a",)))
    assert {st(1, 2, ()), st(1, 2, ())} == {st(1, 2, ())}


def test_mutable_and_unhashable_by_default() -> None:
    _, st = _pair()
    point = st(1)
    point.x = 7
    assert point.x == 7
    with pytest.raises(TypeError):
        hash(point)


def test_slots_leave_no_instance_dict() -> None:
    _, st = _pair(slots=True)
    assert not hasattr(st(1), "__dict__")
    with pytest.raises(AttributeError):
        st(1).other = 1  # type: ignore[attr-defined]


def test_post_init_custom_methods_and_inheritance() -> None:
    @struct(frozen=True, slots=True)
    class Checked:
        value: int = 0

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("negative")

        def __repr__(self) -> str:
            return "Checked(<hidden>)"

    assert Checked(3).value == 3 and repr(Checked(3)) == "Checked(<hidden>)"
    with pytest.raises(ValueError):
        Checked(-1)

    @struct
    class Base:
        a: int
        b: int = 1

    @struct
    class Child(Base):
        c: int = 2

    assert (Child(5).a, Child(5).b, Child(5).c) == (5, 1, 2)
    assert Child(5) != Base(5)


def test_a_mutable_plain_default_is_refused_as_in_dataclasses() -> None:
    with pytest.raises(ValueError):

        @struct
        class Bad:
            items: list[int] = []  # noqa: RUF012


def test_fields_names_and_defaults_like_dataclasses() -> None:
    from ktrain.util.structs import MISSING, fields

    dc, st = _pair()
    assert [f.name for f in fields(st)] == [f.name for f in dataclasses.fields(dc)] == ["x", "y", "tags", "secret"]
    assert [f.name for f in fields(st(1))] == ["x", "y", "tags", "secret"]
    assert [f.default for f in fields(st)] == [MISSING, 0, MISSING, "s"]
    with pytest.raises(TypeError):
        fields(object())
