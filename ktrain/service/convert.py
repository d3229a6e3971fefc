"""`ktrain job convert`: every v1 job of a file converted and checked, the other documents kept.

One job that cannot be converted (a `kubeflow.org/v1beta1` item of a List, a type error) or
whose result would not render does not stop the others: it is reported, and the command exits
non-zero after printing what did convert. Every converted job is rendered in memory the way
`job render` would render what is printed, so what `convert` prints, `render` accepts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ktrain import constants as c
from ktrain.convert import convert, is_v1_job, job_paths, list_leftovers, supported_text
from ktrain.engine import RenderContext, render
from ktrain.engine.validation import validate_runtime_ref
from ktrain.errors import InputError, KtrainError, RuntimeNotFoundError, ValidationFailedError
from ktrain.inputs.documents import load_documents, locate_field_errors, parse_model
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.output.errors import format_error
from ktrain.service.conversion import converted_document, converted_runtime_entry
from ktrain.service.job_file import read_text
from ktrain.service.runtimes import check_runtime, is_runtime_path, resolve_runtime

if TYPE_CHECKING:
    from typing import Any

    from ktrain.convert import Conversion
    from ktrain.inputs.documents import Document, Path
    from ktrain.util.jsondata import Obj


@dataclass
class ConvertFailure:
    """A v1 job that did not convert, or whose conversion would not render."""

    error: KtrainError
    kind: str = ""
    api_version: str = ""
    name: str = ""
    namespace: str | None = None

    def report(self) -> dict[str, Any]:
        """Its entry in `--report json` (`converted: false`, no `runtime` and no `fields`)."""
        return {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "name": self.name,
            "namespace": self.namespace,
            "converted": False,
            "error": format_error(self.error).rstrip("\n"),
        }


@dataclass
class ConvertOutcome:
    conversions: list[Conversion]
    objects: list[Obj]  # what to print, in document order: converted jobs (+ runtimes) and the rest as is
    notes: list[str]  # about the file's other documents
    failures: list[ConvertFailure] = field(default_factory=list)
    # The converted jobs and the failures, in document order.
    items: list[Conversion | ConvertFailure] = field(default_factory=list)

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The JSON report's entries, in document order."""
        return [item.report() for item in self.items]


def convert_file(path: str, runtime: str | None = None) -> ConvertOutcome:
    """Every Training Operator v1 job of a file (one job, several documents, or a `List`),
    converted (`ktrain job convert`). Other documents (a PVC, a ConfigMap) are kept as they are,
    each with a note; a document that is not an object (a scalar, a list) is left out."""
    label = "<stdin>" if path == "-" else path
    docs = load_documents(read_text(path), label)
    outcome = ConvertOutcome(conversions=[], objects=[], notes=[])
    tried = 0
    for i, doc in enumerate(docs):
        line = doc.positions.get((), (None,))[0]
        where = f"{label}:{line}" if line else label
        if not isinstance(doc.data, dict):
            what = "a list" if isinstance(doc.data, list) else "a scalar"
            if doc.data is not None:
                outcome.notes.append(f"{where}: document {i + 1} is {what}, not an object: left out")
            continue
        paths = job_paths(doc)
        outcome.notes += list_leftovers(doc)
        if paths:
            for at in paths:
                item = _get(doc.data, at)
                if isinstance(item, dict) and item.get("kind") == c.TRAINJOB_KIND:
                    continue
                tried += 1
                _convert_one(outcome, doc, at, item, runtime)
            continue
        data = doc.data
        what = f"{data.get('kind', 'a document')} {(data.get('metadata') or {}).get('name', '')}".strip()
        outcome.notes.append(f"{where}: document {i + 1} ({what}) is not a v1 job: kept as it is")
        outcome.objects.append(data)
    if not tried:
        if not docs:
            raise InputError("the file is empty", file=label)
        first = next((d for d in docs if isinstance(d.data, dict)), docs[0])
        kind = first.data.get("kind") if isinstance(first.data, dict) else None
        if kind == c.TRAINJOB_KIND:
            raise first.error("this is already a TrainJob: nothing to convert", ("kind",))
        if not is_v1_job(first.data):
            raise first.error(
                f"no Training Operator v1 job in this file (kind {kind!r}); ktrain converts {supported_text()}",
                ("kind",),
            )
    return outcome


def _get(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def _convert_one(outcome: ConvertOutcome, doc: Document, at: Path, item: Any, runtime: str | None) -> None:
    meta = item.get("metadata") if isinstance(item, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    failure = ConvertFailure(
        error=KtrainError("?"),
        kind=str(item.get("kind", "")) if isinstance(item, dict) else "",
        api_version=str(item.get("apiVersion", "")) if isinstance(item, dict) else "",
        name=str(meta.get("name") or meta.get("generateName") or ""),
        namespace=meta.get("namespace") if isinstance(meta.get("namespace"), str) else None,
    )
    try:
        conv = convert(doc, at, runtime=runtime)
        check_conversion(conv, runtime)
    except KtrainError as exc:
        failure.error = exc
        outcome.failures.append(failure)
        outcome.items.append(failure)
        return
    outcome.conversions.append(conv)
    outcome.objects += [conv.trainjob, *([conv.runtime] if conv.runtime is not None else [])]
    outcome.items.append(conv)


def check_conversion(conv: Conversion, runtime: str | None) -> None:
    """Render the converted job in memory, as `job render` would render what `convert` prints:
    any problem is raised, located in the v1 file. With `--runtime NAME` the job is rendered on
    that runtime when it is known here (bundled or a local runtimes directory)."""
    doc = converted_document(conv)
    registry = RuntimeRegistry()
    entry_rt = converted_runtime_entry(conv)  # a generated runtime that does not parse raises here
    if entry_rt is not None:
        registry.add_converted([entry_rt])
    if conv.namespace:
        registry.use_namespace(conv.namespace)
    try:
        entry = resolve_runtime(registry, doc.data, None, doc)
    except RuntimeNotFoundError:
        if runtime is not None:
            parse_model(doc, "TrainJob", what="TrainJob")  # the TrainJob alone, then
            return
        raise
    check_runtime(entry, allow_extensions=True)
    data = dict(doc.data)
    data["metadata"] = {**data["metadata"], "namespace": conv.namespace or "default"}
    doc.data = data
    job = parse_model(doc, "TrainJob", what="TrainJob")
    try:
        errors = validate_runtime_ref(job, entry.runtime)
        if errors:
            raise ValidationFailedError(errors)
        # An existing Secret stands in for the MPI key pair: nothing random is generated here.
        render(job, entry.runtime, RenderContext(allow_extensions=True, ssh_secret_name=f"{job.name}-ssh"))
    except ValidationFailedError as exc:
        locate_field_errors(exc, doc, only=lambda e: not is_runtime_path(e.path))
        if entry.document is not None:
            locate_field_errors(exc, entry.document, only=lambda e: is_runtime_path(e.path))
        raise
