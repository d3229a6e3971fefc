"""The env v1 controllers set that v2's policies name differently (PyTorch, XGBoost, JAX)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.convert.common import Obj, Role, int_port
from ktrain.convert.kinds import KindInfo


def compat_env(
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
        port = str(int_port(info, by_type["Master"]))
        env = [
            {"name": "PYTHONUNBUFFERED", "value": "0"},
            {"name": "MASTER_ADDR", "value": host},
            {"name": "MASTER_PORT", "value": port},
            {"name": "WORLD_SIZE", "value": str(total * (nproc or 1))},
        ]
        return [*env, rank], ([*env, {"name": "RANK", "value": "0"}] if separate else [])
    if info.kind == "XGBoostJob":
        master = by_type.get("Master")
        port = str(int_port(info, master)) if master else str(info.default_port)
        env = [
            {"name": "MASTER_PORT", "value": port},
            {"name": "MASTER_ADDR", "value": host},
            {"name": "WORLD_SIZE", "value": str(total)},
        ]
        tail = [{"name": "PYTHONUNBUFFERED", "value": "0"}]
        if total > 1 and "Worker" in by_type:
            wport = str(int_port(info, by_type["Worker"]))
            wrj = c.NODE
            offset = 0 if separate else (by_type["Master"].replicas if master else 0)
            addrs = ",".join(f"{name}-{wrj}-0-{i + offset}.{name}" for i in range(total - 1))
            tail += [{"name": "WORKER_PORT", "value": wport}, {"name": "WORKER_ADDRS", "value": addrs}]
        return [*env, rank, *tail], ([*env, {"name": "RANK", "value": "0"}, *tail] if separate else [])
    if info.kind == "JAXJob":
        worker = by_type.get("Worker")
        port = str(int_port(info, worker)) if worker else str(info.default_port)
        return [
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "COORDINATOR_PORT", "value": port},
            {"name": "COORDINATOR_ADDRESS", "value": host},
            {"name": "NUM_PROCESSES", "value": str(total)},
            {"name": "PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}}},
        ], []
    return [], []
