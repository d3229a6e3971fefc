"""The replica specs of a v1 job, read and checked: one `Role` per v1 replica type."""

from __future__ import annotations

import difflib

from ktrain.convert.common import RESTART_POLICIES, Ctx, Role, without_nulls
from ktrain.convert.kinds import REPLICA_SPEC_FIELDS, V1, KindInfo, default_restart
from ktrain.convert.podspec import prune
from ktrain.convert.report import DROPPED, KEPT
from ktrain.inputs.documents import Path
from ktrain.util.jsondata import Obj


def read_roles(ctx: Ctx, info: KindInfo, spec: Obj, api: str) -> list[Role]:
    key = info.replica_key
    if key not in spec:
        raise ctx.error(f"{info.kind} has no spec.{key}", ("spec",))
    specs = ctx.typed(spec[key], dict, ("spec", key), "a mapping of replica type to replica spec")
    if not specs:
        raise ctx.error(f"spec.{key} is empty", ("spec", key))
    by_type: dict[str, Role] = {}
    for rtype, rspec in specs.items():
        path: Path = ("spec", key, rtype)
        canonical = camel_case(info, api, rtype)
        if canonical != rtype:
            if canonical in specs or canonical in by_type:
                raise ctx.error(
                    f"replica types {rtype!r} and {canonical!r} are the same type to the v1 API (case does not matter)",
                    path,
                    key=True,
                )
            ctx.row(path, KEPT, f"replica type {canonical}", f"v1's defaulter renamed {rtype!r} to {canonical!r}")
            rtype = canonical
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
        # An MPIJob Worker's replicas default to 0: SetDefaults_MPIJob (training-operator
        # pkg/apis/kubeflow.org/v1 mpi_defaults.go) and mpi-operator v2beta1 setDefaultsTypeWorker;
        # every other replica type's to 1.
        replicas = rspec.get("replicas", 0 if info.kind == "MPIJob" and rtype == "Worker" else 1)
        replicas = ctx.typed(replicas, int, (*path, "replicas"), "an integer")
        if replicas < 0:
            raise ctx.error("replicas must be >= 0", (*path, "replicas"))
        if replicas > MAX_INT32:
            raise ctx.error(f"replicas must be at most {MAX_INT32} (an int32 in the v1 API)", (*path, "replicas"))
        restart = rspec.get("restartPolicy")
        if restart is not None and restart not in RESTART_POLICIES:
            raise ctx.error(f"restartPolicy must be one of {', '.join(RESTART_POLICIES)}", (*path, "restartPolicy"))
        template = ctx.typed(rspec.get("template"), dict, (*path, "template"), "a pod template (mapping)")
        template, pruned = prune(template)
        for where in pruned:
            ctx.row(
                (*path, "template", *where),
                DROPPED,
                "-",
                "not a field of a pod template (core/v1 PodTemplateSpec): the v1 API server pruned it",
            )
        pod = ctx.typed(template.get("spec"), dict, (*path, "template", "spec"), "a pod spec (mapping)")
        if template.get("metadata") is not None:
            meta = ctx.typed(template["metadata"], dict, (*path, "template", "metadata"), "a mapping")
            for mkey in ("labels", "annotations"):
                if meta.get(mkey) is not None:
                    ctx.typed(meta[mkey], dict, (*path, "template", "metadata", mkey), "a mapping")
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
        main = main_container(ctx, info, spec, api, rtype, containers, (*path, "template", "spec", "containers"))
        by_type[rtype] = Role(
            rtype, replicas, restart, without_nulls(template), path, main, default_restart(info, api, rtype)
        )
    # pkg/apis/kubeflow.org/v1 pytorch_validation.go / xgboost_validation.go: the API server
    # refused these, and the controllers' env (ranks, MASTER_ADDR) assumes them.
    master = by_type.get("Master")
    if info.kind in ("PyTorchJob", "XGBoostJob") and master is not None and master.replicas != 1:
        raise ctx.error(
            f"{info.kind} is not valid: there must be only 1 master replica (got {master.replicas})",
            (*master.path, "replicas"),
        )
    if info.kind == "XGBoostJob" and master is None:
        raise ctx.error("XGBoostJob is not valid: a Master replica spec must be present", ("spec", key))
    roles = [by_type[t] for t in info.roles if t in by_type]
    _check_sizes(ctx, info, roles, str(spec_name(ctx)))
    return roles


def camel_case(info: KindInfo, api: str, rtype: object) -> object:
    """The replica type as the v1 API server stored it: the training-operator's defaulting webhook
    (`setTypeNameToCamelCase` in pkg/apis/kubeflow.org/v1/defaulting_utils.go, called from
    SetDefaults_PyTorchJob, _TFJob, _XGBoostJob, _PaddleJob, _JAXJob, _MXJob) renamed `ps`, `Ps`,
    `WORKER` ... to the type's own case before any controller read the job. SetDefaults_MPIJob does
    not, and mpi-operator's v2beta1 has no such defaulter."""
    if api != V1 or info.kind == "MPIJob" or not isinstance(rtype, str) or rtype in info.roles:
        return rtype
    for role in info.roles:
        if role.lower() == rtype.lower():
            return role
    return rtype


# The largest object the API server stores (etcd's default --max-request-bytes, 1.5 MiB): a JobSet
# whose env lists every host of a huge job is refused, so ktrain refuses it first instead of
# building gigabytes (a 2 KB XGBoostJob with 2^31-1 replicas).
MAX_OBJECT_BYTES = 1536 * 1024
MAX_INT32 = 2147483647


def spec_name(ctx: Ctx) -> str:
    meta = ctx.doc.data
    for part in ctx.base:
        meta = meta[part]
    meta = meta.get("metadata") if isinstance(meta, dict) else None
    name = meta.get("name") or meta.get("generateName") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else "x" * 63


def list_bytes(info: KindInfo, roles: list[Role], name: str) -> int:
    """About how many bytes of env values list every host of the job once (TF_CONFIG and
    MX_CONFIG list each host in every role's template, XGBoost's WORKER_ADDRS every worker):
    `<name>-<step>-<j>-<i>.<name>:<port>` with JSON quoting, host names as `$(KTRAIN_JOBSET)`
    references in TF and MXNet."""
    hosts = sum(r.replicas for r in roles)
    width = 2 * max(len(name), len("$(KTRAIN_JOBSET)")) + len(str(hosts)) + 32
    if info.kind in ("TFJob", "MXJob"):
        return hosts * width * len(roles)
    if info.kind == "XGBoostJob":
        return max(hosts - 1, 0) * width
    return 0


def _check_sizes(ctx: Ctx, info: KindInfo, roles: list[Role], name: str) -> None:
    size = list_bytes(info, roles, name)
    if size <= MAX_OBJECT_BYTES:
        return
    biggest = max(roles, key=lambda r: r.replicas)
    what = {"TFJob": "TF_CONFIG", "MXJob": "MX_CONFIG", "XGBoostJob": "WORKER_ADDRS"}[info.kind]
    raise ctx.error(
        f"{sum(r.replicas for r in roles)} replicas: the {what} env values listing every host would take about "
        f"{size} bytes, more than the {MAX_OBJECT_BYTES} bytes the API server stores in one object",
        (*biggest.path, "replicas"),
        hint="the JobSet could not be created; split the job or lower replicas",
    )


def main_container(ctx: Ctx, info: KindInfo, spec: Obj, api: str, rtype: str, containers: list[Obj], path: Path) -> int:
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
