"""Use cases: turn a job file and/or flags into a TrainJob, resolve its runtime, render.

Composes the loader, the registry and the engine; never prints.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from typing import TYPE_CHECKING, Any

from ktrain import constants as c
from ktrain.engine import RenderContext, RenderResult, render
from ktrain.engine.validation import runtime_not_found, validate_runtime_ref
from ktrain.errors import (
    InputError,
    RuntimeNotFoundError,
    UsageError,
    ValidationFailedError,
)
from ktrain.inputs.documents import (
    Document,
    Path,
    check_types,
    load_documents,
    locate_field_errors,
    parse_model,
)
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry
from ktrain.util.structs import field, struct

try:  # CPython's own SHA-256: hashlib would first load OpenSSL (4 ms of a cold render)
    from _sha2 import sha256  # Python >= 3.12
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.10, 3.11
    except ImportError:
        from hashlib import sha256

if TYPE_CHECKING:
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.api.trainjob import TrainJob
    from ktrain.authoring.set_paths import Assignment

Obj = dict[str, Any]


@struct
class JobOverrides:
    """What the command line says about the job (every field optional)."""

    runtime: str | None = None
    name: str | None = None
    namespace: str | None = None
    nodes: int | None = None
    nproc_per_node: int | None = None
    image: str | None = None
    command: list[str] | None = None
    env: list[tuple[str, str]] = field(default_factory=list)
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    dataset: str | None = None
    model: str | None = None
    dataset_secret: str | None = None
    model_secret: str | None = None
    queue: str | None = None
    suspend: bool | None = None
    patch_files: list[str] = field(default_factory=list)
    # `--values FILE` (template variables) and `--set PATH=VALUE` (job fields or template variables).
    values_files: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)


@struct
class RenderRequest:
    file: str | None = None
    overrides: JobOverrides = field(default_factory=JobOverrides)
    ssh_secret: str | None = None
    allow_extensions: bool = False
    runtime_snapshot: bool = False
    # When neither -n nor the file names one: the kubeconfig context's namespace for `job create`.
    default_namespace: str = "default"


@struct
class RenderOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    result: RenderResult
    document: Document | None = None
    secret_printed: bool = False
    ctx: RenderContext | None = None  # what the engine was given (--explain renders again with it)


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", file=path) from None


def load_job_document(
    path: str, values_files: list[str] | None = None, template_sets: list[Assignment] | None = None
) -> Document:
    """The TrainJob document of a file; a template is rendered first with the given values."""
    from ktrain.authoring.templating import is_template

    label = "<stdin>" if path == "-" else path
    text = read_text(path)
    if is_template(path, text):
        from ktrain.authoring.set_paths import nest, template_value
        from ktrain.authoring.templating import load_values, render_template, rendered_label

        values = load_values([(f, read_text(f)) for f in values_files or []])
        for assignment in template_sets or []:
            nest(values, *template_value(assignment))
        rendered = render_template(text, label, values)
        docs = load_documents(rendered, rendered_label(label, text, rendered))
    else:
        _reject_template_inputs(label, values_files, template_sets)
        docs = load_documents(text, label)
    jobs = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == c.TRAINJOB_KIND]
    if not jobs:
        if docs:
            raise docs[0].error(
                "no TrainJob in this file (kind: TrainJob, apiVersion: trainer.kubeflow.org/v1alpha1)", ("kind",)
            )
        raise InputError("the file is empty", file=path)
    if len(jobs) > 1:
        raise jobs[1].error("more than one TrainJob in this file; ktrain renders one job at a time")
    return jobs[0]


def _reject_template_inputs(
    file: str | None, values_files: list[str] | None, template_sets: list[Assignment] | None
) -> None:
    """--values and non-job --set keys only mean something for a template."""
    what = f"{file} is not a template" if file else "there is no job template (-f)"
    if values_files:
        raise UsageError(
            f"--values needs a job template: {what}", hint="a template is a *.j2 file or one that uses {{ ... }}"
        )
    for assignment in template_sets or []:
        from ktrain.authoring.set_paths import closest_field

        head = str(assignment.parts[0])
        close = closest_field(head)
        raise InputError(
            f"{head!r} is not a TrainJob field, and {what} that could use it as a value",
            file="--set",
            column=1,
            source_line=assignment.text,
            hint=f"did you mean {close!r}?"
            if close
            else "job fields: trainer.numNodes, trainer.env[name=X].value, runtimeRef.name, ...",
        )


def _ensure(d: Obj, *keys: str) -> Obj:
    for k in keys:
        nxt = d.get(k)
        if not isinstance(nxt, dict):
            nxt = {}
            d[k] = nxt
        d = nxt
    return d


def _upsert_env(envs: list[Obj], name: str, value: str) -> None:
    for env in envs:
        if env.get("name") == name:
            env.clear()
            env.update({"name": name, "value": value})
            return
    envs.append({"name": name, "value": value})


def _patch_documents(paths: list[str]) -> list[tuple[Obj, Document, Path]]:
    """Each runtime patch of the --patch files, with its document and where the patch's
    `trainingRuntimeSpec` is in it (the root, for a bare trainingRuntimeSpec)."""
    patches = []
    used: set[str] = set()
    for i, path in enumerate(paths):
        docs = load_documents(read_text(path), path)
        for doc in docs:
            data = doc.data
            if not isinstance(data, dict):
                raise doc.error("a runtime patch must be a mapping")
            if "trainingRuntimeSpec" not in data and "manager" not in data:
                data = {"trainingRuntimeSpec": data}  # a bare trainingRuntimeSpec is fine too
            manager = data.get("manager")
            if not manager:
                manager = (
                    c.DEFAULT_PATCH_MANAGER
                    if c.DEFAULT_PATCH_MANAGER not in used
                    else f"{c.DEFAULT_PATCH_MANAGER}-{i + 1}"
                )
            used.add(str(manager))
            patch = {"manager": manager, **{k: v for k, v in data.items() if k != "manager"}}
            bare = data is not doc.data
            _check_patch(doc, patch, bare=bare)
            patches.append((patch, doc, () if bare else ("trainingRuntimeSpec",)))
    return patches


def _check_patch(doc: Document, patch: Obj, *, bare: bool) -> None:
    """A --patch file is checked against the RuntimePatch model with its own positions, so a
    typo is reported in the patch file, not somewhere in the job."""
    if bare:
        parse_model(doc, "TrainingRuntimeSpecPatch", what="runtime patch (trainingRuntimeSpec)")
    else:
        parse_model(
            Document(
                data=patch, file=doc.file, lines=doc.lines, positions=doc.positions, key_positions=doc.key_positions
            ),
            "RuntimePatch",
            what="runtime patch",
        )


def apply_overrides(
    data: Obj, ov: JobOverrides, runtime_kind: str | None, grafts: list[tuple[Path, Document, Path]] | None = None
) -> Obj:
    """Command-line flags on top of a TrainJob mapping (flags win over the file). Where each
    --patch file's patch lands is added to `grafts` (see Document.grafts)."""
    data = copy.deepcopy(data)
    data.setdefault("apiVersion", c.TRAINER_API_VERSION)
    data.setdefault("kind", c.TRAINJOB_KIND)
    meta = _ensure(data, "metadata")
    if ov.name:
        meta["name"] = ov.name
    if ov.namespace:
        current = meta.get("namespace")
        if current and current != ov.namespace:
            raise UsageError(
                f"the namespace from the provided object {current!r} does not match the namespace "
                f"{ov.namespace!r}. You must pass '--namespace={current}' to perform this operation."
            )
        meta["namespace"] = ov.namespace
    spec = _ensure(data, "spec")
    if ov.runtime:
        ref = _ensure(spec, "runtimeRef")
        ref["name"] = ov.runtime
        if runtime_kind:
            ref["kind"] = runtime_kind
    if ov.suspend is not None:
        spec["suspend"] = ov.suspend
    trainer_set = any(
        [
            ov.nodes is not None,
            ov.nproc_per_node is not None,
            ov.image,
            ov.command is not None,
            ov.env,
            ov.requests,
            ov.limits,
        ]
    )
    if trainer_set:
        trainer = _ensure(spec, "trainer")
        if ov.nodes is not None:
            trainer["numNodes"] = ov.nodes
        if ov.nproc_per_node is not None:
            trainer["numProcPerNode"] = ov.nproc_per_node
        if ov.image:
            trainer["image"] = ov.image
        if ov.command is not None:
            trainer["command"] = list(ov.command)
        if ov.env:
            envs = trainer.setdefault("env", [])
            for k, v in ov.env:
                _upsert_env(envs, k, v)
        if ov.requests or ov.limits:
            res = _ensure(trainer, "resourcesPerNode")
            if ov.requests:
                _ensure(res, "requests").update(ov.requests)
            if ov.limits:
                _ensure(res, "limits").update(ov.limits)
    for kind, uri, secret in (("dataset", ov.dataset, ov.dataset_secret), ("model", ov.model, ov.model_secret)):
        if uri is not None or secret is not None:
            source = _ensure(spec, "initializer", kind)
            if uri is not None:
                source["storageUri"] = uri
            if secret is not None:
                source["secretRef"] = {"name": secret}
    from_files = _patch_documents(ov.patch_files)
    patches = [patch for patch, _, _ in from_files]
    first = len(spec.get("runtimePatches") or [])
    for offset, (_, doc, spec_path) in enumerate(from_files):
        if grafts is not None:
            here = ("spec", "runtimePatches", first + offset)
            grafts += [((*here, "trainingRuntimeSpec"), doc, spec_path), (here, doc, ())]
    flag_meta: Obj = {}
    if ov.labels:
        flag_meta["labels"] = dict(ov.labels)
    annotations = dict(ov.annotations)
    if ov.queue is not None:
        annotations[c.VOLCANO_QUEUE_ANNOTATION] = ov.queue
    if annotations:
        flag_meta["annotations"] = annotations
    if flag_meta:
        # Labels, annotations and the Volcano queue reach the JobSet only through a runtime
        # patch, as upstream expects (ENGINE.md §4.1, §7.2).
        patches.append(
            {
                "manager": f"{c.DEFAULT_PATCH_MANAGER}-flags",
                "trainingRuntimeSpec": {"template": {"metadata": flag_meta}},
            }
        )
    if patches:
        spec.setdefault("runtimePatches", [])
        spec["runtimePatches"].extend(patches)
    return data


