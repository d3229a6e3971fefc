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
    )


__all__ = ["GANG_POLICIES", "JOBSET", "ML_POLICIES", "PLAIN_ML", "Plugin", "builtin_plugins", "plugin"]
