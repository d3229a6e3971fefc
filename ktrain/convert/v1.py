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
import difflib
from typing import Any

from ktrain import constants as c
from ktrain.convert import podenv
from ktrain.convert.kinds import (
    KINDS,
    PADDLE_ELASTIC_FIELDS,
    REPLICA_SPEC_FIELDS,
    RUN_POLICY_FIELDS,
    SCHEDULING_POLICY_FIELDS,
    TORCH_ELASTIC_FIELDS,
    V1,
    KindInfo,
    default_restart,
    spec_fields,
    supported_text,
)
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT, Row
from ktrain.errors import InputError
from ktrain.inputs.documents import Document, Path, path_text
from ktrain.util.structs import field, struct

Obj = dict[str, Any]

PATCH_MANAGER = "ktrain.io/convert"
# What a runtime patch may set on a pod (ENGINE.md §2.3), besides containers.
PATCHABLE_POD = (
    "volumes",
    "affinity",
    "tolerations",
    "nodeSelector",
    "serviceAccountName",
    "imagePullSecrets",
    "securityContext",
    "terminationGracePeriodSeconds",
    "schedulingGates",
)
# What the TrainJob's trainer (or a container patch) carries for the framework container.
TRAINER_CONTAINER = ("name", "image", "command", "args", "env", "resources", "volumeMounts", "securityContext")
ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")
SERVER_SET_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "finalizers",
    "generateName",
)
TF_SPLIT_ROLES = ("Chief", "Master", "PS", "Evaluator")


@struct
class Role:
    type: str  # v1 replica type, e.g. "Worker"
    replicas: int
    restart: str | None  # as written
    template: Obj
    path: Path  # of the replica spec, in the document
    main: int  # index of the framework container
    default_restart: str = "Never"  # what v1 used when restartPolicy is unset

    @property
    def rt(self) -> str:
        return self.type.lower()

    @property
    def container(self) -> Obj:
        container: Obj = self.template["spec"]["containers"][self.main]
        return container


@struct
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


class _Ctx:
    def __init__(self, doc: Document, base: Path) -> None:
        self.doc = doc
        self.base = base
        self.rows: list[Row] = []
        self.sources: dict[Path, Path] = {}

    def row(self, path: Path, status: str, target: str, note: str = "") -> None:
        self.rows.append(Row(path_text(path) or "(the job)", status, target, note))

    def error(self, message: str, path: Path, *, hint: str | None = None, key: bool = False) -> InputError:
        return self.doc.error(message, (*self.base, *path), hint=hint, key=key)

    def typed(self, value: Any, kind: type | tuple[type, ...], path: Path, what: str) -> Any:
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if isinstance(kind, tuple) and int in kind and isinstance(value, bool):
            ok = False
        if not ok:
            got = type(value).__name__ if value is not None else "null"
            raise self.error(f"{path_text(path)} must be {what}, got {got} {value!r}"[:200], path)
        return value

    def known(self, mapping: Obj, allowed: tuple[str, ...], path: Path, what: str) -> None:
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                raise self.error(
                    f'unknown field "{path_text((*path, key))}" in {what}',
                    (*path, key),
                    key=True,
                    hint=f"did you mean {close[0]!r}?" if close else f"{what} fields: {', '.join(allowed)}",
                )


