"""Training Operator v1 jobs (and mpi-operator v2beta1 MPIJobs) -> TrainJob (+ TrainingRuntime).

Pure: a parsed `Document` in, plain dicts and a report out. Two ways to carry a job:

- onto a bundled runtime (`torch-distributed`, `tensorflow-distributed`, ...) when everything
  the v1 job says fits in a TrainJob: `trainer` fields, plus one runtime patch for what a patch
  may set (volumes, mounts, affinity, tolerations, node selector, service account, ...);
- otherwise onto a TrainingRuntime generated from the v1 pod templates, one replicated job per
  v1 replica type, carried verbatim (the framework container renamed `node`).

Every v1 field gets a report row: kept, approximated (with why) or dropped (with why).
See docs/migrating-from-v1.md for each choice.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ktrain import constants as c
from ktrain.convert.bundled import add_patch, onto_runtime
from ktrain.convert.common import PATCH_MANAGER, SERVER_SET_METADATA, Ctx, Role, Settings, get
from ktrain.convert.generated import Generated
from ktrain.convert.kinds import KINDS, KindInfo, spec_fields, supported_text
from ktrain.convert.layout import Plan, host_rows, plan, rewrite_hosts
from ktrain.convert.pod_hosts import pod_name_hosts
from ktrain.convert.pod_labels import carry as carry_pod_labels
from ktrain.convert.policies import kind_fields, run_policy
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT, Row
from ktrain.convert.roles import read_roles
from ktrain.inputs.documents import Document, Path, path_text
from ktrain.util.jsondata import Obj


@dataclass
class Conversion:
    kind: str
    api_version: str
    name: str
    namespace: str | None
    trainjob: Obj
    runtime: Obj | None  # a generated TrainingRuntime, when no bundled one fits
    runtime_name: str
    runtime_kind: str
    rows: list[Row]
    document: Document
    base: Path
    sources: dict[Path, Path] = field(default_factory=dict)  # TrainJob path -> v1 path (relative to base)
    reason: str = ""  # why a runtime was generated
    main: str = ""  # the v1 replica spec the trainer step came from, e.g. ".spec.tfReplicaSpecs.Worker"
    # Generated runtime path prefix -> v1 path prefix (each pod template came from a replica's).
    runtime_sources: list[tuple[Path, Path]] = field(default_factory=list)

    def source_labels(self) -> dict[str, str]:
        """`job render --explain` labels for what came from the v1 job."""
        labels = {"TrainJob field": f"converted from {self.kind} {self.main}"}
        if self.runtime is not None:
            labels["runtime template"] = f"converted from {self.kind} (generated runtime {self.runtime_name})"
        return labels

    def report(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "name": self.name,
            "namespace": self.namespace,
            "runtime": {"kind": self.runtime_kind, "name": self.runtime_name, "generated": self.runtime is not None},
            "fields": [{"field": r.field, "status": r.status, "v2": r.target, "note": r.note} for r in self.rows],
        }

    def title(self) -> str:
        how = f"generated TrainingRuntime {self.runtime_name}" if self.runtime else f"runtime {self.runtime_name}"
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name} -> TrainJob {self.name} on {how}"


def convert(doc: Document, base: Path = (), *, runtime: str | None = None) -> Conversion:
    """One v1 job (the mapping at `base` in `doc`) as a TrainJob. `runtime` names an existing
    runtime to put it on (what it cannot carry is reported as dropped)."""
    data = get(doc.data, base)
    ctx = Ctx(doc, base)
    if not isinstance(data, dict):
        raise ctx.error("a job must be a mapping", ())
    info = _kind(ctx, data)
    api = str(data["apiVersion"])
    ctx.known(data, ("apiVersion", "kind", "metadata", "spec", "status"), (), info.kind)
    meta = ctx.typed(data.get("metadata"), dict, ("metadata",), "a mapping")
    name, namespace = _job_name(ctx, info, meta, data.get("spec"))
    spec = ctx.typed(data.get("spec"), dict, ("spec",), "a mapping")
    ctx.known(spec, spec_fields(info, api), ("spec",), f"{info.kind} spec ({api})")
    roles = read_roles(ctx, info, spec, api)
    _master_wait(ctx, info, roles)
    tj_meta = _trainjob_metadata(ctx, info, data, meta, name, namespace)

    tj_spec: Obj = {}
    settings = Settings()
    run_policy(ctx, info, spec, tj_spec, settings, api)
    kind_fields(ctx, info, api, spec, tj_spec, settings, roles)
    the_plan = plan(info, roles)
    roles = _rewrite_hosts(ctx, roles, name, the_plan)
    roles = carry_pod_labels(ctx, info, api, roles, name, the_plan.layout)
    roles = pod_name_hosts(ctx, info, roles, name, the_plan.layout)
    the_plan = plan(info, roles)

    trainjob: Obj = {"apiVersion": c.TRAINER_API_VERSION, "kind": c.TRAINJOB_KIND, "metadata": tj_meta, "spec": tj_spec}
    job = _Job(doc, base, info, api, name, namespace, roles, settings, the_plan)
    # First try the bundled runtime (or the one asked for): it fits when nothing blocks it.
    target = runtime or info.bundled
    if target is None:
        return _on_generated_runtime(ctx, job, trainjob, f"no bundled runtime runs a {info.kind}")
    done, reason = _on_existing_runtime(ctx, job, trainjob, target, asked=runtime is not None)
    return done if done is not None else _on_generated_runtime(ctx, job, trainjob, reason)


@dataclass
class _Job:
    """A v1 job read and planned, as both ways of carrying it need it."""

    doc: Document
    base: Path
    info: KindInfo
    api: str
    name: str
    namespace: str | None
    roles: list[Role]
    settings: Settings
    plan: Plan


def _job_name(ctx: Ctx, info: KindInfo, meta: Obj, spec: Any) -> tuple[str, str | None]:
    """The TrainJob's name (the v1 name, or one derived from generateName) and namespace."""
    name = meta.get("name")
    generate = meta.get("generateName")
    if not name and isinstance(generate, str) and generate:
        name = derived_name(generate, spec)
        ctx.row(
            ("metadata", "generateName"),
            APPROXIMATED,
            f"TrainJob metadata.name {name}",
            "the API server would add 5 random characters; ktrain derives them from the spec, so host names "
            "in the pods' env are known now (the same spec gives the same name)",
        )
    if not name:
        raise ctx.error(
            f"{info.kind} has no metadata.name or generateName (ktrain names the TrainJob after it)", ("metadata",)
        )
    ctx.typed(name, str, ("metadata", "name"), "a string")
    namespace = meta.get("namespace")
    if namespace is not None:
        ctx.typed(namespace, str, ("metadata", "namespace"), "a string")
    return str(name), namespace


