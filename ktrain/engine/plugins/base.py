"""Plugin protocols and helpers shared by the ML-policy and gang-scheduling plugins.

Method names copy upstream's extension points (`pkg/runtime/framework/interface.go`)
in Python case, so a diff of Go and Python reads naturally.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import (
    convert_env_vars,
    env_field_ref,
    upsert_ports,
)
from ktrain.engine.info import RuntimeInfo
from ktrain.errors import FieldError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import ClassVar

    from ktrain.util.jsondata import Obj


AUTO = "auto"  # torch's numProcPerNode: one process per GPU, as torchrun decides


class Plugin:
    """Base class: every phase is a no-op unless a plugin overrides it."""

    name: ClassVar[str] = ""
    # The mlPolicy / podGroupPolicy key that activates this plugin (None: selected otherwise).
    policy_key: ClassVar[str | None] = None

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        return []

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        return None

    def enforce_pod_group_policy(self, info: RuntimeInfo) -> None:
        return None

    def build(self, info: RuntimeInfo) -> list[Obj]:
        return []


def apply_trainer_num_nodes(info: RuntimeInfo) -> None:
    """trainer PodSet Count <- spec.trainer.numNodes when set (copied verbatim, as upstream)."""
    trainer = info.job.spec.trainer
    ps = info.trainer_pod_set()
    if trainer is not None and trainer.num_nodes is not None and ps is not None:
        ps.count = trainer.num_nodes


def trainer_env(info: RuntimeInfo) -> list[Obj]:
    trainer = info.job.spec.trainer
    if trainer is None or not trainer.env:
        return []
    return convert_env_vars([e.to_dict() for e in trainer.env])


def trainer_count(info: RuntimeInfo) -> int:
    ps = info.trainer_pod_set()
    return ps.count if ps is not None else 1


def master_address(info: RuntimeInfo) -> str:
    # Upstream hard-codes rJob `node` and the job name as subdomain (ENGINE.md §16 item 11).
    return f"{info.name}-{c.NODE}-0-0.{info.name}"


def completion_index_env(name: str) -> Obj:
    return env_field_ref(name, c.COMPLETION_INDEX_FIELD_PATH)


def add_trainer_port(container: Obj) -> None:
    upsert_ports(container, [{"containerPort": c.CONTAINER_TRAINER_PORT}])


def resources_for_detection(info: RuntimeInfo) -> Obj:
    """The resources the GPU/CPU detection looks at (ENGINE.md §6.2 step 2, §16 item 4):
    `trainer.resourcesPerNode` as written when set, else the runtime `node` container's."""
    trainer = info.job.spec.trainer
    if trainer is not None and trainer.resources_per_node is not None:
        return trainer.resources_per_node.to_dict()
    for ps in info.pod_sets:
        if ps.name == c.NODE or ps.ancestor == c.ANCESTOR_TRAINER:
            container = ps.container(c.NODE)
            if container is not None and container.get("resources"):
                return dict(container["resources"])
    return {}


def _first_gpu(values: Obj | None) -> int:
    for name, qty in (values or {}).items():
        if "gpu" in name.lower():
            from ktrain.engine.quantity import Quantity  # decimal only where a quantity is read

            return Quantity.parse(qty).ceil_int()
    return 0


def gpu_count(resources: Obj) -> int:
    """First resource whose name contains "gpu" in requests, else in limits; rounded up."""
    count = _first_gpu(resources.get("requests"))
    if count == 0:
        count = _first_gpu(resources.get("limits"))
    return count


def cpu_count(resources: Obj) -> int:
    """CPU request if set and non-zero, else CPU limit; rounded up; at least 1."""
    value = 0
    request = (resources.get("requests") or {}).get("cpu")
    limit = (resources.get("limits") or {}).get("cpu")
    if request is None and limit is None:
        return 1
    from ktrain.engine.quantity import Quantity  # decimal only where a quantity is read

    if request is not None and not Quantity.parse(request).is_zero():
        value = Quantity.parse(request).ceil_int()
    elif limit is not None:
        value = Quantity.parse(limit).ceil_int()
    return max(1, value)


def resolve_num_proc_per_node(info: RuntimeInfo) -> str:
    """torchrun's processes per node (`PET_NPROC_PER_NODE`): the explicit value, else "auto" with GPUs,
    else the CPU count. Shared by the torch plugin and its torchtune rules."""
    trainer = info.job.spec.trainer
    if trainer is not None and trainer.num_proc_per_node is not None:
        return str(trainer.num_proc_per_node)
    resources = resources_for_detection(info)
    if gpu_count(resources) > 0:
        return AUTO
    return str(cpu_count(resources))


def reserved_env_error(info: RuntimeInfo, reserved: tuple[str, ...]) -> list[FieldError]:
    trainer = info.job.spec.trainer
    if trainer is None or not trainer.env:
        return []
    bad = sorted({e.name for e in trainer.env if e.name in reserved})
    if not bad:
        return []
    return [
        FieldError(
            "spec.trainer.env",
            f"must not have reserved envs, invalid envs configured: [{' '.join(bad)}]",
        )
    ]