def _max_name_length(runtime: TrainingRuntime, data: Obj) -> int:
    """Longest TrainJob name for which JobSet's job and pod names stay <= 63 chars (§11.4)."""
    trainer = (data.get("spec") or {}).get("trainer") or {}
    nodes = trainer.get("numNodes") if isinstance(trainer.get("numNodes"), int) else None
    worst = 0
    for rjob in runtime.spec.template.spec.get("replicatedJobs") or []:
        par = ((rjob.get("template") or {}).get("spec") or {}).get("parallelism") or 1
        count = max(nodes or 1, runtime.spec.ml_policy.num_nodes or 1 if runtime.spec.ml_policy else 1, par)
        replicas = rjob.get("replicas") or 1
        worst = max(worst, len(str(rjob.get("name"))) + len(str(replicas - 1)) + len(str(max(count - 1, 0))) + 9)
    return min(63, 63 - worst)


def derive_name(runtime: TrainingRuntime, data: Obj) -> str:
    """A stable name from the job's content: same input, same name (GitOps-friendly)."""
    digest = sha256(json.dumps(data.get("spec"), sort_keys=True).encode()).hexdigest()[:8]
    prefix = re.sub(r"[^a-z0-9-]+", "-", runtime.name.lower()).strip("-")
    prefix = re.sub(r"-(distributed)$", "", prefix) or "job"
    if not prefix[0].isalpha():
        prefix = "job-" + prefix
    limit = max(_max_name_length(runtime, data), 10)
    room = limit - len(digest) - 1
    prefix = prefix[:room].rstrip("-") if room > 0 else ""
    return f"{prefix}-{digest}" if prefix else f"j{digest}"


