"""A v1 job onto an existing runtime with one `node` step (a bundled runtime, or `--runtime`):
the TrainJob's trainer fields plus one runtime patch; what they cannot carry blocks it."""

from __future__ import annotations

import copy
from typing import Any

from ktrain import constants as c
from ktrain.convert import podenv
from ktrain.convert.common import ENV_SOURCES, PATCH_MANAGER, PATCHABLE_POD, Ctx, Obj, Role, Settings, int_port
from ktrain.convert.compat import compat_env
from ktrain.convert.kinds import KindInfo
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import Path


def same_but_command(a: Role, b: Role) -> bool:
    ta, tb = copy.deepcopy(a.template), copy.deepcopy(b.template)
    for t, r in ((ta, a), (tb, b)):
        cont = t["spec"]["containers"][r.main]
        cont.pop("command", None)
        cont.pop("args", None)
    return ta == tb


def merged_command(master: Role, worker: Role) -> tuple[list[Any] | None, list[Any] | None, str | None]:
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


def onto_runtime(
    ctx: Ctx, info: KindInfo, roles: list[Role], gen: Settings, runtime: str, trainjob: Obj, name: str
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
        if not same_but_command(master, main):
            blockers.append((master.path, "the Master and Worker pod templates differ"))
        else:
            command, args, problem = merged_command(master, main)
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
        if int_port(info, main) != info.default_port:
            blockers.append(((*cpath, "ports"), "a non-default framework port"))
        if gen.tf_sparse:
            trainer.setdefault("env", []).append({"name": "KTRAIN_TF_SPARSE", "value": "1"})
    compat, _ = compat_env(info, roles, name, nodes, gen.nproc)
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


def _restart_rows(ctx: Ctx, r: Role, blockers: list[tuple[Path, str]]) -> None:
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
