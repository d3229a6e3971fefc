"""The built-in plugins, in the one order every phase runs them."""

from __future__ import annotations

from ktrain.engine.plugins.base import Plugin
from ktrain.engine.plugins.coscheduling import CoschedulingPlugin
from ktrain.engine.plugins.flux import FluxPlugin
from ktrain.engine.plugins.jax import JAXPlugin
from ktrain.engine.plugins.jobset import JobSetPlugin
from ktrain.engine.plugins.mpi import MPIPlugin
from ktrain.engine.plugins.plainml import PlainMLPlugin
from ktrain.engine.plugins.torch import TorchPlugin
from ktrain.engine.plugins.volcano import VolcanoPlugin
from ktrain.engine.plugins.xgboost import XGBoostPlugin

# ML policies: exactly one is active per render (selected by its mlPolicy key, else PlainML).
ML_PLUGINS: tuple[Plugin, ...] = (TorchPlugin(), MPIPlugin(), JAXPlugin(), XGBoostPlugin(), FluxPlugin())
PLAINML = PlainMLPlugin()
# Gang schedulers: each one whose podGroupPolicy key is set (both may be).
GANG_PLUGINS: tuple[Plugin, ...] = (CoschedulingPlugin(), VolcanoPlugin())
JOBSET = JobSetPlugin()

BUILTIN_PLUGINS: tuple[Plugin, ...] = (JOBSET, PLAINML, *ML_PLUGINS, *GANG_PLUGINS)

__all__ = ["BUILTIN_PLUGINS", "GANG_PLUGINS", "JOBSET", "ML_PLUGINS", "PLAINML", "Plugin"]
