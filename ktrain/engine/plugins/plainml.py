"""PlainML: the trainer job of a runtime with no framework policy (upstream `plugins/plainml`)."""

from __future__ import annotations

from ktrain.engine.apply import upsert_env_vars
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import Plugin, apply_trainer_num_nodes, trainer_env


def enforce_plain(info: RuntimeInfo) -> None:
    """Count from `trainer.numNodes` and `trainer.env` on the trainer container.

    XGBoost and Flux runtimes get this too: upstream runs PlainML beside them.
    """
    apply_trainer_num_nodes(info)
    if info.job.spec.trainer is None:
        return
    container = info.trainer_container()
    if container is not None:
        upsert_env_vars(container, trainer_env(info))


class PlainMLPlugin(Plugin):
    name = "plainml"
    policy_key = None

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        enforce_plain(info)
