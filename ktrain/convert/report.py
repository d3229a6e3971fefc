"""The migration report: every v1 field, and where it went in v2 (or why it did not)."""

from __future__ import annotations

import json
from dataclasses import dataclass

KEPT = "kept"
APPROXIMATED = "approximated"
DROPPED = "dropped"
STATUSES = (KEPT, APPROXIMATED, DROPPED)


@dataclass(frozen=True)
class Row:
    field: str  # the v1 field, e.g. spec.pytorchReplicaSpecs.Worker.replicas
    status: str  # kept | approximated | dropped
    target: str  # where it went: "TrainJob spec.trainer.numNodes", "runtime ...", "runtimePatches ...", or "-"
    note: str = ""


def format_table(title: str, rows: list[Row]) -> str:
    """A plain-text table (stderr; no colours, stable for tests and copy-paste)."""
    headers = ("V1 FIELD", "STATUS", "V2", "NOTE")
    cells = [(r.field, r.status, r.target, r.note) for r in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers[:3])]
    lines = [title]

    def line(values: tuple[str, ...]) -> str:
        head = "  ".join(v.ljust(widths[i]) for i, v in enumerate(values[:3]))
        return (head + "  " + values[3]).rstrip()

    lines.append(line(headers))
    lines.extend(line(row) for row in cells)
    counts = {s: sum(1 for r in rows if r.status == s) for s in STATUSES}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines) + "\n"


def as_json(reports: list[dict[str, object]]) -> str:
    return json.dumps(reports, indent=2) + "\n"
