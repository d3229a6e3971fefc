"""`ktrain.engine.plugins`: the built-in plugins, each imported once when selected."""

from __future__ import annotations

from ktrain.engine.plugins import TRAINJOB_STATUS, builtin_plugins, plugin


def test_every_builtin_plugin_once_the_gated_one_last() -> None:
    names = [p.name for p in builtin_plugins()]
    assert len(names) == len(set(names)) and names[0] == "jobset" and names[-1] == "TrainJobStatus"


def test_plugin_returns_one_instance() -> None:
    assert plugin(*TRAINJOB_STATUS) is plugin(*TRAINJOB_STATUS)
