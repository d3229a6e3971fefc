"""Where each v1 pod runs under JobSet, and the env the v1 controllers gave PyTorch, XGBoost and
JAX pods, with JobSet's host names.

A `Layout` places every v1 replica type on a replicated job: one pod per v1 replica in one Job
(index = the Job completion index, plus an offset), or one Job per v1 replica (index = the Job's
global index across the JobSet, `jobset.sigs.k8s.io/job-global-index`, which counts the Jobs of
every earlier replicated job first). Layouts keep v1's ranks: the pod that plays v1 rank r sees
index r, so RANK is one downward-API value for every pod of a step.

The values are those of the v1 controller code (kubeflow/training-operator
`pkg/controller.v1`): pytorch `envvar.go` setPodEnv with `master.go` (MasterEnvVarGenerator)
and `elastic.go` (ElasticEnvVarGenerator), xgboost `xgboost.go` SetPodEnv, jax `envvar.go`
setPodEnv. v1 appended them after the user's env (so the user could not override them); a
variable the user set explicitly is kept here instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktrain import constants as c
from ktrain.convert.common import Role, int_port
from ktrain.convert.kinds import KindInfo
from ktrain.engine.plugins.base import AUTO, cpu_count, gpu_count
from ktrain.util.jsondata import Obj

JOB_GLOBAL_INDEX_LABEL = "jobset.sigs.k8s.io/job-global-index"
GLOBAL_INDEX_FIELD_PATH = f"metadata.labels['{JOB_GLOBAL_INDEX_LABEL}']"
# "1" (buffering off) in every v1 controller since training-operator v1.7: PyTorch's setPodEnv with
# kubeflow/training-operator#1840, XGBoost's SetPodEnv (`xgboost/xgboost.go`) and PaddlePaddle's
# setPodEnv (`paddlepaddle/envvar.go`) with #1860 ("set PYTHONUNBUFFERED to 1"); JAX's from the start.
PYTHONUNBUFFERED = {"PyTorchJob": "1", "JAXJob": "1", "XGBoostJob": "1", "PaddleJob": "1"}
TORCH_RESERVED = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
ELASTIC_ENV = (
    "PET_RDZV_ENDPOINT",
    "PET_RDZV_BACKEND",
    "PET_MAX_RESTARTS",
    "PET_RDZV_ID",
    "PET_RDZV_CONF",
    "PET_STANDALONE",
)


@dataclass(frozen=True)
class Placement:
    rjob: str
    per_job: bool = False  # one Job per v1 replica (else one pod per v1 replica in one Job)
    offset: int = 0  # v1 replica k runs as pod (or Job) k + offset

    def host(self, name: str, k: int) -> str:
        """JobSet's host name for v1 replica k: `<jobset>-<rjob>-<job index>-<pod index>.<jobset>`."""
        if self.per_job:
            return f"{name}-{self.rjob}-{k}-0.{name}"
        return f"{name}-{self.rjob}-0-{k + self.offset}.{name}"

    def index_env(self, env_name: str) -> Obj:
        path = GLOBAL_INDEX_FIELD_PATH if self.per_job else c.COMPLETION_INDEX_FIELD_PATH
        return {"name": env_name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


Layout = dict[str, Placement]  # v1 replica type -> where its pods run


def user_env_names(role: Role) -> set[str]:
    return {str(e.get("name")) for e in role.container.get("env") or [] if isinstance(e, dict)}


def without_user_set(env: list[Obj], names: set[str]) -> list[Obj]:
    """v1's env minus what the user set explicitly (kept as the user wrote it)."""
    return [e for e in env if e["name"] not in names]


def user_kept_note(env: list[Obj], names: set[str]) -> str:
    """The report's words for the variables the user set that v1 set too ("" when none)."""
    mine = sorted({e["name"] for e in env if e["name"] in names})
    if not mine:
        return ""
    return f"; the user's own {', '.join(mine)} kept as written (v1 appended its value after it, and that one won)"


@dataclass
class Torch:
    """The PyTorchJob fields setPodEnv reads."""

    nproc: str | None = None  # spec.nprocPerNode (or elasticPolicy.nProcPerNode) as written
    elastic: Obj | None = None  # spec.elasticPolicy
    policy: bool = False  # the runtime has v2's torch policy: it sets the PET_* it reserves


def framework_env(
    info: KindInfo, roles: list[Role], name: str, layout: Layout, rtype: str, torch: Torch | None = None
) -> list[Obj]:
    """What the v1 controller set for the pods of replica type `rtype` (PyTorch, XGBoost, JAX),
    hosts as `layout` places them; [] for the other kinds."""
    by_type = {r.type: r for r in roles}
    total = sum(r.replicas for r in roles)
    me = layout[rtype]
    if info.kind == "PyTorchJob":
        return _pytorch(info, by_type, name, layout, me, total, torch or Torch())
    if info.kind == "XGBoostJob":
        master = by_type.get("Master")
        port = str(int_port(info, master)) if master else str(info.default_port)
        master_host = layout["Master"].host(name, 0) if "Master" in layout else f"{name}-master-0"
        env = [
            {"name": "MASTER_PORT", "value": port},
            {"name": "MASTER_ADDR", "value": master_host},
            {"name": "WORLD_SIZE", "value": str(total)},
            me.index_env("RANK"),  # worker k: k + Master replicas, as placed
            {"name": "PYTHONUNBUFFERED", "value": PYTHONUNBUFFERED[info.kind]},
        ]
        worker = by_type.get("Worker")
        if total > 1 and worker is not None:
            # v1 lists totalReplicas-1 worker addresses, <job>-worker-0 ... (xgboost.go).
            place = layout["Worker"]
            addrs = ",".join(place.host(name, i) for i in range(total - 1))
            env += [
                {"name": "WORKER_PORT", "value": str(int_port(info, worker))},
                {"name": "WORKER_ADDRS", "value": addrs},
            ]
        return env
    if info.kind == "JAXJob":
        worker = by_type.get("Worker")
        port = str(int_port(info, worker)) if worker else str(info.default_port)
        return [
            {"name": "PYTHONUNBUFFERED", "value": PYTHONUNBUFFERED[info.kind]},
            {"name": "COORDINATOR_PORT", "value": port},
            {"name": "COORDINATOR_ADDRESS", "value": layout["Worker"].host(name, 0)},
            {"name": "NUM_PROCESSES", "value": str(total)},
            me.index_env("PROCESS_ID"),
        ]
    return []


def _pytorch(
    info: KindInfo, by_type: dict[str, Role], name: str, layout: Layout, me: Placement, total: int, torch: Torch
) -> list[Obj]:
    env: list[Obj] = [{"name": "PYTHONUNBUFFERED", "value": PYTHONUNBUFFERED[info.kind]}]
    nproc = v1_nproc_per_node(torch)
    if "Master" in by_type:
        port = str(int_port(info, by_type["Master"]))
        host = layout["Master"].host(name, 0)
        per_node = int(nproc) if nproc is not None and nproc.isdigit() else 1  # getNprocPerNodeInt
        env += [
            {"name": "MASTER_PORT", "value": port},
            {"name": "MASTER_ADDR", "value": host},
            {"name": "PET_MASTER_PORT", "value": port},
            {"name": "PET_MASTER_ADDR", "value": host},
            {"name": "WORLD_SIZE", "value": str(total * per_node)},
            me.index_env("RANK"),  # Master 0, Worker k: k + 1, as placed
            me.index_env("PET_NODE_RANK"),
        ]
    if nproc is not None:
        # v1.8+ (kubeflow/training-operator#1948): every pod, with or without a Master.
        env.append({"name": "PET_NPROC_PER_NODE", "value": nproc})
    if torch.elastic is not None:
        env += elastic_env(info, by_type, name, layout, torch.elastic)
        env.append({"name": "PET_NNODES", "value": _elastic_nnodes(torch.elastic, by_type)})
    else:
        env.append({"name": "PET_NNODES", "value": str(total)})
    env = list({e["name"]: e for e in env}.values())  # a later value wins, as in the kubelet
    if torch.policy:
        # The torch policy sets these itself (and refuses them in the TrainJob): PET_NNODES is the
        # node count, PET_NODE_RANK the pod index, PET_MASTER_ADDR node 0, as v1's with a Master;
        # PET_MASTER_PORT and PET_NPROC_PER_NODE are v2's (the report says so).
        env = [e for e in env if e["name"] not in TORCH_RESERVED]
    return env


def v1_nproc_per_node(torch: Torch) -> str | None:
    """spec.nprocPerNode after v1's defaulter (`pytorch_defaults.go` setDefaultNprocPerNode: "auto"
    unless elasticPolicy.nProcPerNode is set), as setPodEnv passes it on in PET_NPROC_PER_NODE."""
    if torch.nproc is not None:
        return torch.nproc
    if torch.elastic is None or torch.elastic.get("nProcPerNode") is None:
        return "auto"
    return None


def effective_v1_nproc(torch: Torch) -> str:
    """What a v1 pod's torchrun read in PET_NPROC_PER_NODE: elastic.go's value (appended last) or
    spec.nprocPerNode's."""
    if torch.elastic is not None and torch.elastic.get("nProcPerNode") is not None:
        return str(torch.elastic["nProcPerNode"])
    return v1_nproc_per_node(torch) or "auto"


def v2_nproc_per_node(num_proc: int | None, resources: Obj | None) -> str:
    """What Trainer v2's torch policy sets PET_NPROC_PER_NODE to (ENGINE.md §6.2): numProcPerNode,
    else `auto` when the node asks for a GPU, else its CPU count."""
    if num_proc is not None:
        return str(num_proc)
    if gpu_count(resources or {}) > 0:
        return AUTO
    return str(cpu_count(resources or {}))


def _elastic_nnodes(policy: Obj, by_type: dict[str, Role]) -> str:
    """generateEnvNNodes after v1's defaults (setPytorchElasticPolicy): MIN:MAX, either one
    standing for both, the Worker replicas when neither is set."""
    low, high = policy.get("minReplicas"), policy.get("maxReplicas")
    if low is None and high is None:
        worker = by_type.get("Worker")
        low = high = worker.replicas if worker else 0
    low = high if low is None else low
    high = low if high is None else high
    return f"{low}:{high}"


def elastic_env(info: KindInfo, by_type: dict[str, Role], name: str, layout: Layout, policy: Obj) -> list[Obj]:
    """ElasticEnvVarGenerator: the rendezvous torchrun reads (PET_NNODES apart)."""
    worker = by_type.get("Worker")
    host = policy.get("rdzvHost") or (layout["Worker"].host(name, 0) if "Worker" in layout else f"{name}-worker-0")
    port = policy.get("rdzvPort")
    if port is None:
        port = int_port(info, worker) if worker else info.default_port
    env: list[Obj] = [
        {"name": "PET_RDZV_ENDPOINT", "value": f"{host}:{port}"},
        {"name": "PET_RDZV_BACKEND", "value": str(policy.get("rdzvBackend") or "c10d")},
    ]
    if policy.get("maxRestarts") is not None:
        env.append({"name": "PET_MAX_RESTARTS", "value": str(policy["maxRestarts"])})
    if policy.get("nProcPerNode") is not None:
        env.append({"name": "PET_NPROC_PER_NODE", "value": str(policy["nProcPerNode"])})
    if policy.get("rdzvId") is not None:
        env.append({"name": "PET_RDZV_ID", "value": str(policy["rdzvId"])})
    conf = policy.get("rdzvConf")
    if conf:
        value = ",".join(f"{item.get('key', '')}={item.get('value', '')}" for item in conf if isinstance(item, dict))
        env.append({"name": "PET_RDZV_CONF", "value": value})
    if policy.get("standalone"):
        env.append({"name": "PET_STANDALONE", "value": ""})
    return env