def _trainjob_metadata(ctx: Ctx, info: KindInfo, data: Obj, meta: Obj, name: str, namespace: str | None) -> Obj:
    """The TrainJob's metadata from the v1 job's, with the rows of every metadata field."""
    tj_meta: Obj = {"name": name}
    ctx.row(("apiVersion",), KEPT, f"TrainJob apiVersion {c.TRAINER_API_VERSION}", f"{info.kind} is now a TrainJob")
    ctx.row(("kind",), KEPT, "TrainJob kind")
    ctx.row(("metadata", "name"), KEPT, "TrainJob metadata.name")
    ctx.sources[("metadata", "name")] = ("metadata", "name")
    if namespace:
        tj_meta["namespace"] = namespace
        ctx.row(("metadata", "namespace"), KEPT, "TrainJob metadata.namespace")
        ctx.sources[("metadata", "namespace")] = ("metadata", "namespace")
    for key in ("labels", "annotations"):
        if meta.get(key):
            ctx.typed(meta[key], dict, ("metadata", key), "a mapping")
            tj_meta[key] = dict(meta[key])
            ctx.row(
                ("metadata", key),
                KEPT,
                f"TrainJob metadata.{key}",
                "as on the v1 job (Kueue reads them there); like v1, not copied to pods",
            )
    for key in meta:
        if key == "generateName" and "name" not in meta:
            continue
        if key in SERVER_SET_METADATA:
            ctx.row(("metadata", key), DROPPED, "-", "set by the API server for the v1 object")
        elif key not in ("name", "namespace", "labels", "annotations"):
            ctx.row(("metadata", key), DROPPED, "-", "not carried to the TrainJob")
    if "status" in data:
        ctx.row(("status",), DROPPED, "-", "the v1 controller's status; the TrainJob gets its own")
    return tj_meta


def _on_existing_runtime(
    ctx: Ctx, job: _Job, trainjob: Obj, target: str, *, asked: bool
) -> tuple[Conversion | None, str]:
    """The job on `target` (bundled, or asked for with --runtime); None and why when something
    blocks a bundled one."""
    trial = Ctx(job.doc, job.base)
    trial.sources = dict(ctx.sources)
    attempt = copy.deepcopy(trainjob)  # a generated runtime starts again from the v1 fields
    blockers = onto_runtime(trial, job.info, job.roles, job.settings, job.plan, target, attempt, job.name)
    if blockers and not asked:
        return None, "; ".join(sorted({b[1] for b in blockers}))
    for b in blockers:
        trial.row(b[0], DROPPED, "-", f"the runtime {target} decides this ({b[1]})")
    queue_labels(trial, attempt["metadata"], attempt["spec"])
    conversion = Conversion(
        job.info.kind,
        job.api,
        job.name,
        job.namespace,
        attempt,
        None,
        target,
        c.CLUSTER_TRAINING_RUNTIME_KIND if not asked else "",
        _ordered(ctx.rows + trial.rows),
        job.doc,
        job.base,
        trial.sources,
        main=_main_path(job.roles),
    )
    return conversion, ""