def resolve_runtime(
    registry: RuntimeRegistry, data: Obj, override: str | None, doc: Document | None = None
) -> RuntimeEntry:
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
    kind = None if override else ref.get("kind", c.CLUSTER_TRAINING_RUNTIME_KIND)
    entry = registry.find(str(name), kind)
    if entry is None and kind is not None:
        # A file's runtimeRef may name a runtime we only have under the other kind: report it
        # the way the webhook does (V2/V3) rather than as a lookup failure.
        entry = registry.find(str(name))
    if entry is None:
        try:
            return registry.get(str(name), kind)
        except RuntimeNotFoundError as exc:
            if kind in c.RUNTIME_KINDS:
                # The job file names the runtime: say it as the TrainJob webhook does (V2/V3).
                exc.message = f"{exc.message}\n{runtime_not_found(kind, str(name))}"
                exc.args = (exc.message,)
            if doc is not None and not override:  # the name came from the file: point at it
                line, col = doc.locate(("spec", "runtimeRef", "name"))
                if line is not None:
                    exc.at(doc.file, line, col, doc.source_line(line))
            raise
    return entry


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
    if request.file:
        doc = load_job_document(request.file, ov.values_files, template_sets)
        # The flags below read and write into the file's mapping: its types must hold first.
        check_types(doc, "TrainJob", what="TrainJob")
        data: Obj = doc.data
        original = copy.deepcopy(data)
    else:
        _reject_template_inputs(None, ov.values_files, template_sets)
        data = {}
    for assignment in job_sets:
        from ktrain.authoring.set_paths import apply_assignment

        apply_assignment(data, assignment, "TrainJob")
    if job_sets:
        check_types(doc if doc is not None else Document(data=data, file="--set"), "TrainJob", what="TrainJob")
    if not request.file and not ov.runtime and not job_sets:
        raise UsageError(
            "nothing to render: give a job file with -f, or --runtime NAME",
            hint="e.g. ktrain job render --runtime torch-distributed --nodes 2 -- torchrun train.py",
        )
    entry = resolve_runtime(registry, data, ov.runtime, doc)
    # The runtime's own rules first: deriving a name below reads into its template.
    check_runtime(entry, allow_extensions=request.allow_extensions)
    grafts: list[tuple[Path, Document, Path]] = []
    data = apply_overrides(data, ov, entry.runtime.kind if ov.runtime else None, grafts)
    meta = data["metadata"]
    if not meta.get("name"):
        meta["name"] = derive_name(entry.runtime, data)
    meta.setdefault("namespace", request.default_namespace)
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
        if entry.document is not None:
            locate_field_errors(exc, entry.document)
        raise exc


