"""A Training Operator v1 job converted in memory, as the documents the render reads: the TrainJob
and the generated runtime, with positions pointing at the v1 fields they came from.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.inputs.documents import (
    Document,
    Path,
    parse_model,
)
from ktrain.inputs.registry import RuntimeEntry
from ktrain.util.jsondata import deep_copy

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.convert import Conversion


def converted_document(conv: Conversion) -> Document:
    """A converted job as a Document whose positions point at the v1 fields it came from."""
    src = conv.document
    positions: dict[Path, tuple[int, int]] = {}
    key_positions: dict[Path, tuple[int, int]] = {}
    for here, there in conv.sources.items():
        full = (*conv.base, *there)
        if full in src.positions:
            positions[here] = src.positions[full]
        if full in src.key_positions:
            key_positions[here] = src.key_positions[full]
    start = src.positions.get(conv.base) or src.key_positions.get(conv.base)
    if start is not None:
        positions.setdefault((), start)
    return Document(
        data=deep_copy(conv.trainjob),
        file=src.file,
        lines=src.lines,
        positions=positions,
        key_positions=key_positions,
    )


def converted_runtime_entry(conv: Conversion) -> RuntimeEntry | None:
    """The TrainingRuntime generated for a converted job, as a registry entry."""
    if conv.runtime is None:
        return None
    src = conv.document
    positions: dict[Path, tuple[int, int]] = {}
    key_positions: dict[Path, tuple[int, int]] = {}
    for here, there in conv.runtime_sources:
        full = (*conv.base, *there)
        for table, out in ((src.positions, positions), (src.key_positions, key_positions)):
            for path, where in table.items():
                if path[: len(full)] == full:
                    key = (*here, *path[len(full) :])  # (not out[(*a, *b)]: Python 3.11 syntax)
                    out[key] = where
    # Errors in the generated runtime point at the v1 pod template they came from.
    doc = Document(data=conv.runtime, file=src.file, lines=src.lines, positions=positions, key_positions=key_positions)
    runtime = parse_model(doc, "TrainingRuntime", what=c.TRAINING_RUNTIME_KIND)
    return RuntimeEntry(runtime=runtime, source="converted", path=conv.document.file, document=doc)


def conversion_note(conv: Conversion) -> str:
    how = (
        f"a TrainingRuntime {conv.runtime_name} generated from its pod templates"
        if conv.runtime is not None
        else f"runtime {conv.runtime_name}"
    )
    return (
        f"converted {conv.kind} {conv.name} to a TrainJob on {how} "
        f"(see `ktrain job convert -f {conv.document.file}` for what changed)"
    )
