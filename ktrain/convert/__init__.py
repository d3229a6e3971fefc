"""Training Operator v1 jobs -> Trainer v2 TrainJobs (`ktrain job convert`, and `-f v1.yaml`).

Pure: parsed documents in, plain dicts and a per-job report out (no I/O, no printing).
"""

from __future__ import annotations

from ktrain.convert.kinds import KINDS, is_v1_job, supported_text
from ktrain.convert.v1 import Conversion, convert
from ktrain.inputs.documents import Document, Path


def job_paths(doc: Document) -> list[Path]:
    """Where the v1 jobs of a document are: the document itself, or each item of a `List`."""
    data = doc.data
    if (isinstance(data, dict) and data.get("kind") == "List") or (
        isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and "items" in data
    ):
        items = data.get("items")
        if not isinstance(items, list):
            raise doc.error("a List needs items (a list)", ("items",))
        return [("items", i) for i, item in enumerate(items) if is_v1_job(item)]
    return [()] if is_v1_job(data) else []


def list_leftovers(doc: Document) -> list[str]:
    """Items of a `List` that are not v1 jobs (they are not converted; the caller says so)."""
    data = doc.data
    if not (
        isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and isinstance(data.get("items"), list)
    ):
        return []
    out = []
    for i, item in enumerate(data["items"]):
        if not is_v1_job(item):
            kind = item.get("kind", "an item") if isinstance(item, dict) else "an item"
            line = doc.positions.get(("items", i), (None,))[0]
            out.append(f"{doc.file}:{line or 1}: List item {i + 1} ({kind}) is not a v1 job: left out")
    return out


def convert_documents(docs: list[Document], *, runtime: str | None = None) -> list[Conversion]:
    """Every v1 job of the documents, converted (a TrainJob is left alone: it needs no conversion)."""
    out = []
    for doc in docs:
        for path in job_paths(doc):
            item = doc.data
            for part in path:
                item = item[part]
            if isinstance(item, dict) and item.get("kind") == "TrainJob":
                continue
            out.append(convert(doc, path, runtime=runtime))
    return out


__all__ = [
    "KINDS",
    "Conversion",
    "convert",
    "convert_documents",
    "is_v1_job",
    "job_paths",
    "list_leftovers",
    "supported_text",
]
