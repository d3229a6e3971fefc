"""Torch ML policy: torchrun settings through PET_* env (upstream `plugins/torch/torch.go`, §6.2)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import env_var, upsert_env_vars
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins import torchtune
from ktrain.engine.plugins.base import (
    Plugin,
    add_trainer_port,
    apply_trainer_num_nodes,
    completion_index_env,
    master_address,
    reserved_env_error,
    resolve_num_proc_per_node,
    trainer_count,
    trainer_env,
)
from ktrain.errors import FieldError

PET_NNODES = "PET_NNODES"
PET_NPROC_PER_NODE = "PET_NPROC_PER_NODE"
PET_NODE_RANK = "PET_NODE_RANK"
PET_MASTER_ADDR = "PET_MASTER_ADDR"
PET_MASTER_PORT = "PET_MASTER_PORT"
RESERVED_ENVS = (PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT)


def _pet_envs(info: RuntimeInfo, nproc: str, *, with_master: bool) -> list[dict[str, object]]:
    envs: list[dict[str, object]] = [
        env_var(PET_NNODES, str(trainer_count(info))),
        env_var(PET_NPROC_PER_NODE, nproc),
        completion_index_env(PET_NODE_RANK),
    ]
    if with_master:
        envs.append(env_var(PET_MASTER_ADDR, master_address(info)))
        envs.append(env_var(PET_MASTER_PORT, str(c.CONTAINER_TRAINER_PORT)))
    return envs


class TorchPlugin(Plugin):
    name = "torch"
    policy_key = "torch"

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        errors = reserved_env_error(info, RESERVED_ENVS)
        torch = info.ml_policy.torch if info.ml_policy else None
        injection = torch.env_injection if torch else None
        for target in injection.targets if injection and injection.targets else []:
            ps = info.pod_set(target.job_name)
            for name in target.container_names:
                if ps is None or ps.container(name, include_init=True) is None:
                    errors.append(
                        FieldError(
                            "spec.runtimeRef",
                            f'envInjection target podSet "{target.job_name}" container "{name}" '
                            "not found in runtime template",
                        )
                    )
        if torchtune.is_torchtune(info):
            errors.extend(torchtune.validate(info))
        return errors

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        apply_trainer_num_nodes(info)
        nproc = resolve_num_proc_per_node(info)
        tune = torchtune.is_torchtune(info)
        if info.job.spec.trainer is not None:
            container = info.trainer_container()
            if container is not None:
                upsert_env_vars(container, trainer_env(info))
                upsert_env_vars(container, _pet_envs(info, nproc, with_master=not tune))
                add_trainer_port(container)
            if tune:
                info.trainer_command = torchtune.rewrite_command(info, nproc)
        # envInjection targets always get the full set, master vars included (§16 item 35).
        torch = info.ml_policy.torch if info.ml_policy else None
        injection = torch.env_injection if torch else None
        for target in injection.targets if injection and injection.targets else []:
            ps = info.pod_set(target.job_name)
            if ps is None:
                continue
            for name in target.container_names:
                container = ps.container(name, include_init=True)
                if container is not None:
                    upsert_env_vars(container, _pet_envs(info, nproc, with_master=True))
