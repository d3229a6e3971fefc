"""Use cases: turn a job file and/or flags into a TrainJob, resolve its runtime, render.

Composes the loader, the registry and the engine; never prints.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ktrain import constants as c
from ktrain.api.runtime import TrainingRuntime
from ktrain.api.trainjob import TrainJob
from ktrain.engine import RenderContext, RenderResult, render
from ktrain.engine.validation import runtime_not_found, validate_runtime_ref
from ktrain.errors import InputError, RuntimeNotFoundError, UsageError, ValidationFailedError
from ktrain.loader import Document, load_documents, locate_field_errors, parse_model
from ktrain.registry import RuntimeEntry, RuntimeRegistry

Obj = dict[str, Any]


@dataclass
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


@dataclass
class RenderRequest:
    file: str | None = None
    overrides: JobOverrides = field(default_factory=JobOverrides)
    ssh_secret: str | None = None
    allow_extensions: bool = False
    runtime_snapshot: bool = False


@dataclass
class RenderOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    result: RenderResult
    document: Document | None = None
    secret_printed: bool = False


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", file=path) from None


def load_job_document(path: str) -> Document:
    docs = [d for d in load_documents(read_text(path), "<stdin>" if path == "-" else path)]
    jobs = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == c.TRAINJOB_KIND]
    if not jobs:
        if docs:
            raise docs[0].error("no TrainJob in this file (kind: TrainJob, apiVersion: trainer.kubeflow.org/v1alpha1)",
                                ("kind",))
        raise InputError("the file is empty", file=path)
    if len(jobs) > 1:
        raise jobs[1].error("more than one TrainJob in this file; ktrain renders one job at a time")
    return jobs[0]


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


def _patch_documents(paths: list[str]) -> list[Obj]:
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
                manager = c.DEFAULT_PATCH_MANAGER if c.DEFAULT_PATCH_MANAGER not in used else \
                    f"{c.DEFAULT_PATCH_MANAGER}-{i + 1}"
            used.add(str(manager))
            patches.append({"manager": manager, **{k: v for k, v in data.items() if k != "manager"}})
    return patches


def apply_overrides(data: Obj, ov: JobOverrides, runtime_kind: str | None) -> Obj:
    """Command-line flags on top of a TrainJob mapping (flags win over the file)."""
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
    trainer_set = any([ov.nodes is not None, ov.nproc_per_node is not None, ov.image, ov.command is not None,
                       ov.env, ov.requests, ov.limits])
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
    patches = _patch_documents(ov.patch_files)
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
        patches.append({"manager": f"{c.DEFAULT_PATCH_MANAGER}-flags",
                        "trainingRuntimeSpec": {"template": {"metadata": flag_meta}}})
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
    digest = hashlib.sha256(json.dumps(data.get("spec"), sort_keys=True).encode()).hexdigest()[:8]
    prefix = re.sub(r"[^a-z0-9-]+", "-", runtime.name.lower()).strip("-")
    prefix = re.sub(r"-(distributed)$", "", prefix) or "job"
    if not prefix[0].isalpha():
        prefix = "job-" + prefix
    limit = max(_max_name_length(runtime, data), 10)
    room = limit - len(digest) - 1
    prefix = prefix[:room].rstrip("-") if room > 0 else ""
    return f"{prefix}-{digest}" if prefix else f"j{digest}"


def resolve_runtime(registry: RuntimeRegistry, data: Obj, override: str | None) -> RuntimeEntry:
    ref = ((data.get("spec") or {}).get("runtimeRef") or {})
    name = override or ref.get("name")
    if not name:
        raise UsageError("no runtime given: pass --runtime NAME or set spec.runtimeRef.name in the job file",
                         hint="see `ktrain runtime list`")
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
            raise
    return entry


def build_job(request: RenderRequest, registry: RuntimeRegistry) -> tuple[TrainJob, RuntimeEntry, Document | None]:
    ov = request.overrides
    doc: Document | None = None
    if request.file:
        doc = load_job_document(request.file)
        data: Obj = doc.data
    else:
        if not ov.runtime:
            raise UsageError("nothing to render: give a job file with -f, or --runtime NAME",
                             hint="e.g. ktrain job render --runtime torch-distributed --nodes 2 -- torchrun train.py")
        data = {}
    entry = resolve_runtime(registry, data, ov.runtime)
    data = apply_overrides(data, ov, entry.runtime.kind if ov.runtime else None)
    meta = data["metadata"]
    if not meta.get("name"):
        meta["name"] = derive_name(entry.runtime, data)
    meta.setdefault("namespace", "default")
    if doc is not None:
        doc = Document(data=data, file=doc.file, lines=doc.lines, positions=doc.positions,
                       key_positions=doc.key_positions)
        job = parse_model(doc, TrainJob, what="TrainJob")
    else:
        job = parse_model(Document(data=data, file="<flags>"), TrainJob, what="TrainJob")
    return job, entry, doc


def _is_runtime_path(path: str) -> bool:
    # A TrainJob has no spec.template/mlPolicy/podGroupPolicy: such paths are the runtime's.
    return path.startswith(("spec.template", "spec.mlPolicy", "spec.podGroupPolicy"))


def render_request(request: RenderRequest, registry: RuntimeRegistry) -> RenderOutcome:
    job, entry, doc = build_job(request, registry)
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
        from ktrain.keys import generate_ssh_key_pair

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
            in_job = (lambda e: e.path.startswith("metadata")) if exc.subject == "JobSet" else \
                (lambda e: not _is_runtime_path(e.path))
            locate_field_errors(exc, doc, only=in_job)
        if entry.document is not None:
            locate_field_errors(exc, entry.document, only=lambda e: _is_runtime_path(e.path))
        raise
    secret_printed = any(
        o["kind"] == "Secret" and o.get("type") == "kubernetes.io/ssh-auth" for o in result.objects
    )
    return RenderOutcome(job=job, runtime=entry, result=result, document=doc, secret_printed=secret_printed)