def _get(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def convert(doc: Document, base: Path = (), *, runtime: str | None = None) -> Conversion:
    """One v1 job (the mapping at `base` in `doc`) as a TrainJob. `runtime` names an existing
    runtime to put it on (what it cannot carry is reported as dropped)."""
    data = _get(doc.data, base)
    ctx = _Ctx(doc, base)
    if not isinstance(data, dict):
        raise ctx.error("a job must be a mapping", ())
    info = _kind(ctx, data)
    api = str(data["apiVersion"])
    ctx.known(data, ("apiVersion", "kind", "metadata", "spec", "status"), (), info.kind)
    meta = ctx.typed(data.get("metadata"), dict, ("metadata",), "a mapping")
    name = meta.get("name")
    if not name:
        raise ctx.error(f"{info.kind} has no metadata.name (ktrain names the TrainJob after it)", ("metadata",))
    ctx.typed(name, str, ("metadata", "name"), "a string")
    namespace = meta.get("namespace")
    if namespace is not None:
        ctx.typed(namespace, str, ("metadata", "namespace"), "a string")
    spec = ctx.typed(data.get("spec"), dict, ("spec",), "a mapping")
    ctx.known(spec, spec_fields(info, api), ("spec",), f"{info.kind} spec ({api})")
    roles = _roles(ctx, info, spec, api)

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
        if key in SERVER_SET_METADATA:
            ctx.row(("metadata", key), DROPPED, "-", "set by the API server for the v1 object")
        elif key not in ("name", "namespace", "labels", "annotations"):
            ctx.row(("metadata", key), DROPPED, "-", "not carried to the TrainJob")
    if "status" in data:
        ctx.row(("status",), DROPPED, "-", "the v1 controller's status; the TrainJob gets its own")

    tj_spec: Obj = {}
    gen = _Generated(ctx, info, api, spec, roles, name)
    _run_policy(ctx, info, spec, tj_spec, gen)
    _kind_fields(ctx, info, api, spec, tj_spec, gen, roles)

    trainjob: Obj = {"apiVersion": c.TRAINER_API_VERSION, "kind": c.TRAINJOB_KIND, "metadata": tj_meta, "spec": tj_spec}
    # First try the bundled runtime (or the one asked for): it fits when nothing blocks it.
    target = runtime or info.bundled
    if target is not None:
        trial = _Ctx(doc, base)
        trial.sources = dict(ctx.sources)
        blockers = _onto_runtime(trial, info, roles, gen, target, trainjob, name)
        if not blockers or runtime is not None:
            for b in blockers:
                trial.row(b[0], DROPPED, "-", f"the runtime {target} decides this ({b[1]})")
            rows = _ordered(ctx.rows + trial.rows)
            return Conversion(
                info.kind,
                api,
                name,
                namespace,
                trainjob,
                None,
                target,
                c.CLUSTER_TRAINING_RUNTIME_KIND if runtime is None else "",
                rows,
                doc,
                base,
                trial.sources,
                main=_main_path(roles),
            )
        reason = "; ".join(sorted({b[1] for b in blockers}))
    else:
        reason = f"no bundled runtime runs a {info.kind}"
    runtime_obj = gen.build(trainjob, namespace)
    return Conversion(
        info.kind,
        api,
        name,
        namespace,
        trainjob,
        runtime_obj,
        gen.runtime_name,
        c.TRAINING_RUNTIME_KIND,
        _ordered(ctx.rows + gen.ctx_rows),
        doc,
        base,
        {**ctx.sources, **gen.sources},
        reason,
        main=_main_path([gen._trainer_role()]),
        runtime_sources=gen.runtime_sources,
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


def _kind(ctx: _Ctx, data: Obj) -> KindInfo:
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


def _roles(ctx: _Ctx, info: KindInfo, spec: Obj, api: str) -> list[Role]:
    key = info.replica_key
    if key not in spec:
        raise ctx.error(f"{info.kind} has no spec.{key}", ("spec",))
    specs = ctx.typed(spec[key], dict, ("spec", key), "a mapping of replica type to replica spec")
    if not specs:
        raise ctx.error(f"spec.{key} is empty", ("spec", key))
    by_type: dict[str, Role] = {}
    for rtype, rspec in specs.items():
        path: Path = ("spec", key, rtype)
        if rtype not in info.roles:
            close = difflib.get_close_matches(str(rtype), info.roles, n=1)
            raise ctx.error(
                f"unknown {info.kind} replica type {rtype!r}: the types are {', '.join(info.roles)}",
                path,
                key=True,
                hint=f"did you mean {close[0]!r}?" if close else None,
            )
        ctx.typed(rspec, dict, path, "a mapping")
        if info.kind == "MXJob" and "label" in rspec:
            # Older MXJob examples set a replica `label`; the v1 API has no such field (the API
            # server prunes it); v1 read the tuner label from the pod annotation tuner-server-key.
            ctx.row((*path, "label"), DROPPED, "-", "not a v1 MXJob field (pruned by the API server)")
            rspec = {k: v for k, v in rspec.items() if k != "label"}
        ctx.known(rspec, REPLICA_SPEC_FIELDS, path, "replica spec")
        replicas = rspec.get("replicas", 1)
        replicas = ctx.typed(replicas, int, (*path, "replicas"), "an integer")
        if replicas < 0:
            raise ctx.error("replicas must be >= 0", (*path, "replicas"))
        restart = rspec.get("restartPolicy")
        if restart is not None and restart not in RESTART_POLICIES:
            raise ctx.error(f"restartPolicy must be one of {', '.join(RESTART_POLICIES)}", (*path, "restartPolicy"))
        template = ctx.typed(rspec.get("template"), dict, (*path, "template"), "a pod template (mapping)")
        pod = ctx.typed(template.get("spec"), dict, (*path, "template", "spec"), "a pod spec (mapping)")
        containers = ctx.typed(
            pod.get("containers"), list, (*path, "template", "spec", "containers"), "a list of containers"
        )
        if not containers:
            raise ctx.error("a replica needs at least one container", (*path, "template", "spec", "containers"))
        for i, cont in enumerate(containers):
            cpath = (*path, "template", "spec", "containers", i)
            ctx.typed(cont, dict, cpath, "a container (mapping)")
            for fld in ("command", "args", "env", "ports", "volumeMounts"):
                if fld in cont and cont[fld] is not None:
                    ctx.typed(cont[fld], list, (*cpath, fld), "a list")
        main = _main_container(ctx, info, spec, api, rtype, containers, (*path, "template", "spec", "containers"))
        by_type[rtype] = Role(
            rtype, replicas, restart, _without_nulls(template), path, main, default_restart(info, api, rtype)
        )
    return [by_type[t] for t in info.roles if t in by_type]


def _without_nulls(value: Any) -> Any:
    """A copy without null-valued keys (`command:` with no value): the API server drops them
    too, and a null is not a valid value for the v2 CRDs' typed fields."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _main_container(
    ctx: _Ctx, info: KindInfo, spec: Obj, api: str, rtype: str, containers: list[Obj], path: Path
) -> int:
    if len(containers) == 1:
        return 0
    expected = info.container
    if info.kind == "MPIJob":
        if api != V1:
            return 0  # mpi-operator v2beta1 runs the first container of each replica
        expected = spec.get("mainContainer") or expected
    names = [cont.get("name") for cont in containers]
    if expected in names:
        return names.index(expected)
    raise ctx.error(
        f"{info.kind} {rtype} has {len(containers)} containers ({', '.join(map(str, names))}) and none is named "
        f"{expected!r}: ktrain cannot tell which one runs the training",
        path,
        hint=f"name the framework container {expected!r}"
        + (" (or set spec.mainContainer)" if info.kind == "MPIJob" else ""),
    )


def _int_port(info: KindInfo, role: Role) -> int:
    for port in role.container.get("ports") or []:
        if isinstance(port, dict) and port.get("name") == info.port_name and isinstance(port.get("containerPort"), int):
            return int(port["containerPort"])
    return int(info.default_port or 0)


# --------------------------------------------------------------------------- runPolicy


def _run_policy(ctx: _Ctx, info: KindInfo, spec: Obj, tj_spec: Obj, gen: _Generated) -> None:
    if "runPolicy" not in spec:
        return
    rp = ctx.typed(spec["runPolicy"], dict, ("spec", "runPolicy"), "a mapping")
    ctx.known(rp, RUN_POLICY_FIELDS, ("spec", "runPolicy"), "runPolicy")
    p: Path = ("spec", "runPolicy")
    if "cleanPodPolicy" in rp:
        ctx.row(
            (*p, "cleanPodPolicy"),
            DROPPED,
            "-",
            "v2 has no equivalent: finished pods stay until the TrainJob is deleted (`ktrain job delete`)",
        )
    if "ttlSecondsAfterFinished" in rp:
        ctx.typed(rp["ttlSecondsAfterFinished"], int, (*p, "ttlSecondsAfterFinished"), "an integer")
        ctx.row(
            (*p, "ttlSecondsAfterFinished"),
            DROPPED,
            "-",
            "v2 TrainJobs have no TTL (a JobSet TTL would make the controller re-create the JobSet); "
            "delete finished jobs with `ktrain job delete`",
        )
    if "activeDeadlineSeconds" in rp:
        value = ctx.typed(rp["activeDeadlineSeconds"], int, (*p, "activeDeadlineSeconds"), "an integer")
        tj_spec["activeDeadlineSeconds"] = value
        ctx.sources[("spec", "activeDeadlineSeconds")] = (*p, "activeDeadlineSeconds")
        ctx.row((*p, "activeDeadlineSeconds"), KEPT, "TrainJob spec.activeDeadlineSeconds")
    if "backoffLimit" in rp:
        value = ctx.typed(rp["backoffLimit"], int, (*p, "backoffLimit"), "an integer")
        gen.backoff_limit = value
        gen.block((*p, "backoffLimit"), "runPolicy.backoffLimit needs a runtime")
        gen.row(
            (*p, "backoffLimit"),
            APPROXIMATED,
            "runtime replicatedJobs[*].template.spec.backoffLimit",
            "each replicated Job retries failed pods up to this many times (v1 counted the whole job)",
        )
    if "suspend" in rp:
        value = ctx.typed(rp["suspend"], bool, (*p, "suspend"), "a boolean")
        tj_spec["suspend"] = value
        ctx.sources[("spec", "suspend")] = (*p, "suspend")
        ctx.row((*p, "suspend"), KEPT, "TrainJob spec.suspend")
    if "managedBy" in rp:
        value = ctx.typed(rp["managedBy"], str, (*p, "managedBy"), "a string")
        if value == c.MANAGED_BY_MULTIKUEUE:
            tj_spec["managedBy"] = value
            ctx.row((*p, "managedBy"), KEPT, "TrainJob spec.managedBy")
        else:
            ctx.row(
                (*p, "managedBy"),
                APPROXIMATED,
                f"TrainJob spec.managedBy (default {c.MANAGED_BY_TRAINER})",
                "the Trainer controller manages the TrainJob",
            )
    if "schedulingPolicy" in rp:
        _scheduling(ctx, rp["schedulingPolicy"], (*p, "schedulingPolicy"), gen)


def _scheduling(ctx: _Ctx, sp: Any, p: Path, gen: _Generated) -> None:
    sp = ctx.typed(sp, dict, p, "a mapping")
    ctx.known(sp, SCHEDULING_POLICY_FIELDS, p, "schedulingPolicy")
    if not sp:
        ctx.row(p, DROPPED, "-", "empty")
        return
    gen.block(p, "gang scheduling needs a runtime podGroupPolicy")
    if "queue" in sp:
        queue = ctx.typed(sp["queue"], str, (*p, "queue"), "a string")
        gen.queue = queue
        gen.row(
            (*p, "queue"),
            KEPT,
            f"runtime podGroupPolicy.volcano + template.metadata.annotations[{c.VOLCANO_QUEUE_ANNOTATION}]",
            "the Volcano queue (v1's scheduling queue)",
        )
    timeout = sp.get("scheduleTimeoutSeconds")
    if timeout is not None:
        gen.schedule_timeout = ctx.typed(timeout, int, (*p, "scheduleTimeoutSeconds"), "an integer")
        if "queue" in sp:
            gen.row(
                (*p, "scheduleTimeoutSeconds"),
                DROPPED,
                "-",
                "Volcano PodGroups made by v2 have no schedule timeout (a queue selects Volcano)",
            )
        else:
            gen.row((*p, "scheduleTimeoutSeconds"), KEPT, "runtime podGroupPolicy.coscheduling.scheduleTimeoutSeconds")
    if "priorityClass" in sp:
        gen.priority_class = ctx.typed(sp["priorityClass"], str, (*p, "priorityClass"), "a string")
        gen.row(
            (*p, "priorityClass"),
            KEPT,
            "runtime pod templates' priorityClassName",
            "the PodGroup takes its priority from the pods",
        )
    if "minAvailable" in sp:
        ctx.typed(sp["minAvailable"], int, (*p, "minAvailable"), "an integer")
        gen.row(
            (*p, "minAvailable"),
            APPROXIMATED,
            "PodGroup minMember (computed)",
            "v2 gang-schedules every pod of the job: minMember is the total pod count",
        )
    if "minResources" in sp:
        gen.row(
            (*p, "minResources"),
            APPROXIMATED,
            "PodGroup minResources (computed)",
            "v2 sums the pods' resource requests",
        )
    if "queue" not in sp and timeout is None:
        gen.schedule_timeout = None
    gen.gang = "volcano" if "queue" in sp else "coscheduling"
    if gen.gang == "coscheduling":
        gen.row(p, APPROXIMATED, "runtime podGroupPolicy.coscheduling", "v1 took the gang scheduler from its flags")


# --------------------------------------------------------------------------- kind-specific spec fields


def _kind_fields(
    ctx: _Ctx, info: KindInfo, api: str, spec: Obj, tj_spec: Obj, gen: _Generated, roles: list[Role]
) -> None:
    kind = info.kind
    if kind == "PyTorchJob":
        nproc = spec.get("nprocPerNode")
        elastic = spec.get("elasticPolicy")
        if elastic is not None:
            ep = ctx.typed(elastic, dict, ("spec", "elasticPolicy"), "a mapping")
            ctx.known(ep, TORCH_ELASTIC_FIELDS, ("spec", "elasticPolicy"), "elasticPolicy")
            for key in ep:
                path = ("spec", "elasticPolicy", key)
                if key == "nProcPerNode" and nproc is None:
                    nproc = ep[key]
                    continue
                ctx.row(
                    path,
                    APPROXIMATED if key in ("minReplicas", "maxReplicas") else DROPPED,
                    "TrainJob spec.trainer.numNodes (fixed)" if key in ("minReplicas", "maxReplicas") else "-",
                    "Trainer v2 has no elastic training: the job runs on a fixed number of nodes (the replicas)",
                )
        if nproc is not None:
            where = ("spec", "nprocPerNode") if "nprocPerNode" in spec else ("spec", "elasticPolicy", "nProcPerNode")
            text = str(nproc)
            if (isinstance(nproc, int) and not isinstance(nproc, bool)) or text.isdigit():
                gen.nproc = int(text)
                ctx.row(where, KEPT, "TrainJob spec.trainer.numProcPerNode")
            elif text in ("auto", "gpu", "cpu"):
                ctx.row(
                    where,
                    KEPT if text == "auto" else APPROXIMATED,
                    "TrainJob spec.trainer.numProcPerNode unset (auto)",
                    "v2 auto: one process per GPU, else per CPU of the request"
                    if text != "auto"
                    else "auto is v2's default",
                )
            else:
                raise ctx.error("nprocPerNode must be an integer, auto, cpu or gpu", where)
    elif kind == "TFJob":
        if "successPolicy" in spec:
            value = spec["successPolicy"]
            ctx.row(
                ("spec", "successPolicy"),
                APPROXIMATED,
                "runtime successPolicy" if any(r.type in TF_SPLIT_ROLES for r in roles) else "JobSet default",
                f"{value or 'default'}: the job succeeds when every pod of the chief (or worker) step has "
                "succeeded; v1's default waited for worker 0 only",
            )
        if spec.get("enableDynamicWorker"):
            ctx.typed(spec["enableDynamicWorker"], bool, ("spec", "enableDynamicWorker"), "a boolean")
            gen.tf_sparse = True
            ctx.row(("spec", "enableDynamicWorker"), KEPT, "TF_CONFIG sparseCluster (env KTRAIN_TF_SPARSE=1)")
        elif "enableDynamicWorker" in spec:
            ctx.row(("spec", "enableDynamicWorker"), KEPT, "-", "false: the full cluster spec, as v1")
    elif kind == "PaddleJob":
        if "elasticPolicy" in spec:
            ep = ctx.typed(spec["elasticPolicy"], dict, ("spec", "elasticPolicy"), "a mapping")
            ctx.known(ep, PADDLE_ELASTIC_FIELDS, ("spec", "elasticPolicy"), "elasticPolicy")
            for key in ep:
                ctx.row(("spec", "elasticPolicy", key), DROPPED, "-", "Trainer v2 has no elastic training")
    elif kind == "MXJob":
        if "jobMode" in spec:
            ctx.row(
                ("spec", "jobMode"),
                KEPT,
                "-",
                "informational in v1 too: the replica types decide what runs (MXTrain or MXTune)",
            )
    elif kind == "MPIJob":
        _mpi_fields(ctx, api, spec, gen)


def _mpi_fields(ctx: _Ctx, api: str, spec: Obj, gen: _Generated) -> None:
    if "slotsPerWorker" in spec:
        gen.slots = ctx.typed(spec["slotsPerWorker"], int, ("spec", "slotsPerWorker"), "an integer")
        gen.row(("spec", "slotsPerWorker"), KEPT, "runtime mlPolicy.mpi.numProcPerNode", "the hostfile's slots")
    if "sshAuthMountPath" in spec:
        gen.ssh_path = ctx.typed(spec["sshAuthMountPath"], str, ("spec", "sshAuthMountPath"), "a string")
        gen.row(("spec", "sshAuthMountPath"), KEPT, "runtime mlPolicy.mpi.sshAuthMountPath")
    if "mpiImplementation" in spec:
        impl = ctx.typed(spec["mpiImplementation"], str, ("spec", "mpiImplementation"), "a string")
        if impl not in ("OpenMPI", "Intel", "MPICH"):
            raise ctx.error("mpiImplementation must be OpenMPI, Intel or MPICH", ("spec", "mpiImplementation"))
        gen.mpi_impl = impl
        gen.row(
            ("spec", "mpiImplementation"),
            KEPT if impl == "OpenMPI" else APPROXIMATED,
            "runtime mlPolicy.mpi.mpiImplementation",
            ""
            if impl == "OpenMPI"
            else f"{impl} hostfiles (`host:slots`) are a ktrain extension: render with --allow-extensions; "
            "the Trainer v2.3 CRD accepts only OpenMPI",
        )
    if "runLauncherAsWorker" in spec:
        gen.launcher_as_node = ctx.typed(
            spec["runLauncherAsWorker"], bool, ("spec", "runLauncherAsWorker"), "a boolean"
        )
        gen.row(("spec", "runLauncherAsWorker"), KEPT, "runtime mlPolicy.mpi.runLauncherAsNode")
    if "launcherCreationPolicy" in spec:
        value = spec["launcherCreationPolicy"]
        if value not in ("AtStartup", "WaitForWorkersReady"):
            raise ctx.error(
                "launcherCreationPolicy must be AtStartup or WaitForWorkersReady", ("spec", "launcherCreationPolicy")
            )
        gen.wait_workers = value == "WaitForWorkersReady"
        gen.row(
            ("spec", "launcherCreationPolicy"),
            KEPT,
            "runtime replicatedJobs[launcher].dependsOn [node Ready]" if gen.wait_workers else "-",
            "" if gen.wait_workers else "AtStartup: the launcher starts with the workers",
        )
    if "cleanPodPolicy" in spec:
        ctx.row(("spec", "cleanPodPolicy"), DROPPED, "-", "v2 has no equivalent (see runPolicy.cleanPodPolicy)")
    if "mainContainer" in spec:
        ctx.typed(spec["mainContainer"], str, ("spec", "mainContainer"), "a string")
        ctx.row(("spec", "mainContainer"), KEPT, "the container renamed `node`", "selects the MPI container")
    gen.row(
        ("spec", "mpiReplicaSpecs"),
        APPROXIMATED if api == V1 else KEPT,
        "runtime replicatedJobs launcher + node, mlPolicy.mpi",
        "v1 MPIJobs reached workers with kubectl exec; v2 uses SSH: the worker image must run sshd"
        if api == V1
        else "workers reached over SSH, as mpi-operator v2beta1",
    )


# --------------------------------------------------------------------------- onto an existing runtime


def _same_but_command(a: Role, b: Role) -> bool:
    ta, tb = copy.deepcopy(a.template), copy.deepcopy(b.template)
    for t, r in ((ta, a), (tb, b)):
        cont = t["spec"]["containers"][r.main]
        cont.pop("command", None)
        cont.pop("args", None)
    return ta == tb


def _merged_command(master: Role, worker: Role) -> tuple[list[Any] | None, list[Any] | None, str | None]:
    """(command, args, problem) for one `node` step running both v1 roles: identical, or a
    shell switch that runs the Master's command on node 0 (v1's rank 0)."""
    mc, wc = master.container, worker.container
    if (mc.get("command"), mc.get("args")) == (wc.get("command"), wc.get("args")):
        return mc.get("command"), mc.get("args"), None
    if not mc.get("command") or not wc.get("command"):
        return None, None, "Master and Worker run different args on the image's entrypoint"
    m = [*mc["command"], *(mc.get("args") or [])]
    w = [*wc["command"], *(wc.get("args") or [])]
    return [*ROLE_SWITCH, str(len(m)), *m, *w], None, None


_ROLE_SWITCH_SCRIPT = """n=$1; shift; all=$#
if [ "$KTRAIN_POD_INDEX" -eq 0 ]; then
  i=0
  for a do
    if [ "$i" -lt "$n" ]; then set -- "$@" "$a"; fi
    i=$((i + 1))
  done
  shift "$all"
else
  shift "$n"
fi
exec "$@"
"""
# Node 0 runs the Master's command, the others the Worker's:
# [sh, -c, SCRIPT, ktrain-role, <len(master)>, *master, *worker].
ROLE_SWITCH = ["/bin/sh", "-c", _ROLE_SWITCH_SCRIPT, "ktrain-role"]


def _onto_runtime(
    ctx: _Ctx, info: KindInfo, roles: list[Role], gen: _Generated, runtime: str, trainjob: Obj, name: str
) -> list[tuple[Path, str]]:
    """Fill `trainjob` for a runtime with one `node` step; return what it cannot carry."""
    blockers: list[tuple[Path, str]] = list(gen.blockers)
    spec = trainjob["spec"]
    spec["runtimeRef"] = {"name": runtime}
    ctx.row((), KEPT, f"TrainJob spec.runtimeRef.name {runtime}")
    by_type = {r.type: r for r in roles}
    allowed = {"PyTorchJob": ("Master", "Worker"), "XGBoostJob": ("Master", "Worker")}.get(info.kind, ("Worker",))
    for r in roles:
        if r.type not in allowed:
            blockers.append((r.path, f"a {r.type} replica needs its own replicated job"))
    if "Master" in by_type and by_type["Master"].replicas > 1:
        blockers.append(((*by_type["Master"].path, "replicas"), "more than one Master"))
    main = by_type.get("Worker") or roles[0]
    if info.kind == "MXJob" or info.kind == "MPIJob":
        blockers.append((("spec", info.replica_key), f"a {info.kind} needs several replicated jobs"))
    master = by_type.get("Master") if info.kind in ("PyTorchJob", "XGBoostJob") else None
    command, args = main.container.get("command"), main.container.get("args")
    if master is not None and master is not main:
        if not _same_but_command(master, main):
            blockers.append((master.path, "the Master and Worker pod templates differ"))
        else:
            command, args, problem = _merged_command(master, main)
            if problem:
                blockers.append((master.path, problem))
            elif command and command[:2] == ROLE_SWITCH[:2]:
                ctx.row(
                    (*master.path, "template", "spec", "containers", master.main, "command"),
                    APPROXIMATED,
                    "TrainJob spec.trainer.command (node 0 runs the Master's command)",
                    "v1's Master is node 0 of v2's single node step",
                )
    nodes = sum(r.replicas for r in roles if r.type in allowed)
    trainer: Obj = {"numNodes": nodes}
    for r in roles:
        if r.type in allowed:
            ctx.row((*r.path, "replicas"), KEPT, "TrainJob spec.trainer.numNodes", f"sum of {', '.join(allowed)}")
            ctx.sources[("spec", "trainer", "numNodes")] = (*r.path, "replicas")
    if gen.nproc is not None:
        trainer["numProcPerNode"] = gen.nproc
    cont = main.container
    cpath: Path = (*main.path, "template", "spec", "containers", main.main)
    tf_family = info.framework in podenv.SCRIPTS
    patch_pod: Obj = {}
    patch_cont: Obj = {"name": c.NODE}
    for key, value in cont.items():
        p = (*cpath, key)
        if key == "name":
            ctx.row(p, KEPT, "container `node`", "the trainer container is always named node in v2")
        elif key == "image":
            trainer["image"] = value
            ctx.sources[("spec", "trainer", "image")] = p
            ctx.row(p, KEPT, "TrainJob spec.trainer.image")
        elif key in ("command", "args") and tf_family:
            pass  # below
        elif key == "command":
            if command is not None:
                trainer["command"] = list(command)
                ctx.sources[("spec", "trainer", "command")] = p
            ctx.row(p, KEPT, "TrainJob spec.trainer.command")
        elif key == "args":
            if args is not None:
                trainer["args"] = list(args)
                ctx.sources[("spec", "trainer", "args")] = p
            ctx.row(p, KEPT, "TrainJob spec.trainer.args")
        elif key == "env":
            bad = [e for e in value or [] if not _trainer_env_ok(e)]
            if bad:
                blockers.append((p, "env with a source a TrainJob cannot carry"))
            trainer["env"] = copy.deepcopy(value or [])
            ctx.sources[("spec", "trainer", "env")] = p
            ctx.row(p, KEPT, "TrainJob spec.trainer.env")
        elif key == "resources":
            trainer["resourcesPerNode"] = copy.deepcopy(value)
            ctx.sources[("spec", "trainer", "resourcesPerNode")] = p
            ctx.row(p, KEPT, "TrainJob spec.trainer.resourcesPerNode")
        elif key in ("volumeMounts", "securityContext"):
            patch_cont[key] = copy.deepcopy(value)
            ctx.row(p, KEPT, f"TrainJob runtimePatches containers[node].{key}")
        elif key == "imagePullPolicy" and value == "IfNotPresent":
            ctx.row(p, KEPT, "-", "IfNotPresent is the runtime's default for tagged images")
        elif key == "ports" and _only_framework_port(info, value):
            ctx.row(
                p,
                KEPT if tf_family else DROPPED,
                "runtime env KTRAIN_ROLES" if tf_family else "-",
                "the framework port" + ("" if tf_family else f"; v2 uses {c.CONTAINER_TRAINER_PORT}"),
            )
        else:
            blockers.append((p, f"container field {key} needs a runtime"))
    if tf_family:
        program = [*(cont.get("command") or []), *(cont.get("args") or [])]
        if not cont.get("command") and cont.get("args"):
            blockers.append(((*cpath, "args"), "args for the image's entrypoint cannot run under the env wrapper"))
        trainer["args"] = program
        for key in ("command", "args"):
            if key in cont:
                ctx.row(
                    (*cpath, key),
                    KEPT,
                    "TrainJob spec.trainer.args",
                    "the runtime's command is the env wrapper; it execs the args",
                )
                ctx.sources[("spec", "trainer", "args")] = (*cpath, key)
        if _int_port(info, main) != info.default_port:
            blockers.append(((*cpath, "ports"), "a non-default framework port"))
        if gen.tf_sparse:
            trainer.setdefault("env", []).append({"name": "KTRAIN_TF_SPARSE", "value": "1"})
    compat, _ = _compat_env(info, roles, name, nodes, gen.nproc)
    if compat:
        trainer.setdefault("env", [])
        names = {e.get("name") for e in trainer["env"]}
        trainer["env"].extend(e for e in compat if e["name"] not in names)
    if master is not None and command and command[:2] == ROLE_SWITCH[:2]:
        trainer.setdefault("env", []).append(
            {"name": "KTRAIN_POD_INDEX", "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}}}
        )
    meta = main.template.get("metadata") or {}
    patch_meta: Obj = {}
    for key, value in meta.items():
        p = (*main.path, "template", "metadata", key)
        if key in ("labels", "annotations"):
            patch_meta[key] = copy.deepcopy(value)
            ctx.row(p, KEPT, f"TrainJob runtimePatches pod template metadata.{key}")
        else:
            ctx.row(p, DROPPED, "-", "pod names come from JobSet")
    pod = main.template["spec"]
    for key, value in pod.items():
        p = (*main.path, "template", "spec", key)
        if key == "containers":
            if len(value) > 1:
                blockers.append((p, "sidecar containers need a runtime"))
            continue
        if key in PATCHABLE_POD:
            patch_pod[key] = copy.deepcopy(value)
            ctx.row(p, KEPT, f"TrainJob runtimePatches pod spec {key}")
        elif key == "restartPolicy" and value == "OnFailure":
            ctx.row(p, KEPT, "-", "OnFailure is what JobSet gives Job pods")
        else:
            blockers.append((p, f"pod field {key} needs a runtime"))
    for r in roles:
        if r.type in allowed:
            _restart_rows(ctx, r, blockers)
        if r is not main and (master is None or r is not master):
            continue
        if r is master and r is not main:
            ctx.row((*r.path, "template"), KEPT, "TrainJob (same template as the Worker)", "node 0 is v1's Master")
    if len(patch_cont) > 1:
        patch_pod["containers"] = [patch_cont]
    patch_template: Obj = {}
    if patch_meta:
        patch_template["metadata"] = patch_meta
    if patch_pod:
        patch_template["spec"] = patch_pod
    if patch_template:
        spec["runtimePatches"] = [
            {
                "manager": PATCH_MANAGER,
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [{"name": c.NODE, "template": {"spec": {"template": patch_template}}}]
                        }
                    }
                },
            }
        ]
    spec["trainer"] = trainer
    return blockers


def _restart_rows(ctx: _Ctx, r: Role, blockers: list[tuple[Path, str]]) -> None:
    p = (*r.path, "restartPolicy")
    restart = r.restart or r.default_restart
    if restart == "OnFailure":
        ctx.row(p, KEPT, "pod restartPolicy OnFailure", "" if r.restart else "unset: v1's default, JobSet's too")
    elif restart == "Always":
        ctx.row(
            p, APPROXIMATED, "pod restartPolicy OnFailure", "Job pods cannot be Always; OnFailure restarts them too"
        )
    else:
        blockers.append((p, f"restartPolicy {restart} needs a runtime"))


def _only_framework_port(info: KindInfo, ports: Any) -> bool:
    if not isinstance(ports, list):
        return False
    return all(isinstance(p, dict) and p.get("name") == info.port_name for p in ports)


def _trainer_env_ok(env: Any) -> bool:
    if not isinstance(env, dict):
        return False
    source = env.get("valueFrom")
    return source is None or (isinstance(source, dict) and set(source) <= set(ENV_SOURCES))


def _compat_env(
    info: KindInfo, roles: list[Role], name: str, nodes: int, nproc: int | None, master_rjob: str = c.NODE
) -> tuple[list[Obj], list[Obj]]:
    """(trainer env, separate Master env): what the v1 controller set that v2's policies name
    differently, so scripts that read it keep working. pytorch `envvar.go` setPodEnv + master
    env generator, xgboost `xgboostjob_controller.go` SetPodEnv, jax `envvar.go` setPodEnv.
    Hosts are JobSet's; ports stay v1's (the program listens where it reads them)."""
    by_type = {r.type: r for r in roles}
    host = f"{name}-{master_rjob}-0-0.{name}"
    rank: Obj = {"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}}}
    separate = master_rjob != c.NODE
    total = sum(r.replicas for r in roles)
    if info.kind == "PyTorchJob":
        if "Master" not in by_type:
            return [{"name": "PYTHONUNBUFFERED", "value": "0"}], []
        port = str(_int_port(info, by_type["Master"]))
        env = [
            {"name": "PYTHONUNBUFFERED", "value": "0"},
            {"name": "MASTER_ADDR", "value": host},
            {"name": "MASTER_PORT", "value": port},
            {"name": "WORLD_SIZE", "value": str(total * (nproc or 1))},
        ]
        return [*env, rank], ([*env, {"name": "RANK", "value": "0"}] if separate else [])
    if info.kind == "XGBoostJob":
        master = by_type.get("Master")
        port = str(_int_port(info, master)) if master else str(info.default_port)
        env = [
            {"name": "MASTER_PORT", "value": port},
            {"name": "MASTER_ADDR", "value": host},
            {"name": "WORLD_SIZE", "value": str(total)},
        ]
        tail = [{"name": "PYTHONUNBUFFERED", "value": "0"}]
        if total > 1 and "Worker" in by_type:
            wport = str(_int_port(info, by_type["Worker"]))
            wrj = c.NODE
            offset = 0 if separate else (by_type["Master"].replicas if master else 0)
            addrs = ",".join(f"{name}-{wrj}-0-{i + offset}.{name}" for i in range(total - 1))
            tail += [{"name": "WORKER_PORT", "value": wport}, {"name": "WORKER_ADDRS", "value": addrs}]
        return [*env, rank, *tail], ([*env, {"name": "RANK", "value": "0"}, *tail] if separate else [])
    if info.kind == "JAXJob":
        worker = by_type.get("Worker")
        port = str(_int_port(info, worker)) if worker else str(info.default_port)
        return [
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "COORDINATOR_PORT", "value": port},
            {"name": "COORDINATOR_ADDRESS", "value": host},
            {"name": "NUM_PROCESSES", "value": str(total)},
            {"name": "PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}}},
        ], []
    return [], []


# --------------------------------------------------------------------------- generated runtime


class _Generated:
    """A TrainingRuntime built from the v1 pod templates (used when no runtime fits)."""

    def __init__(self, ctx: _Ctx, info: KindInfo, api: str, spec: Obj, roles: list[Role], name: str) -> None:
        self.ctx = ctx
        self.info = info
        self.api = api
        self.roles = roles
        self.name = name
        self.runtime_name = f"{name[:60].rstrip('-.')}-v1"
        self.ctx_rows: list[Row] = []
        self.sources: dict[Path, Path] = {}
        self.rjob_roles: dict[str, Role] = {}
        self.runtime_sources: list[tuple[Path, Path]] = []
        self.blockers: list[tuple[Path, str]] = []
        self.backoff_limit: int | None = None
        self.queue: str | None = None
        self.schedule_timeout: int | None = None
        self.priority_class: str | None = None
        self.gang: str | None = None
        self.nproc: int | None = None
        self.tf_sparse = False
        self.slots: int | None = None
        self.ssh_path: str | None = None
        self.mpi_impl: str | None = None
        self.launcher_as_node = False
        self.wait_workers = False

    def row(self, path: Path, status: str, target: str, note: str = "") -> None:
        self.ctx_rows.append(Row(path_text(path) or "(the job)", status, target, note))

    def block(self, path: Path, why: str) -> None:
        self.blockers.append((path, why))

    def _rjob_name(self, role: Role, trainer: Role) -> str:
        if self.info.kind == "MPIJob":
            return c.LAUNCHER if role.type == "Launcher" else c.NODE
        return c.NODE if role is trainer else role.rt

    def _trainer_role(self) -> Role:
        by_type = {r.type: r for r in self.roles}
        order = {
            "MPIJob": ("Launcher",),
            "TFJob": ("Worker", "Chief", "Master", "PS", "Evaluator"),
            "MXJob": ("Worker", "Scheduler", "Server", "Tuner", "TunerServer", "TunerTracker"),
        }.get(self.info.kind, ("Worker", "Master"))
        for t in order:
            if t in by_type:
                return by_type[t]
        return self.roles[0]

    def build(self, trainjob: Obj, namespace: str | None) -> Obj:
        info, ctx = self.info, self.ctx
        trainer_role = self._trainer_role()
        merge_master = info.kind in ("PyTorchJob", "XGBoostJob")
        by_type = {r.type: r for r in self.roles}
        # PyTorch/XGBoost: Master and Worker run as one `node` step when only their commands
        # differ (node 0 is v1's Master, as v1's rank 0), so v2's policy env covers them all.
        separate = merge_master and "Master" in by_type and "Worker" in by_type
        merged: Role | None = None
        command_override: tuple[list[Any] | None, list[Any] | None] | None = None
        if merge_master and "Master" in by_type and "Worker" in by_type:
            master, worker = by_type["Master"], by_type["Worker"]
            if master.replicas == 1 and _same_but_command(master, worker):
                cmd, args, problem = _merged_command(master, worker)
                if problem is None:
                    merged = master
                    command_override = (cmd, args)
        rjobs: list[Obj] = []
        fw_roles: list[tuple[str, str, int, int]] = []
        trainer_count = trainer_role.replicas
        if merged is not None:
            trainer_count = by_type["Master"].replicas + by_type["Worker"].replicas
        for role in self.roles:
            if role is merged:
                ctx.row((*role.path, "replicas"), KEPT, "TrainJob spec.trainer.numNodes", "Master + Worker nodes")
                ctx.row((*role.path, "template"), KEPT, "runtime replicatedJobs[node]", "node 0 runs the Master")
                worker_restart = by_type["Worker"].restart or by_type["Worker"].default_restart
                mine = role.restart or role.default_restart
                ctx.row(
                    (*role.path, "restartPolicy"),
                    KEPT if mine == worker_restart else APPROXIMATED,
                    f"runtime replicatedJobs[node] pod restartPolicy {worker_restart}",
                    "" if mine == worker_restart else f"the Master's {mine} gives way to the Worker's (one step)",
                )
                continue
            rj = self._rjob_name(role, trainer_role if merged is None else by_type["Worker"])
            if role.replicas == 0:
                ctx.row((*role.path, "replicas"), DROPPED, "-", "0 replicas: no replicated job")
                continue
            is_trainer = role is trainer_role or (merged is not None and role.type == "Worker")
            fw_roles.append((rj, role.rt, role.replicas, _int_port(info, role) if info.default_port else 0))
            rjobs.append(self._rjob(role, rj, is_trainer, command_override if is_trainer and merged else None))
            self.rjob_roles[rj] = role
        if info.framework in podenv.SCRIPTS:
            self._framework_env(rjobs, fw_roles)
        if info.kind == "MPIJob":
            rjobs.sort(key=lambda r: 0 if r["name"] == c.NODE else 1)  # node first: the launcher may depend on it
        ml: Obj = {"numNodes": 1 if info.kind == "MPIJob" else trainer_count}
        policy = {"PyTorchJob": "torch", "XGBoostJob": "xgboost", "JAXJob": "jax"}.get(info.kind)
        if policy:
            ml[policy] = {}
        if info.kind == "MPIJob":
            mpi: Obj = {
                "numProcPerNode": self.slots if self.slots is not None else 1,
                "mpiImplementation": self.mpi_impl or "OpenMPI",
                "runLauncherAsNode": self.launcher_as_node,
            }
            if self.ssh_path:
                mpi["sshAuthMountPath"] = self.ssh_path
            ml["mpi"] = mpi
        for k, rjob in enumerate(rjobs):
            self.runtime_sources.append(
                (
                    ("spec", "template", "spec", "replicatedJobs", k, "template", "spec", "template"),
                    (*self.rjob_roles[rjob["name"]].path, "template"),
                )
            )
        rt_spec: Obj = {"mlPolicy": ml}
        if self.gang == "volcano":
            rt_spec["podGroupPolicy"] = {"volcano": {}}
        elif self.gang == "coscheduling":
            rt_spec["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": self.schedule_timeout or 60}}
        js: Obj = {"replicatedJobs": rjobs}
        success = self._success(rjobs)
        if success:
            js["successPolicy"] = success
        template: Obj = {"spec": js}
        if self.queue:
            template["metadata"] = {"annotations": {c.VOLCANO_QUEUE_ANNOTATION: self.queue}}
        rt_spec["template"] = template
        meta: Obj = {
            "name": self.runtime_name,
            "labels": {c.LABEL_FRAMEWORK: info.framework, "ktrain.io/converted-from": info.kind.lower()},
        }
        if namespace:
            meta["namespace"] = namespace
        runtime = {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": c.TRAINING_RUNTIME_KIND,
            "metadata": meta,
            "spec": rt_spec,
        }
        spec = trainjob["spec"]
        spec["runtimeRef"] = {"name": self.runtime_name, "kind": c.TRAINING_RUNTIME_KIND}
        ctx.row(
            (),
            KEPT,
            f"TrainJob spec.runtimeRef TrainingRuntime {self.runtime_name}",
            "generated from the v1 pod templates",
        )
        if info.kind == "MPIJob":
            workers = by_type.get("Worker")
            n = workers.replicas if workers else 0
            trainer: Obj = {"numNodes": n + 1 if self.launcher_as_node else max(n, 1)}
            if workers:
                self.sources[("spec", "trainer", "numNodes")] = (*workers.path, "replicas")
        else:
            trainer = {"numNodes": trainer_count}
            self.sources[("spec", "trainer", "numNodes")] = (*trainer_role.path, "replicas")
            if self.nproc is not None:
                trainer["numProcPerNode"] = self.nproc
            compat, master_env = _compat_env(
                info, self.roles, self.name, trainer_count, self.nproc, c.NODE if merged or not separate else "master"
            )
            if master_env:
                for rjob in rjobs:
                    if rjob["name"] == "master":
                        cont = rjob["template"]["spec"]["template"]["spec"]["containers"]
                        main = next(x for x in cont if x.get("name") == c.NODE)
                        names = {e.get("name") for e in main.get("env") or []}
                        main["env"] = [*(main.get("env") or []), *(e for e in master_env if e["name"] not in names)]
                ctx.row(
                    (*by_type["Master"].path, "template"),
                    APPROXIMATED,
                    "runtime replicatedJobs[master]",
                    "Master and Worker differ beyond their command, so the Master runs as its own step: "
                    "the v2 policy env (and RANK) of the workers counts from 0 among workers (v1: 1..N)",
                )
            if (
                merged is not None
                and command_override
                and command_override[0]
                and command_override[0][:2] == ROLE_SWITCH[:2]
            ):
                compat.append(
                    {
                        "name": "KTRAIN_POD_INDEX",
                        "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}},
                    }
                )
            if compat:
                trainer["env"] = compat
        spec["trainer"] = trainer
        return runtime

    def _framework_env(self, rjobs: list[Obj], fw_roles: list[tuple[str, str, int, int]]) -> None:
        """The env v1 computed per pod. Counts are fixed here, so TensorFlow and MXNet get plain
        env values (the kubelet substitutes the JobSet name and pod index); PaddlePaddle's rank 0
        differs from the others, so its containers start through the wrapper when they have a
        command."""
        info, ctx = self.info, self.ctx
        labels: dict[str, str] = {}
        for role in self.roles:
            tuner = ((role.template.get("metadata") or {}).get("annotations") or {}).get("tuner-server-key")
            if tuner:
                labels[role.rt] = str(tuner)
        mains = []
        for rjob in rjobs:
            cont = rjob["template"]["spec"]["template"]["spec"]["containers"]
            mains.append((rjob["name"], next(x for x in cont if x.get("name") == c.NODE)))
        use_wrapper = info.framework == "paddle" and all(main.get("command") for _, main in mains)
        names = {"tensorflow": "TF_CONFIG", "paddle": "PADDLE_*", "mxnet": "MX_CONFIG and DMLC_*"}[info.framework]
        for rj, main in mains:
            user_env = main.get("env") or []
            if use_wrapper:
                extra = [{"name": "KTRAIN_TF_SPARSE", "value": "1"}] if self.tf_sparse else []
                program = [*(main.pop("command", None) or []), *(main.pop("args", None) or [])]
                main["command"] = podenv.wrapper_command(info.framework)
                main["args"] = program
                roles_env = podenv.roles_value([(a, b, str(n), p) for a, b, n, p in fw_roles])
                main["env"] = [*podenv.wrapper_env(roles_env, extra), *user_env]
                continue
            if info.framework == "tensorflow":
                static = podenv.tf_static_env(fw_roles, rj, self.tf_sparse)
            elif info.framework == "mxnet":
                static = podenv.mxnet_static_env(fw_roles, rj, labels)
            else:
                static = podenv.paddle_static_env(fw_roles, rj)
            main["env"] = [*podenv.reference_env(), *user_env, *static]
        if use_wrapper:
            ctx.row(
                (*self.roles[0].path[:2],),
                KEPT,
                "runtime containers node: command = the env wrapper, args = the v1 command + args",
                f"{names} computed in each pod as the v1 controller did",
            )
        elif info.framework == "paddle":
            ctx.row(
                (*self.roles[0].path[:2],),
                APPROXIMATED,
                "runtime containers node env PADDLE_*",
                "a container without a command runs its image's entrypoint, so rank 0 names the master "
                "by its host name where v1 gave it its pod IP; set command to get v1's exact values",
            )
        else:
            ctx.row(
                (*self.roles[0].path[:2],),
                KEPT,
                f"runtime containers node env {names}",
                "v1's values, with JobSet's host names (the kubelet fills in the JobSet name and pod index)",
            )

    def _mpi_env(self, rj: str) -> list[Obj]:
        """What mpi-operator v2beta1 (`mpi_job_controller.go` launcherEnvVars/workerEnvVars,
        intelEnvVars, mpichEnvVars, I_MPI_PERHOST) sets that v2's MPI policy does not: the OpenMPI
        variables v2 sets itself."""
        if self.api == V1:
            return []
        env = [{"name": "K_MPI_JOB_ROLE", "value": "launcher" if rj == c.LAUNCHER else "worker"}]
        if rj != c.LAUNCHER:
            return env
        hostfile = "/etc/mpi/hostfile"
        if self.mpi_impl == "Intel":
            env += [
                {"name": "I_MPI_HYDRA_HOST_FILE", "value": hostfile},
                {"name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
                {"name": "I_MPI_PERHOST", "value": str(self.slots if self.slots is not None else 1)},
            ]
        elif self.mpi_impl == "MPICH":
            env += [
                {"name": "HYDRA_HOST_FILE", "value": hostfile},
                {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
            ]
        return env

    def _success(self, rjobs: list[Obj]) -> Obj | None:
        names = [r["name"] for r in rjobs]
        if self.info.kind == "MPIJob" and c.LAUNCHER in names:
            return {"operator": "All", "targetReplicatedJobs": [c.LAUNCHER]}
        if self.info.kind in ("PyTorchJob", "XGBoostJob") and "master" in names:
            return {"operator": "All", "targetReplicatedJobs": ["master"]}  # v1: the Master's success
        if len(names) < 2:
            return None
        for first in ("chief", "master"):
            if self.info.kind == "TFJob" and first in names:
                return {"operator": "All", "targetReplicatedJobs": [first]}
        if c.NODE in names:
            return {"operator": "All", "targetReplicatedJobs": [c.NODE]}
        return None

    def _rjob(
        self, role: Role, rj: str, is_trainer: bool, command: tuple[list[Any] | None, list[Any] | None] | None
    ) -> Obj:
        ctx, info = self.ctx, self.info
        pod_template = copy.deepcopy(role.template)
        pod = pod_template["spec"]
        target = f"runtime replicatedJobs[{rj}]"
        if info.kind == "MPIJob":
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                "runtime mlPolicy.numNodes 1 (the launcher)" if rj == c.LAUNCHER else "TrainJob spec.trainer.numNodes",
            )
        else:
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                "TrainJob spec.trainer.numNodes" if is_trainer else f"{target} parallelism",
            )
        cont = pod["containers"][role.main]
        old = cont.get("name")
        cont["name"] = c.NODE
        if command is not None:
            cmd, args = command
            cont.pop("command", None)
            cont.pop("args", None)
            if cmd is not None:
                cont["command"] = cmd
            if args is not None:
                cont["args"] = args
        cpath = (*role.path, "template", "spec", "containers", role.main)
        ctx.row((*cpath, "name"), KEPT, f"{target} container `node`", f"was {old!r}: v2 plugins act on `node`")
        for key in cont:
            if key != "name":
                ctx.row((*cpath, key), KEPT, f"{target} container node.{key}")
        for i, other in enumerate(pod["containers"]):
            if i != role.main:
                if other.get("name") == c.NODE:
                    raise ctx.error(
                        "a container is already named `node`; ktrain renames the framework container to it",
                        (*role.path, "template", "spec", "containers", i, "name"),
                        hint="rename that container",
                    )
                ctx.row(
                    (*role.path, "template", "spec", "containers", i), KEPT, f"{target} container {other.get('name')}"
                )
        for key in pod:
            if key != "containers":
                ctx.row((*role.path, "template", "spec", key), KEPT, f"{target} pod spec {key}")
        for key in pod_template.get("metadata") or {}:
            ctx.row((*role.path, "template", "metadata", key), KEPT, f"{target} pod template metadata.{key}")
        # Job pods may only be OnFailure or Never.
        restart = role.restart or role.default_restart
        p = (*role.path, "restartPolicy")
        unset = "" if role.restart else f" (unset: v1's default for a {info.kind} {role.type})"
        if restart == "Always":
            pod["restartPolicy"] = "OnFailure"
            ctx.row(p, APPROXIMATED, f"{target} pod restartPolicy OnFailure", "Job pods cannot be Always")
        elif restart == "ExitCode":
            pod["restartPolicy"] = "Never"
            ctx.row(
                p,
                APPROXIMATED,
                f"{target} pod restartPolicy Never",
                "failed pods are replaced up to the Job's backoffLimit whatever their exit code "
                "(v1 retried only exit codes 128-255)",
            )
        else:
            pod["restartPolicy"] = restart
            ctx.row(p, KEPT, f"{target} pod restartPolicy {restart}", unset.strip(" ()"))
        if pod.get("restartPolicy") == "Always":
            pod["restartPolicy"] = "OnFailure"
        mpi_env = self._mpi_env(rj) if info.kind == "MPIJob" else []
        if mpi_env:
            cont["env"] = [*(cont.get("env") or []), *mpi_env]
        if self.priority_class and "priorityClassName" not in pod:
            pod["priorityClassName"] = self.priority_class
        pod_template.pop("metadata", None) if not pod_template.get("metadata") else None
        job_spec: Obj = {"template": pod_template}
        if not is_trainer:
            job_spec["parallelism"] = role.replicas
            job_spec["completions"] = role.replicas
        if self.backoff_limit is not None:
            job_spec["backoffLimit"] = self.backoff_limit
        rjob: Obj = {"name": rj, "template": {"spec": job_spec}}
        if is_trainer:
            rjob["template"] = {"metadata": {"labels": {c.LABEL_ANCESTOR: c.ANCESTOR_TRAINER}}, "spec": job_spec}
        if info.kind == "MPIJob" and rj == c.LAUNCHER and self.wait_workers:
            rjob["dependsOn"] = [{"name": c.NODE, "status": "Ready"}]
        return rjob
