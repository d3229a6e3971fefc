"""managedFields bookkeeping and server-side apply.

Ownership is tracked per leaf: maps are walked key by key, while lists and scalars are leaves
(every list is treated as atomic, unlike the real structured-merge-diff which merges lists marked
`x-kubernetes-list-type: map`). Conflict errors copy the wording and shape of
k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import ApiError

JSON = dict[str, Any]
FieldPath = tuple[str, ...]

# Fields the field manager never tracks (fieldmanager's stripMeta set).
_STRIPPED_TOP = {"apiVersion", "kind"}
_STRIPPED_META = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
}
_MISSING = object()


def leaves(obj: JSON | None) -> dict[FieldPath, Any]:
    """Flatten an object into {path: value} for every non-map value (and empty maps)."""
    out: dict[FieldPath, Any] = {}
    if not obj:
        return out

    def walk(node: JSON, prefix: FieldPath) -> None:
        for key, value in node.items():
            if not prefix and key in _STRIPPED_TOP:
                continue
            if prefix == ("metadata",) and key in _STRIPPED_META:
                continue
            path = (*prefix, key)
            if isinstance(value, dict) and value:
                walk(value, path)
            elif not (prefix == () and key == "metadata" and isinstance(value, dict)):
                out[path] = value

    walk(obj, ())
    return out


def path_string(path: FieldPath) -> str:
    return "".join(f".{part}" for part in path)


def _overlaps(a: FieldPath, b: FieldPath) -> bool:
    shorter = min(len(a), len(b))
    return a[:shorter] == b[:shorter]


def to_fields_v1(paths: Iterable[FieldPath]) -> JSON:
    tree: JSON = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return tree


def from_fields_v1(tree: Any) -> set[FieldPath]:
    paths: set[FieldPath] = set()

    def walk(node: Any, prefix: FieldPath) -> None:
        keys = [k for k in node if isinstance(k, str)] if isinstance(node, dict) else []
        children = [k for k in keys if k.startswith("f:")]
        keyed = any(k[:2] in ("k:", "v:", "i:") for k in keys)
        if (not children or keyed) and prefix:
            # A list entry key (k:/v:/i:) means the list is owned; we treat lists atomically.
            paths.add(prefix)
            return
        for key in children:
            walk(node[key], (*prefix, key[2:]))

    walk(tree, ())
    return paths


@dataclass
class Entry:
    manager: str
    operation: str  # "Apply" or "Update"
    api_version: str
    time: str
    subresource: str = ""
    fields: set[FieldPath] = field(default_factory=set)

    def to_json(self) -> JSON:
        out: JSON = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": to_fields_v1(self.fields),
        }
        if self.subresource:
            out["subresource"] = self.subresource
        return out

    def printed(self) -> str:
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


def parse_entries(obj: JSON | None) -> list[Entry]:
    if not obj:
        return []
    out: list[Entry] = []
    for raw in (obj.get("metadata") or {}).get("managedFields") or []:
        if not isinstance(raw, dict) or not raw.get("manager"):
            continue
        out.append(
            Entry(
                manager=str(raw["manager"]),
                operation=str(raw.get("operation", "Update")),
                api_version=str(raw.get("apiVersion", "")),
                time=str(raw.get("time", "")),
                subresource=str(raw.get("subresource", "")),
                fields=from_fields_v1(raw.get("fieldsV1") or {}),
            )
        )
    return out


def _store(obj: JSON, entries: list[Entry]) -> None:
    kept = [e.to_json() for e in entries if e.fields]
    meta = obj.setdefault("metadata", {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def record_update(old: JSON | None, new: JSON, manager: str, api_version: str, now: str, subresource: str = "") -> None:
    """Give `manager` (operation Update) the fields this write changed; others lose them."""
    entries = parse_entries(old)
    old_leaves = leaves(old)
    new_leaves = leaves(new)
    changed = {p for p, v in new_leaves.items() if old_leaves.get(p, _MISSING) != v}
    for entry in entries:
        entry.fields = {p for p in entry.fields if p in new_leaves and p not in changed}
    mine = next(
        (
            e
            for e in entries
            if e.manager == manager
            and e.operation == "Update"
            and e.api_version == api_version
            and e.subresource == subresource
        ),
        None,
    )
    if changed:
        if mine is None:
            mine = Entry(manager, "Update", api_version, now, subresource)
            entries.append(mine)
        mine.fields |= changed
        mine.time = now
    _store(new, entries)


def _get(obj: JSON, path: FieldPath) -> Any:
    node: Any = obj
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _set(obj: JSON, path: FieldPath, value: Any) -> None:
    node = obj
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[path[-1]] = copy.deepcopy(value)


def _delete(obj: JSON, path: FieldPath) -> None:
    chain: list[JSON] = [obj]
    node: Any = obj
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return
        chain.append(node)
    chain[-1].pop(path[-1], None)
    # Remove maps the deletion left empty, but keep the top-level skeleton (metadata, spec).
    for depth in range(len(chain) - 1, 1, -1):
        if chain[depth]:
            break
        chain[depth - 1].pop(path[depth - 1], None)


def conflict_error(conflicts: list[tuple[Entry, FieldPath]]) -> ApiError:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.printed()}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {entry.printed()}: {path_string(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(entry.printed(), []).append(path_string(path))
        lines: list[str] = []
        for printed in sorted(by_manager):
            lines.append(f"conflicts with {printed}:")
            lines.extend(f"- {p}" for p in by_manager[printed])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, message, "Conflict", {"causes": causes})


def apply(
    live: JSON | None,
    applied: JSON,
    manager: str,
    force: bool,
    now: str,
    subresource: str = "",
) -> JSON:
    """Server-side apply of `applied` onto `live` (None: create). Raises a 409 on conflicts."""
    entries = parse_entries(live)
    live_leaves = leaves(live)
    if live is not None and not entries and live_leaves:
        # Objects written without field management are owned by this pseudo-manager.
        entries = [Entry("before-first-apply", "Update", str(live.get("apiVersion", "")), now, "", set(live_leaves))]
    applied_leaves = leaves(applied)
    mine = next(
        (e for e in entries if e.manager == manager and e.operation == "Apply" and e.subresource == subresource),
        None,
    )
    conflicts: list[tuple[Entry, FieldPath]] = []
    for entry in entries:
        if entry is mine:
            continue
        for owned in sorted(entry.fields):
            for path, value in applied_leaves.items():
                if owned == path:
                    differs = live_leaves.get(owned, _MISSING) != value
                elif _overlaps(owned, path):
                    differs = True  # the apply changes the shape under an owned field
                else:
                    continue
                if differs:
                    conflicts.append((entry, owned))
                    break
    if conflicts and not force:
        raise conflict_error(conflicts)
    for entry, owned in conflicts:
        entry.fields.discard(owned)

    merged: JSON = copy.deepcopy(live) if live is not None else {}
    previously_mine = mine.fields if mine is not None else set()
    owned_by_others: set[FieldPath] = set()
    for entry in entries:
        if entry is not mine:
            owned_by_others |= entry.fields
    for path in previously_mine - set(applied_leaves):
        if path in owned_by_others or any(_overlaps(path, p) for p in applied_leaves):
            continue
        _delete(merged, path)
    for path, value in applied_leaves.items():
        _set(merged, path, value)
    for key in ("apiVersion", "kind"):
        if key in applied:
            merged[key] = applied[key]

    api_version = str(applied.get("apiVersion", ""))
    if mine is None:
        mine = Entry(manager, "Apply", api_version, now, subresource)
        entries.append(mine)
    if mine.fields != set(applied_leaves) or mine.api_version != api_version:
        mine.time = now
    mine.fields = set(applied_leaves)
    mine.api_version = api_version
    merged_leaves = leaves(merged)
    for entry in entries:
        if entry is not mine:
            entry.fields = {p for p in entry.fields if p in merged_leaves}
    _store(merged, entries)
    return merged
