"""Label and field selectors with the semantics of k8s.io/apimachinery/pkg/labels and fields."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request

JSON = dict[str, Any]

_KEY = r"[A-Za-z0-9][A-Za-z0-9._/-]*"
_VALUE = r"[A-Za-z0-9._-]*"
_EXISTS = re.compile(rf"^(!?)\s*({_KEY})$")
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s*\(([^()]*)\)$")
_CMP = re.compile(rf"^({_KEY})\s*(==|=|!=|>|<)\s*({_VALUE})$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            # An absent label satisfies inequality, as in the real selector.
            return not present or value not in self.values
        if self.op in (">", "<"):
            try:
                have, want = int(value), int(self.values[0])
            except ValueError:
                return False
            return present and (have > want if self.op == ">" else have < want)
        raise AssertionError(self.op)


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def parse_label_selector(text: str) -> list[Requirement]:
    """Parse `a=b,c!=d,e in (f,g),!h,i`; raises a 400 ApiError on bad syntax."""
    reqs: list[Requirement] = []
    if not text.strip():
        return reqs
    for raw in _split_top_level(text):
        part = raw.strip()
        m = _SET.match(part)
        if m:
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            if not values:
                raise _selector_error(text, f"for '{m.group(2)}' set: values cannot be empty")
            reqs.append(Requirement(m.group(1), m.group(2), values))
            continue
        m = _CMP.match(part)
        if m:
            op = "=" if m.group(2) == "==" else m.group(2)
            if op in (">", "<") and not m.group(3).lstrip("-").isdigit():
                raise _selector_error(text, "for 'Gt', 'Lt' operators, the value must be an integer")
            reqs.append(Requirement(m.group(1), op, (m.group(3),)))
            continue
        m = _EXISTS.match(part)
        if m:
            reqs.append(Requirement(m.group(2), "!" if m.group(1) else "exists"))
            continue
        raise _selector_error(text, f"unable to parse requirement: {part!r}")
    return reqs


def _selector_error(text: str, detail: str) -> ApiError:
    return bad_request(f'unable to parse requirement: couldn\'t parse the selector string "{text}": {detail}')


def labels_match(reqs: list[Requirement], obj: JSON) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(r.matches(labels) for r in reqs)


@dataclass(frozen=True)
class FieldRequirement:
    path: str
    equal: bool
    value: str


def parse_field_selector(text: str, allowed: frozenset[str]) -> list[FieldRequirement]:
    """Parse `a.b=c,d!=e`; unsupported field labels are a 400, as on the real server."""
    reqs: list[FieldRequirement] = []
    if not text.strip():
        return reqs
    for raw in text.split(","):
        part = raw.strip()
        m = re.match(r"^([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*)$", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, value = m.group(1), m.group(2), m.group(3)
        if path not in allowed:
            raise bad_request(f"field label not supported: {path}")
        reqs.append(FieldRequirement(path, op != "!=", value))
    return reqs


def field_value(obj: JSON, path: str) -> str:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, dict):
            return ""
        current = current.get(part)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    if isinstance(current, dict):
        # `source` on events selects on source.component.
        return str(current.get("component", ""))
    return str(current)


def fields_match(reqs: list[FieldRequirement], obj: JSON) -> bool:
    return all((field_value(obj, r.path) == r.value) == r.equal for r in reqs)


def make_filter(
    label_selector: str | None, field_selector: str | None, allowed: frozenset[str]
) -> Callable[[JSON], bool]:
    label_reqs = parse_label_selector(label_selector or "")
    field_reqs = parse_field_selector(field_selector or "", allowed)

    def accept(obj: JSON) -> bool:
        return labels_match(label_reqs, obj) and fields_match(field_reqs, obj)

    return accept