def _is_runtime_path(path: str) -> bool:
    # A TrainJob has no spec.template/mlPolicy/podGroupPolicy: such paths are the runtime's.
    return path.startswith(("spec.template", "spec.mlPolicy", "spec.podGroupPolicy"))


def check_ssh_secret(name: str | None) -> None:
    """--ssh-secret names a Secret the pods mount: a DNS-1123 subdomain, as pod validation says."""
    from ktrain.engine.validation import dns1123_subdomain_errors

    if name is None:
        return
    problems = dns1123_subdomain_errors(name) if name else ["Required value"]
    if problems:
        raise InputError(
            f'Invalid value: "{name[:300]}": ' + "; ".join(problems),
            file="--ssh-secret",
            column=1,
            source_line=name[:300],
        )


def render_request(request: RenderRequest, registry: RuntimeRegistry) -> RenderOutcome:
    check_ssh_secret(request.ssh_secret)
    job, entry, doc = build_job(request, registry)  # the runtime is checked there too
    errors = validate_runtime_ref(job, entry.runtime)
    if errors:
        exc = ValidationFailedError(errors)
        if doc is not None:
            locate_field_errors(exc, doc)
        raise exc
    needs_key = (
        entry.runtime.spec.ml_policy is not None
        and entry.runtime.spec.ml_policy.mpi is not None
        and request.ssh_secret is None
    )
    ssh_key = None
    if needs_key:
        from ktrain.inputs.ssh_keys import generate_ssh_key_pair

        ssh_key = generate_ssh_key_pair()
    snapshot_text = None
    if request.runtime_snapshot:
        from ktrain.output.yamltext import dump

        snapshot_text = dump(entry.runtime.to_dict())
    ctx = RenderContext(
        ssh_key=ssh_key,
        ssh_secret_name=request.ssh_secret,
        allow_extensions=request.allow_extensions,
        runtime_snapshot=request.runtime_snapshot,
        runtime_snapshot_text=snapshot_text,
    )
    try:
        result = render(job, entry.runtime, ctx)
    except ValidationFailedError as exc:
        # Runtime schema errors point into the runtime's file, everything else into the job's.
        if doc is not None:
            # JobSet errors name JobSet paths: only metadata.name also exists in the TrainJob.
            in_job = (
                (lambda e: e.path.startswith("metadata"))
                if exc.subject == "JobSet"
                else (lambda e: not _is_runtime_path(e.path))
            )
            locate_field_errors(exc, doc, only=in_job)
        if entry.document is not None:
            locate_field_errors(exc, entry.document, only=lambda e: _is_runtime_path(e.path))
        raise
    secret_printed = any(o["kind"] == "Secret" and o.get("type") == "kubernetes.io/ssh-auth" for o in result.objects)
    return RenderOutcome(job=job, runtime=entry, result=result, document=doc, secret_printed=secret_printed, ctx=ctx)