def _on_generated_runtime(ctx: Ctx, job: _Job, trainjob: Obj, reason: str) -> Conversion:
    """The job on a TrainingRuntime generated from its pod templates."""
    gen = Generated(ctx, job.info, job.api, job.roles, job.name, job.settings, job.plan)
    runtime_obj = gen.build(trainjob, job.namespace)
    queue_labels(ctx, trainjob["metadata"], trainjob["spec"])
    return Conversion(
        job.info.kind,
        job.api,
        job.name,
        job.namespace,
        trainjob,
        runtime_obj,
        gen.runtime_name,
        c.TRAINING_RUNTIME_KIND,
        _ordered(ctx.rows + job.settings.rows),
        job.doc,
        job.base,
        {**ctx.sources, **gen.sources},
        reason,
        main=_main_path([job.plan.trainer]),
        runtime_sources=gen.runtime_sources,
    )


def _master_wait(ctx: Ctx, info: KindInfo, roles: list[Role]) -> None:
    """pytorch/initcontainer.go setInitContainer: with a Master, v1 gave every Worker pod an init
    container `init-pytorch` that looped on `nslookup <job>-master-0` until the Master's Service
    resolved, so no worker started before the Master had a name. JobSet starts every pod at once."""
    by_type = {r.type: r for r in roles}
    worker = by_type.get("Worker")
    if info.kind != "PyTorchJob" or "Master" not in by_type or worker is None or not worker.replicas:
        return
    ctx.row(
        worker.path,
        APPROXIMATED,
        "-",
        "v1 held each Worker in an init container (init-pytorch) until the Master's host name resolved; here "
        "workers start with the Master and may look up MASTER_ADDR before the Master's pod has an address: a "
        "program that does not retry the lookup fails (with restartPolicy Never, so does the job)",
    )


def _main_path(roles: list[Role]) -> str:
    by_type = {r.type: r for r in roles}
    role = by_type.get("Worker") or roles[0]
    return "." + path_text(role.path)


def _ordered(rows: list[Row]) -> list[Row]:
    seen: dict[tuple[str, str], Row] = {}
    for r in rows:
        seen.setdefault((r.field, r.target), r)
    return list(seen.values())


def _kind(ctx: Ctx, data: Obj) -> KindInfo:
    kind = data.get("kind")
    api = data.get("apiVersion")
    info = KINDS.get(kind) if isinstance(kind, str) else None
    if info is None:
        raise ctx.error(
            f"unsupported kind {kind!r} (apiVersion {api!r}): ktrain converts {supported_text()}",
            ("kind",),
        )
    if api not in info.api_versions:
        raise ctx.error(
            f"unsupported apiVersion {api!r} for {kind}: ktrain converts {supported_text()}",
            ("apiVersion",),
        )
    return info


def derived_name(generate_name: str, spec: Any) -> str:
    """generateName plus 5 characters from the spec's digest (the API server's are random)."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()
    return generate_name[:58] + digest[:5]


def _rewrite_hosts(ctx: Ctx, roles: list[Role], name: str, the_plan: Plan) -> list[Role]:
    out = []
    for role, changes in rewrite_hosts(roles, name, the_plan.layout):
        for path, known, note in host_rows(role, changes):
            ctx.row(path, KEPT if known else APPROXIMATED, "host name rewritten" if known else "-", note)
        out.append(role)
    return out


# Queue and priority labels of the v1 job that a scheduler reads from the object it admits: with
# `--target jobset` (the default) that is the JobSet, which gets them through the conversion's
# runtime patch, as `--kueue-queue` labels it through the flags' patch (ENGINE.md §4.1). A JobSet
# labelled with a Kueue queue stays suspended until Kueue admits it (`job create`, Kueue's webhook).
# `runai/queue` is KAI's queue label before it was renamed `kai.scheduler/queue` (and Run:ai's); the
# pod-grouper of those releases reads it from the top owner just the same.
KAI_QUEUE_LABELS = ("kai.scheduler/queue", "runai/queue")
QUEUE_LABELS = (c.KUEUE_QUEUE_LABEL, c.KUEUE_PRIORITY_LABEL, *KAI_QUEUE_LABELS)


def queue_labels(ctx: Ctx, tj_meta: Obj, tj_spec: Obj) -> None:
    labels = {k: v for k, v in (tj_meta.get("labels") or {}).items() if k in QUEUE_LABELS}
    if not labels:
        return
    add_patch(tj_spec, {"template": {"metadata": {"labels": dict(labels)}}})
    for key in labels:
        ctx.row(
            ("metadata", "labels", key),
            KEPT,
            f"TrainJob metadata.labels and JobSet metadata.labels (runtimePatches {PATCH_MANAGER})",
            "the queue reads it from the JobSet (job create leaves a queued JobSet suspended for Kueue)"
            if key not in KAI_QUEUE_LABELS
            else "KAI's pod-grouper reads it from the top owner: the JobSet (or the TrainJob with --target trainjob)",
        )
