"""The runtime a TrainJob names, looked up as the TrainJob webhook does, and its own rules."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.validation import runtime_not_found
from ktrain.errors import (
    InputError,
    RuntimeNotFoundError,
    UsageError,
    ValidationFailedError,
)
from ktrain.inputs.documents import (
    Document,
    locate_field_errors,
)
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.util.jsondata import Obj


def is_torchtune_runtime(runtime: TrainingRuntime) -> bool:
    labels = runtime.metadata.labels or {}
    return labels.get(c.LABEL_FRAMEWORK) == "torchtune"


def resolve_runtime(
    registry: RuntimeRegistry,
    data: Obj,
    override: str | None,
    doc: Document | None = None,
    *,
    kind_chosen: bool = False,
) -> RuntimeEntry:
    """The runtime the TrainJob names, looked up by kind and name as the TrainJob webhook does.

    The kind is `spec.runtimeRef.kind` (CRD default ClusterTrainingRuntime). With `--runtime NAME`
    it is whichever kind the highest-precedence source holds, unless `kind_chosen` (the kind was
    set for this command: `--runtime-kind`, `--set runtimeRef.kind=...`). A runtime of that name found only under
    the other kind, or held under the other kind by a `--runtime-file`, refuses the job with the
    webhook's not-found message (upstream `pkg/runtime/core/{,cluster}trainingruntime.go`
    ValidateObjects), pointing at `runtimeRef.kind`."""
    ref = (data.get("spec") or {}).get("runtimeRef") or {}
    name = override or ref.get("name")
    if not name:
        raise UsageError(
            "no runtime given: pass --runtime NAME or set spec.runtimeRef.name in the job file",
            hint="see `ktrain runtime list`",
        )
    if len(str(name)) > 253:  # the CRD's maxLength; no runtime can have such a name
        message = "Too long: may not be more than 253 bytes"
        if override or doc is None:
            raise InputError(f"--runtime: {message}", file="--runtime")
        raise doc.error(f"spec.runtimeRef.name: {message}", ("spec", "runtimeRef", "name"))
    name = str(name)
    kind = None if override and not kind_chosen else (ref.get("kind") or c.CLUSTER_TRAINING_RUNTIME_KIND)
    entry = registry.find(name, kind)
    if kind is not None and kind not in c.RUNTIME_KINDS:
        # an unsupported kind: validate_runtime_ref reports the webhook's "unsupported runtime"
        entry = entry or registry.find(name)
    elif kind is not None:
        other = registry.find(name, next(k for k in c.RUNTIME_KINDS if k != kind))
        if other is not None and (entry is None or (other.source == "file" and entry.source != "file")):
            raise _kind_mismatch(kind, name, other, doc, stated=bool(ref.get("kind")))
    if entry is None:
        try:
            return registry.get(name, kind)
        except RuntimeNotFoundError as exc:
            if kind in c.RUNTIME_KINDS:
                # The job file names the runtime: say it as the TrainJob webhook does (V2/V3).
                exc.message = f"{exc.message}\n{runtime_not_found(kind, name)}"
                exc.args = (exc.message,)
            if doc is not None and not override:  # the name came from the file: point at it
                line, col = doc.locate(("spec", "runtimeRef", "name"))
                if line is not None:
                    exc.at(doc.file, line, col, doc.source_line(line))
            raise
    return entry


def _kind_mismatch(
    kind: str, name: str, other: RuntimeEntry, doc: Document | None, *, stated: bool
) -> RuntimeNotFoundError:
    """The webhook's refusal of a runtimeRef whose kind names no runtime we have, while a runtime
    of that name exists under the other kind."""
    where = f"{other.path} holds" if other.source == "file" and other.path else f"there is ({other.origin})"
    hint = (
        f"{where} a {other.runtime.kind} named {name!r}, not a {kind}: set spec.runtimeRef.kind: {other.runtime.kind}"
    )
    if not stated:
        hint += f" (runtimeRef.kind defaults to {c.CLUSTER_TRAINING_RUNTIME_KIND})"
    exc = RuntimeNotFoundError(f"{kind} {name!r} not found\n{runtime_not_found(kind, name)}", hint=hint)
    if doc is not None:
        line, col = doc.locate(("spec", "runtimeRef", "kind"))
        if line is not None:
            exc.at(doc.file, line, col, doc.source_line(line))
    return exc


def check_runtime(entry: RuntimeEntry, *, allow_extensions: bool) -> None:
    """The runtime's own CRD and webhook rules, reported against the runtime's file (the engine
    checks them again; here they are located where the user can fix them)."""
    from ktrain.engine.validation import (
        validate_runtime_schema,
        validate_runtime_webhook,
    )

    runtime = entry.runtime
    errors = validate_runtime_schema(runtime, allow_extensions=allow_extensions) + validate_runtime_webhook(runtime)
    if errors:
        exc = ValidationFailedError(errors, subject=f"{runtime.kind} {runtime.name}")
        add_extension_hint(exc, runtime, allow_extensions=allow_extensions)
        if entry.document is not None:
            locate_field_errors(exc, entry.document)
        raise exc


MPI_EXTENSIONS = ("Intel", "MPICH")


def add_extension_hint(exc: ValidationFailedError, runtime: TrainingRuntime, *, allow_extensions: bool) -> None:
    """An Intel MPI or MPICH runtime is refused as the Trainer CRD refuses it; ktrain can render
    it as an extension, and says how."""
    mpi = runtime.spec.ml_policy.mpi if runtime.spec.ml_policy is not None else None
    if allow_extensions or mpi is None or mpi.mpi_implementation not in MPI_EXTENSIONS:
        return
    if any(e.path == "spec.mlPolicy.mpi.mpiImplementation" for e in exc.errors):
        exc.hint = (
            f"{mpi.mpi_implementation} hostfiles are a ktrain extension (the Trainer v2.3 CRD accepts only "
            "OpenMPI): add --allow-extensions to render, validate or create it"
        )


def is_runtime_path(path: str) -> bool:
    # A TrainJob has no spec.template/mlPolicy/podGroupPolicy: such paths are the runtime's.
    return path.startswith(("spec.template", "spec.mlPolicy", "spec.podGroupPolicy"))
