"""`ktrain job convert`: every v1 job of a file converted, the other documents kept."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import InputError
from ktrain.inputs.documents import load_documents
from ktrain.service.job_file import read_text
from ktrain.util.structs import struct

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from ktrain.convert import Conversion

    Obj = dict[str, Any]


@struct
class ConvertOutcome:
    conversions: list[Conversion]
    objects: list[Obj]  # what to print, in document order: converted jobs (+ runtimes) and the rest as is
    notes: list[str]


def convert_file(path: str, runtime: str | None = None) -> ConvertOutcome:
    """Every Training Operator v1 job of a file (one job, several documents, or a `List`),
    converted (`ktrain job convert`). Other documents (a PVC, a ConfigMap) are kept as they are,
    each with a note."""
    from ktrain.convert import convert_documents, list_leftovers, supported_text

    label = "<stdin>" if path == "-" else path
    docs = load_documents(read_text(path), label)
    outcome = ConvertOutcome(conversions=[], objects=[], notes=[])
    for i, doc in enumerate(docs):
        converted = convert_documents([doc], runtime=runtime)
        outcome.notes += list_leftovers(doc)
        if converted:
            outcome.conversions += converted
            for conv in converted:
                outcome.objects += [conv.trainjob, *([conv.runtime] if conv.runtime is not None else [])]
            continue
        data = doc.data if isinstance(doc.data, dict) else {}
        what = f"{data.get('kind', 'a document')} {(data.get('metadata') or {}).get('name', '')}".strip()
        line = doc.positions.get((), (None,))[0]
        outcome.notes.append(f"{label}:{line or 1}: document {i + 1} ({what}) is not a v1 job: kept as it is")
        outcome.objects.append(doc.data)
    if not outcome.conversions:
        if not docs:
            raise InputError("the file is empty", file=label)
        first = docs[0]
        kind = first.data.get("kind") if isinstance(first.data, dict) else None
        if kind == c.TRAINJOB_KIND:
            raise first.error("this is already a TrainJob: nothing to convert", ("kind",))
        raise first.error(
            f"no Training Operator v1 job in this file (kind {kind!r}); ktrain converts {supported_text()}", ("kind",)
        )
    return outcome
