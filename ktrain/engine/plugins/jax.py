"""JAX ML policy: jax.distributed settings through env (upstream `plugins/jax/jax.go`, §6.4)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import env_var, upsert_env_vars
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import (
    Plugin,
    add_trainer_port,
    apply_trainer_num_nodes,
    completion_index_env,
    master_address,
    trainer_count,
)

JAX_NUM_PROCESSES = "JAX_NUM_PROCESSES"
JAX_PROCESS_ID = "JAX_PROCESS_ID"
JAX_COORDINATOR_ADDRESS = "JAX_COORDINATOR_ADDRESS"


class JAXPlugin(Plugin):
    name = "jax"
    policy_key = "jax"

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        apply_trainer_num_nodes(info)
        if info.job.spec.trainer is None:
            return
        container = info.trainer_container()
        if container is None:
            return
        # trainer.env is not merged here: the JobSet builder appends it after these (§5.6).
        upsert_env_vars(
            container,
            [
                env_var(JAX_NUM_PROCESSES, str(trainer_count(info))),
                completion_index_env(JAX_PROCESS_ID),
                env_var(JAX_COORDINATOR_ADDRESS, f"{master_address(info)}:{c.CONTAINER_TRAINER_PORT}"),
            ],
        )
        add_trainer_port(container)