@struct
class ValidateOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    warnings: list[str]


def validate_request(request: RenderRequest, registry: RuntimeRegistry) -> ValidateOutcome:
    """Offline validation: the TrainJob JSON Schema first, then everything the engine checks
    (CRD rules, webhooks, plugins). Raises ValidationFailedError with every problem found."""
    from ktrain.engine import SshKeyPair
    from ktrain.authoring.json_schemas import schema_errors

    check_ssh_secret(request.ssh_secret)
    doc, entry = job_document(request, registry)
    located = schema_errors(doc, "trainjob.schema.json")
    if located:
        exc = ValidationFailedError([err for err, _ in located])
        for i, (_, where) in enumerate(located):
            if where is not None:
                exc.locations[i] = where
        raise exc
    job = parse_model(doc, "TrainJob", what="TrainJob")
    errors = validate_runtime_ref(job, entry.runtime)
    # The output is thrown away, so a placeholder key pair stands in for a generated one.
    ctx = RenderContext(
        ssh_key=SshKeyPair(b"<validate>", b"<validate>\n"),
        ssh_secret_name=request.ssh_secret,
        allow_extensions=request.allow_extensions,
    )
    try:
        if errors:
            raise ValidationFailedError(errors)
        result = render(job, entry.runtime, ctx)
        require_admissible(result)
    except ValidationFailedError as exc:
        locate_field_errors(exc, doc)  # the job file's lines, and --patch files'
        raise
    return ValidateOutcome(job=job, runtime=entry, warnings=list(result.warnings))


def require_admissible(result: RenderResult) -> None:
    """What JobSet's webhook would refuse is an error for `job validate` and `job create`
    (a render still prints it, as the controller still builds it)."""
    if result.rejections:
        raise ValidationFailedError(result.rejections, subject="JobSet")


def explain_notes(request: RenderRequest, outcome: RenderOutcome) -> list[Any]:
    """For each rendered object, path -> where the field came from (`job render --explain`)."""
    from ktrain.authoring.explain import explain

    original = outcome.document.original if outcome.document is not None else None
    file_spec = (original.get("spec") or {}) if isinstance(original, dict) else None
    file_meta = (original.get("metadata") or {}) if isinstance(original, dict) else {}

    def source(field: str, flag_value: str | None, otherwise: str) -> str:
        if flag_value:
            return f"flag --{field}"
        return "TrainJob metadata" if file_meta.get(field) else otherwise

    name_source = source("name", request.overrides.name, "derived from the job's content")
    namespace_source = source("namespace", request.overrides.namespace, "default namespace")
    assert outcome.ctx is not None
    return explain(
        outcome.result.objects,
        outcome.job,
        outcome.runtime.runtime,
        outcome.ctx,
        file_spec if isinstance(file_spec, dict) else None,
        name_source,
        namespace_source,
    )
