"""A v1 job onto an existing runtime with one `node` step (a bundled runtime, or `--runtime`):
the TrainJob's trainer fields plus one runtime patch; what they cannot carry blocks it."""

from __future__ import annotations

import copy
from typing import Any

from ktrain import constants as c
from ktrain.convert import podenv
from ktrain.convert.common import (
    ENV_SOURCES,
    PATCH_MANAGER,
    PATCHABLE_POD,
    Ctx,
    Obj,
    Role,
    Settings,
    default_pull_policy,
    int_port,
)
from ktrain.convert.compat import Torch, framework_env, user_env_names, user_kept_note, without_user_set
from ktrain.convert.kinds import KindInfo
from ktrain.convert.layout import MERGING_KINDS, ROLE_SWITCH, Plan
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import Path


def onto_runtime(
    ctx: Ctx,
    info: KindInfo,
    roles: list[Role],
    gen: Settings,
    plan: Plan,
    runtime: str,
    trainjob: Obj,
    name: str,
) -> list[tuple[Path, str]]:
    """Fill `trainjob` for a runtime with one `node` step; return what it cannot carry."""
    blockers: list[tuple[Path, str]] = list(gen.blockers)
    spec = trainjob["spec"]
    spec["runtimeRef"] = {"name": runtime}
    ctx.row((), KEPT, f"TrainJob spec.runtimeRef.name {runtime}")
    by_type = {r.type: r for r in roles}
    allowed = ("Master", "Worker") if info.kind in MERGING_KINDS else ("Worker",)
    for r in roles:
        if r.type not in allowed:
            blockers.append((r.path, f"a {r.type} replica needs its own replicated job"))
    main = by_type.get("Worker") or roles[0]
    if info.kind == "MXJob" or info.kind == "MPIJob":
        blockers.append((("spec", info.replica_key), f"a {info.kind} needs several replicated jobs"))
    master = by_type.get("Master") if info.kind in MERGING_KINDS else None
    command, args = main.container.get("command"), main.container.get("args")
    if master is not None and master is not main:
        if not plan.merged:
            blockers.append((master.path, plan.problem))
        else:
            command, args = plan.command, plan.args
            if command and command[:2] == ROLE_SWITCH[:2]:
                ctx.row(
                    (*master.path, "template", "spec", "containers", master.main, "command"),
                    KEPT,
                    "TrainJob spec.trainer.command (node 0 runs the Master's command)",
                    "v1's Master (rank 0) is node 0 of the node step; a shell switch picks its command",
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
        elif key == "imagePullPolicy":
            default = default_pull_policy(str(cont.get("image", "")))
            if value == default:
                ctx.row(p, KEPT, "-", f"{value} is what Kubernetes gives this image when no policy is set")
            else:
                blockers.append((p, f"imagePullPolicy {value} needs a runtime (this image's default is {default})"))
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
        if int_port(info, main) != info.default_port:
            blockers.append(((*cpath, "ports"), "a non-default framework port"))
        if gen.tf_sparse:
            trainer.setdefault("env", []).append({"name": "KTRAIN_TF_SPARSE", "value": "1"})
        if info.kind == "PaddleJob" and "PYTHONUNBUFFERED" in user_env_names(main):
            ctx.row(
                (*main.path[:2],),
                KEPT,
                "TrainJob spec.trainer.env PYTHONUNBUFFERED",
                "the user's own PYTHONUNBUFFERED kept as written (v1 appended its value after it, and that one won)",
            )
    if info.kind in ("PyTorchJob", "XGBoostJob", "JAXJob"):
        torch = Torch(gen.nproc_text, gen.elastic, policy=True)
        full = framework_env(info, roles, name, plan.layout, main.type, torch)
        v1_env = without_user_set(full, user_env_names(main))
        kept = user_kept_note(full, user_env_names(main))
        if v1_env or kept:
            _env_rows(ctx, info, main, roles, v1_env, kept, gen.elastic)
            trainer["env"] = [*trainer.get("env", []), *v1_env]
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
        if r is master and r is not main and plan.merged:  # else its template is dropped (a blocker above)
            ctx.row((*r.path, "template"), KEPT, "TrainJob (same template as the Worker)", "node 0 is v1's Master")
    if info.kind == "TFJob" and gen.tf_success != "AllWorkers":
        ctx.row(
            ("spec", "successPolicy"),
            APPROXIMATED,
            "JobSet default: every worker",
            f"{gen.tf_success or 'unset'}: v1's TFJob succeeded when worker 0 did; "
            "the runtime's JobSet succeeds when every worker has",
        )
    elif info.kind == "TFJob":
        ctx.row(("spec", "successPolicy"), KEPT, "JobSet default: every worker", "AllWorkers, as v1")
    if len(patch_cont) > 1:
        patch_pod["containers"] = [patch_cont]
    patch_template: Obj = {}
    if patch_meta:
        patch_template["metadata"] = patch_meta
    if patch_pod:
        patch_template["spec"] = patch_pod
    if patch_template:
        node = {"name": c.NODE, "template": {"spec": {"template": patch_template}}}
        add_patch(spec, {"template": {"spec": {"replicatedJobs": [node]}}})
    spec["trainer"] = trainer
    return blockers


def add_patch(spec: Obj, training_runtime_spec: Obj) -> None:
    """Merge into the TrainJob's conversion patch (manager ktrain.io/convert)."""
    patches = spec.setdefault("runtimePatches", [])
    mine = next((p for p in patches if p.get("manager") == PATCH_MANAGER), None)
    if mine is None:
        mine = {"manager": PATCH_MANAGER, "trainingRuntimeSpec": {}}
        patches.append(mine)
    _merge(mine["trainingRuntimeSpec"], training_runtime_spec)


def _merge(into: Obj, extra: Obj) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _env_rows(
    ctx: Ctx, info: KindInfo, main: Role, roles: list[Role], env: list[Obj], kept: str, elastic: Obj | None
) -> None:
    names = ", ".join(e["name"] for e in env) or "(none to add)"
    note = "what v1's controller set, with JobSet's host names" + kept
    if elastic is not None:
        note += "; PET_NNODES is the node count (v2's torch policy), where v1 gave MIN:MAX"
    if info.kind == "PyTorchJob" and any(r.type == "Master" for r in roles):
        note += (
            "; PET_NNODES, PET_NODE_RANK and PET_MASTER_ADDR come from v2's torch policy with v1's values, "
            f"PET_MASTER_PORT is v2's {c.CONTAINER_TRAINER_PORT} (MASTER_PORT keeps v1's) and PET_NPROC_PER_NODE "
            "v2's count (v1 passed nprocPerNode on as written)"
        )
    ctx.row((*main.path[:2],), KEPT, f"TrainJob spec.trainer.env {names}", note)


def _restart_rows(ctx: Ctx, r: Role, blockers: list[tuple[Path, str]]) -> None:
    """Job pods restart in place (OnFailure) up to the Job's backoffLimit: Kubernetes' default 6
    in the bundled runtimes. v1 restarted them without limit unless runPolicy.backoffLimit was set
    (which needs a generated runtime); common/job.go PastBackoffLimit."""
    p = (*r.path, "restartPolicy")
    restart = r.restart or r.default_restart
    unlimited = "v1 restarted failed containers without limit; the runtime's Jobs give up after 6 restarts"
    if restart == "OnFailure":
        ctx.row(
            p,
            APPROXIMATED,
            "pod restartPolicy OnFailure, Job backoffLimit 6 (Kubernetes' default)",
            ("" if r.restart else "unset: v1's default, JobSet's too; ") + unlimited,
        )
    elif restart == "Always":
        ctx.row(
            p,
            APPROXIMATED,
            "pod restartPolicy OnFailure, Job backoffLimit 6 (Kubernetes' default)",
            "Job pods cannot be Always; OnFailure restarts them too; " + unlimited,
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
