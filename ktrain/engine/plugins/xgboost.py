"""XGBoost ML policy: Rabit tracker settings through DMLC_* env (upstream `plugins/xgboost`, §6.5).

Upstream runs PlainML beside XGBoost in random order; ktrain puts `trainer.env` first, then
the DMLC_* variables (ENGINE.md §5.6 recommendation).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import env_var, upsert_env_vars
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import (
    Plugin,
    add_trainer_port,
    completion_index_env,
    gpu_count,
    master_address,
    resources_for_detection,
    trainer_count,
)
from ktrain.engine.plugins.plainml import enforce_plain
from ktrain.errors import FieldError

DMLC_TRACKER_URI = "DMLC_TRACKER_URI"
DMLC_TRACKER_PORT = "DMLC_TRACKER_PORT"
DMLC_TASK_ID = "DMLC_TASK_ID"
DMLC_NUM_WORKER = "DMLC_NUM_WORKER"
RESERVED_ENVS = (DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER)


class XGBoostPlugin(Plugin):
    name = "xgboost"
    policy_key = "xgboost"

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        trainer = info.job.spec.trainer
        errors: list[FieldError] = []
        for i, env in enumerate(trainer.env or [] if trainer else []):
            if env.name in RESERVED_ENVS:
                errors.append(
                    FieldError(
                        f"spec.trainer.env[{i}]", f"{env.name} is reserved for the XGBoost runtime", kind="Forbidden"
                    )
                )
        return errors

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        enforce_plain(info)
        if info.job.spec.trainer is None:
            return
        container = info.trainer_container()
        if container is None:
            return
        gpus = gpu_count(resources_for_detection(info))
        workers_per_node = gpus if gpus > 0 else 1
        upsert_env_vars(
            container,
            [
                env_var(DMLC_TRACKER_URI, master_address(info)),
                env_var(DMLC_TRACKER_PORT, str(c.CONTAINER_TRAINER_PORT)),
                completion_index_env(DMLC_TASK_ID),
                env_var(DMLC_NUM_WORKER, str(trainer_count(info) * workers_per_node)),
            ],
        )
        add_trainer_port(container)
