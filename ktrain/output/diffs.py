"""`job diff`'s text: each object as YAML (keys sorted, as kubectl prints them), a unified diff
per object that differs, and the files `KUBECTL_EXTERNAL_DIFF` programs compare."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from ktrain.output.yamltext import dump

if TYPE_CHECKING:
    from typing import Any


def sorted_keys(value: Any) -> Any:
    """`value` with every mapping's keys in order: both sides print the same way whatever order
    the server or the render gave."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def object_text(obj: Any) -> str:
    """The object as YAML; an absent object as nothing (diff -N's empty file)."""
    if obj is None:
        return ""

    return dump(sorted_keys(obj))


def unified(file_name: str, live: Any, merged: Any) -> str:
    """`diff -u -N LIVE/<file> MERGED/<file>` of one object, without timestamps ("" when equal)."""
    before, after = object_text(live), object_text(merged)
    if before == after:
        return ""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"LIVE/{file_name}",
        tofile=f"MERGED/{file_name}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return f"diff -u -N LIVE/{file_name} MERGED/{file_name}\n{text}"
