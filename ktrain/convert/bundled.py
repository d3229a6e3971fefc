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
    Role,
    Settings,
    default_pull_policy,
    int_port,
)
from ktrain.convert.compat import (
    Torch,
    effective_v1_nproc,
    framework_env,
    user_env_names,
    user_kept_note,
    v2_nproc_per_node,
    without_user_set,
)
from ktrain.convert.kinds import KindInfo
from ktrain.convert.layout import MERGING_KINDS, ROLE_SWITCH, Plan
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import Path
from ktrain.util.jsondata import Obj


class _Onto:
    """What one conversion onto a runtime collects: the trainer, the patch, and what blocks it."""

    def __init__(self, ctx: Ctx, info: KindInfo, roles: list[Role], gen: Settings, plan: Plan) -> None:
        self.ctx, self.info, self.roles, self.gen, self.plan = ctx, info, roles, gen, plan
        self.blockers: list[tuple[Path, str]] = list(gen.blockers)
        by_type = {r.type: r for r in roles}
        self.allowed = ("Master", "Worker") if info.kind in MERGING_KINDS else ("Worker",)
        self.main = by_type.get("Worker") or roles[0]
        self.master = by_type.get("Master") if info.kind in MERGING_KINDS else None
        self.command, self.args = self.main.container.get("command"), self.main.container.get("args")
        self.trainer: Obj = {}
        self.patch_meta: Obj = {}
        self.patch_pod: Obj = {}
        self.patch_cont: Obj = {"name": c.NODE}
        self.tf_family = info.framework in podenv.SCRIPTS

    @property
    def cpath(self) -> Path:
        return (*self.main.path, "template", "spec", "containers", self.main.main)

    def block(self, path: Path, why: str) -> None:
        self.blockers.append((path, why))


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
    spec = trainjob["spec"]
    spec["runtimeRef"] = {"name": runtime}
    ctx.row((), KEPT, f"TrainJob spec.runtimeRef.name {runtime}")
    o = _Onto(ctx, info, roles, gen, plan)
    _block_other_steps(o)
    _merge_master_command(o)
    _count_nodes(o)
    for key, value in o.main.container.items():
        _container_field(o, key, value)
    if o.tf_family:
        _env_wrapper_program(o)
    if info.kind == "PyTorchJob":
        _nproc_row(ctx, o.main, gen, o.trainer.get("resourcesPerNode"))
    if info.kind in ("PyTorchJob", "XGBoostJob", "JAXJob"):
        _v1_framework_env(o, name)
    if o.master is not None and o.command and o.command[:2] == ROLE_SWITCH[:2]:
        o.trainer.setdefault("env", []).append(
            {"name": "KTRAIN_POD_INDEX", "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}}}
        )
    _pod_template_fields(o)
    _retry_and_success_rows(o)
    _add_runtime_patch(o, spec)
    spec["trainer"] = o.trainer
    return o.blockers


def _block_other_steps(o: _Onto) -> None:
    """Replica types other than the trainer's, and kinds that always need several steps."""
    for r in o.roles:
        if r.type not in o.allowed:
            o.block(r.path, f"a {r.type} replica needs its own replicated job")
    if o.info.kind == "MXJob" or o.info.kind == "MPIJob":
        o.block(("spec", o.info.replica_key), f"a {o.info.kind} needs several replicated jobs")


def _merge_master_command(o: _Onto) -> None:
    """A Master that shares the node step runs as node 0, through the role switch if its command differs."""
    master, plan = o.master, o.plan
    if master is None or master is o.main:
        return
    if not plan.merged:
        o.block(master.path, plan.problem)
        return
    o.command, o.args = plan.command, plan.args
    if o.command and o.command[:2] == ROLE_SWITCH[:2]:
        o.ctx.row(
            (*master.path, "template", "spec", "containers", master.main, "command"),
            KEPT,
            "TrainJob spec.trainer.command (node 0 runs the Master's command)",
            "v1's Master (rank 0) is node 0 of the node step; a shell switch picks its command",
        )


def _count_nodes(o: _Onto) -> None:
    o.trainer["numNodes"] = sum(r.replicas for r in o.roles if r.type in o.allowed)
    for r in o.roles:
        if r.type in o.allowed:
            o.ctx.row((*r.path, "replicas"), KEPT, "TrainJob spec.trainer.numNodes", f"sum of {', '.join(o.allowed)}")
            o.ctx.sources[("spec", "trainer", "numNodes")] = (*r.path, "replicas")
    if o.gen.nproc is not None:
        o.trainer["numProcPerNode"] = o.gen.nproc


def _container_field(o: _Onto, key: str, value: Any) -> None:
    """One field of the framework container: a trainer field, a container patch, or a blocker."""
    ctx, trainer, p = o.ctx, o.trainer, (*o.cpath, key)
    if key == "name":
        ctx.row(p, KEPT, "container `node`", "the trainer container is always named node in v2")
    elif key == "image":
        trainer["image"] = value
        ctx.sources[("spec", "trainer", "image")] = p
        ctx.row(p, KEPT, "TrainJob spec.trainer.image")
    elif key in ("command", "args") and o.tf_family:
        pass  # _env_wrapper_program
    elif key in ("command", "args"):
        given = o.command if key == "command" else o.args
        if given is not None:
            trainer[key] = list(given)
            ctx.sources[("spec", "trainer", key)] = p
        ctx.row(p, KEPT, f"TrainJob spec.trainer.{key}")
    elif key == "env":
        if any(not _trainer_env_ok(e) for e in value or []):
            o.block(p, "env with a source a TrainJob cannot carry")
        trainer["env"] = copy.deepcopy(value or [])
        ctx.sources[("spec", "trainer", "env")] = p
        ctx.row(p, KEPT, "TrainJob spec.trainer.env")
    elif key == "resources":
        trainer["resourcesPerNode"] = copy.deepcopy(value)
        ctx.sources[("spec", "trainer", "resourcesPerNode")] = p
        ctx.row(p, KEPT, "TrainJob spec.trainer.resourcesPerNode")
    elif key in ("volumeMounts", "securityContext"):
        o.patch_cont[key] = copy.deepcopy(value)
        where: Path = (*PATCHED_NODE_POD, "containers", 0, key)
        ctx.sources[where] = p
        ctx.row(p, KEPT, f"TrainJob runtimePatches containers[node].{key}")
    elif key == "imagePullPolicy":
        default = default_pull_policy(str(o.main.container.get("image", "")))
        if value == default:
            ctx.row(p, KEPT, "-", f"{value} is what Kubernetes gives this image when no policy is set")
        else:
            o.block(p, f"imagePullPolicy {value} needs a runtime (this image's default is {default})")
    elif key == "ports" and _only_framework_port(o.info, value):
        ctx.row(
            p,
            KEPT if o.tf_family else DROPPED,
            "runtime env KTRAIN_ROLES" if o.tf_family else "-",
            "the framework port" + ("" if o.tf_family else f"; v2 uses {c.CONTAINER_TRAINER_PORT}"),
        )
    else:
        o.block(p, f"container field {key} needs a runtime")


def _env_wrapper_program(o: _Onto) -> None:
    """TensorFlow, PaddlePaddle, MXNet: the runtime's command is the env wrapper; it execs the args."""
    ctx, cont, cpath, trainer = o.ctx, o.main.container, o.cpath, o.trainer
    program = [*(cont.get("command") or []), *(cont.get("args") or [])]
    if not cont.get("command") and cont.get("args"):
        o.block((*cpath, "args"), "args for the image's entrypoint cannot run under the env wrapper")
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
    if int_port(o.info, o.main) != o.info.default_port:
        o.block((*cpath, "ports"), "a non-default framework port")
    if o.gen.tf_sparse:
        trainer.setdefault("env", []).append({"name": "KTRAIN_TF_SPARSE", "value": "1"})
    if o.info.kind == "PaddleJob" and "PYTHONUNBUFFERED" in user_env_names(o.main):
        ctx.row(
            (*o.main.path[:2],),
            KEPT,
            "TrainJob spec.trainer.env PYTHONUNBUFFERED",
            "the user's own PYTHONUNBUFFERED kept as written (v1 appended its value after it, and that one won)",
        )


def _v1_framework_env(o: _Onto, name: str) -> None:
    """PyTorch, XGBoost, JAX: the env v1's controller set that v2's policy does not."""
    torch = Torch(o.gen.nproc_text, o.gen.elastic, policy=True)
    full = framework_env(o.info, o.roles, name, o.plan.layout, o.main.type, torch)
    v1_env = without_user_set(full, user_env_names(o.main))
    kept = user_kept_note(full, user_env_names(o.main))
    if v1_env or kept:
        _env_rows(o.ctx, o.info, o.main, o.roles, v1_env, kept, o.gen.elastic)
        o.trainer["env"] = [*o.trainer.get("env", []), *v1_env]


def _pod_template_fields(o: _Onto) -> None:
    """The pod template's metadata and pod fields: the runtime patch's, or blockers."""
    ctx, main = o.ctx, o.main
    for key, value in (main.template.get("metadata") or {}).items():
        p = (*main.path, "template", "metadata", key)
        if key in ("labels", "annotations"):
            o.patch_meta[key] = copy.deepcopy(value)
            ctx.row(p, KEPT, f"TrainJob runtimePatches pod template metadata.{key}")
        else:
            ctx.row(p, DROPPED, "-", "pod names come from JobSet")
    for key, value in main.template["spec"].items():
        p = (*main.path, "template", "spec", key)
        if key == "containers":
            if len(value) > 1:
                o.block(p, "sidecar containers need a runtime")
        elif key in PATCHABLE_POD:
            o.patch_pod[key] = copy.deepcopy(value)
            ctx.row(p, KEPT, f"TrainJob runtimePatches pod spec {key}")
        elif key == "restartPolicy" and value == "OnFailure":
            ctx.row(p, KEPT, "-", "OnFailure is what JobSet gives Job pods")
        else:
            o.block(p, f"pod field {key} needs a runtime")


def _retry_and_success_rows(o: _Onto) -> None:
    ctx, info, gen = o.ctx, o.info, o.gen
    for r in o.roles:
        if r.type in o.allowed:
            _restart_rows(ctx, r, o.blockers)
        if r is o.master and r is not o.main and o.plan.merged:  # else its template is dropped (a blocker)
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


def _add_runtime_patch(o: _Onto, spec: Obj) -> None:
    if len(o.patch_cont) > 1:
        o.patch_pod["containers"] = [o.patch_cont]
    patch_template: Obj = {}
    if o.patch_meta:
        patch_template["metadata"] = o.patch_meta
    if o.patch_pod:
        patch_template["spec"] = o.patch_pod
    if patch_template:
        node = {"name": c.NODE, "template": {"spec": {"template": patch_template}}}
        add_patch(spec, {"template": {"spec": {"replicatedJobs": [node]}}})


# Where the conversion's patch (the first of the TrainJob's) puts the node step's pod spec.
PATCHED_NODE_POD: Path = (
    "spec",
    "runtimePatches",
    0,
    "trainingRuntimeSpec",
    "template",
    "spec",
    "replicatedJobs",
    0,
    "template",
    "spec",
    "template",
    "spec",
)


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


def _nproc_row(ctx: Ctx, main: Role, gen: Settings, resources: Obj | None) -> None:
    """v1 passed nprocPerNode on in PET_NPROC_PER_NODE to every pod (`auto` unset); the runtime's
    torch policy sets v2's count instead: said when the two differ."""
    v1 = effective_v1_nproc(Torch(gen.nproc_text, gen.elastic))
    v2 = v2_nproc_per_node(gen.nproc, resources)
    if v1 == v2:
        return
    ctx.row(
        ("spec", "nprocPerNode") if gen.nproc_text is not None else (*main.path[:2],),
        APPROXIMATED,
        f"PET_NPROC_PER_NODE {v2} (v2's torch policy)",
        f"v1 gave torchrun PET_NPROC_PER_NODE={v1}; v2's torch policy sets {v2} from the node's resources "
        "(a GPU: auto, else the CPU request): with torchrun and no --nproc_per_node the processes per pod, and "
        "so the world size, may change; set spec.nprocPerNode to a number to keep one count",
    )


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
