"""The built-in plugins, in the one order every phase runs them.

A plugin module is imported when a render selects it: a torch job loads neither the MPI, Flux
nor gang-scheduling plugins (issue #17: every module is start-up time).
"""

from __future__ import annotations

from ktrain.api import policies
from ktrain.engine.plugins.base import Plugin
from ktrain.engine.plugins.jobset import JobSetPlugin

# ML policies: exactly one is active per render, the first of these whose mlPolicy key is set
# (else PlainML). (policy key, module in this package, class), from their one declaration
# (`ktrain.api.policies.ML_POLICIES`); the class's `policy_key` is that key.
ML_POLICIES = tuple((p.key, p.module, p.plugin) for p in policies.ML_POLICIES)
PLAIN_ML = (policies.PLAIN_ML.module, policies.PLAIN_ML.plugin)
# Gang schedulers: each one whose podGroupPolicy key is set (both may be), in this order.
GANG_POLICIES = (
    ("coscheduling", "coscheduling", "CoschedulingPlugin"),
    ("volcano", "volcano", "VolcanoPlugin"),
)
JOBSET = JobSetPlugin()
# The controller's feature gate TrainJobStatus: acts for every TrainJob when the render's context has a
# status server (ENGINE.md §6.7), after the ML policy's plugin.
TRAINJOB_STATUS = ("trainjobstatus", "TrainJobStatusPlugin")

_LOADED: dict[str, Plugin] = {}


def plugin(module: str, name: str) -> Plugin:
    """The one instance of the plugin class `name` of `ktrain.engine.plugins.<module>`."""
    found = _LOADED.get(module)
    if found is None:
        loaded = __import__(f"{__name__}.{module}", fromlist=[name])
        found = _LOADED[module] = getattr(loaded, name)()
    return found


def builtin_plugins() -> tuple[Plugin, ...]:
    """Every built-in plugin (all of them imported)."""
    return (
        JOBSET,
        plugin(*PLAIN_ML),
        *(plugin(module, name) for _, module, name in ML_POLICIES),
        *(plugin(module, name) for _, module, name in GANG_POLICIES),
        plugin(*TRAINJOB_STATUS),
    )


__all__ = [
    "GANG_POLICIES",
    "JOBSET",
    "ML_POLICIES",
    "PLAIN_ML",
    "TRAINJOB_STATUS",
    "Plugin",
    "builtin_plugins",
    "plugin",
]
