"""A job file and/or flags → the TrainJob as it will be submitted, and its runtime."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import UsageError
from ktrain.inputs.documents import (
    Document,
    Path,
    check_types,
    parse_model,
)
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry
from ktrain.service.code import apply_code, launcher_command
from ktrain.service.conversion import conversion_note, converted_runtime_entry
from ktrain.service.job_file import load_job_input, reject_template_inputs, same_file_runtimes
from ktrain.service.naming import derive_name
from ktrain.service.overrides import apply_overrides, apply_runtime_aware_flags, ensure
from ktrain.service.requests import RenderRequest
from ktrain.service.runtimes import check_runtime, resolve_runtime
from ktrain.util.jsondata import deep_copy

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.api.trainjob import TrainJob
    from ktrain.authoring.set_paths import Assignment
    from ktrain.util.jsondata import Obj


def build_job(request: RenderRequest, registry: RuntimeRegistry) -> tuple[TrainJob, RuntimeEntry, Document | None]:
    doc, entry = job_document(request, registry)
    job = parse_model(doc, "TrainJob", what="TrainJob")
    # without a file, errors can still point into --patch files
    return job, entry, (doc if request.file or doc.grafts else None)


def job_document(request: RenderRequest, registry: RuntimeRegistry) -> tuple[Document, RuntimeEntry]:
    """The TrainJob mapping as it will be submitted (file, template, --set and flags applied,
    name derived), with the file's positions for errors; and its runtime."""
    ov = request.overrides
    doc: Document | None = None
    job_sets: list[Assignment] = []
    template_sets: list[Assignment] = []
    if ov.sets:  # setpath is loaded only when --set is used
        from ktrain.authoring.set_paths import is_job_path, parse_assignment

        for assignment in map(parse_assignment, ov.sets):
            (job_sets if is_job_path(assignment.parts) else template_sets).append(assignment)
    original = None
    conversion = None
    if request.document is not None:
        reject_template_inputs(request.file, ov.values_files, template_sets)
        doc = request.document
    elif request.file:
        doc, conversion = load_job_input(
            request.file, ov.values_files, template_sets, ov.runtime, warnings=request.input_warnings, text=request.text
        )
    if doc is not None:
        if doc.siblings:
            registry.add_converted(same_file_runtimes(doc))
        if conversion is not None:
            entry_rt = converted_runtime_entry(conversion)
            if entry_rt is not None:
                registry.add_converted([entry_rt])
            note = conversion_note(conversion)
            if note not in request.notes:
                request.notes.append(note)
            request.source_labels = conversion.source_labels()
        # The flags below read and write into the file's mapping: its types must hold first.
        check_types(doc, "TrainJob", what="TrainJob")
        data: Obj = doc.data
        original = deep_copy(data)
    else:
        reject_template_inputs(None, ov.values_files, template_sets)
        data = {}
    for assignment in job_sets:
        from ktrain.authoring.set_paths import apply_assignment

        apply_assignment(data, assignment, "TrainJob")
    if job_sets:
        check_types(doc if doc is not None else Document(data=data, file="--set"), "TrainJob", what="TrainJob")
    if not request.file and not ov.runtime and not job_sets:
        from_files = [e.runtime.name for e in registry.all_entries() if e.source == "file"]
        hint = "e.g. --runtime torch-distributed --nodes 2 -- torchrun train.py"
        if from_files:  # --runtime-file only loads runtimes; --runtime picks one (issue #19)
            hint = "--runtime-file defines " + ", ".join(from_files) + f": pick one with --runtime {from_files[0]}"
        raise UsageError("no job given: pass a job file with -f, or --runtime NAME", hint=hint)
    kind_chosen = False  # a kind chosen for this command (--runtime-kind, --set runtimeRef.kind) is honoured
    if ov.runtime_kind:
        if ov.runtime_kind not in c.RUNTIME_KINDS:
            raise UsageError(
                f"--runtime-kind must be {' or '.join(c.RUNTIME_KINDS)}, got {ov.runtime_kind!r}",
            )
        ensure(data, "spec", "runtimeRef")["kind"] = ov.runtime_kind
        kind_chosen = True
    elif job_sets:
        from ktrain.authoring.set_paths import absolute

        kind_chosen = any(absolute(a.parts) == ("spec", "runtimeRef", "kind") for a in job_sets)
    # A namespaced TrainingRuntime is looked up where the job will live (-n, else the file's).
    meta_ns = (data.get("metadata") or {}).get("namespace") if isinstance(data.get("metadata"), dict) else None
    registry.use_namespace(str(ov.namespace or meta_ns or request.default_namespace))
    entry = resolve_runtime(registry, data, ov.runtime, doc, kind_chosen=kind_chosen)
    # The runtime's own rules first: deriving a name below reads into its template.
    check_runtime(entry, allow_extensions=request.allow_extensions)
    grafts: list[tuple[Path, Document, Path]] = []
    data = apply_overrides(data, ov, entry.runtime.kind if ov.runtime else None, grafts)
    if ov.scheduler is not None:
        from ktrain.authoring.scheduling import check_scheduler

        policy = entry.runtime.spec.pod_group_policy
        gang = None
        if policy is not None:
            gang = (
                "coscheduling" if policy.coscheduling is not None else "volcano" if policy.volcano is not None else None
            )
        check_scheduler(ov.scheduler, allow_extensions=request.allow_extensions, runtime_gang=gang)
    if ov.fine_tuning is not None or ov.node_selector or ov.tolerations or ov.gpus is not None or ov.gpu_type:
        data = apply_runtime_aware_flags(data, ov, entry, registry)
    if ov.checkpoint is not None or "ktrain.io/checkpoint" in ((data.get("metadata") or {}).get("annotations") or {}):
        from ktrain.authoring.failure_policy import add_checkpoint, resolve

        failure = resolve(ov, data)  # --checkpoint: a runtime patch and the trainer's env
        if failure is not None and failure.checkpoint is not None:
            template = {"spec": dict(entry.runtime.spec.template.spec or {})}
            add_checkpoint(data, template, failure.checkpoint, failure.sources["checkpoint"])
    meta = data["metadata"]
    if not meta.get("name"):
        meta["name"] = request.fallback_name or derive_name(entry.runtime, data)
    meta.setdefault("namespace", request.default_namespace)
    if request.entry_file is not None:
        ensure(data["spec"], "trainer")["command"] = launcher_command(
            entry.runtime, request.entry_file, single_process=request.single_process
        )
    if ov.code or ov.pip or ov.requirements or request.code_bundle is not None:
        data = apply_code(data, request, entry)
    if doc is not None:
        return Document(
            data=data,
            file=doc.file,
            lines=doc.lines,
            positions=doc.positions,
            key_positions=doc.key_positions,
            original=original,
            grafts=grafts,
        ), entry
    return Document(data=data, file="<flags>", grafts=grafts), entry
