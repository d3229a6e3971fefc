"""The phase runner (`ktrain.engine.framework`): which plugins a runtime selects, and the order of
the objects a render returns."""

from __future__ import annotations

from typing import Any

from ktrain.api.records import validate
from ktrain.engine.framework import KIND_RANK, deprecation_warnings, select_gang_plugins, select_ml_plugin
from ktrain.engine.plugins import GANG_POLICIES, ML_POLICIES, PLAIN_ML, builtin_plugins, plugin

from .audit import _job, _runtime
from .plugins.renders import job, objects, runtime


def with_gangs(**pgp: Any) -> Any:
    data = runtime({"torch": {}})
    data["spec"]["podGroupPolicy"] = pgp
    return validate("TrainingRuntime", data)


def test_each_plugin_is_selected_by_its_own_policy_key() -> None:
    for key, module, name in (*ML_POLICIES, *GANG_POLICIES):
        assert plugin(module, name).policy_key == key
    assert plugin(*PLAIN_ML).policy_key is None
    # + jobset, plainml and the feature-gated TrainJobStatus
    assert len({p.name for p in builtin_plugins()}) == len(ML_POLICIES) + len(GANG_POLICIES) + 3


def test_gang_plugins_are_those_whose_key_is_set_in_their_order() -> None:
    assert select_gang_plugins(validate("TrainingRuntime", runtime({}))) == []
    assert [p.name for p in select_gang_plugins(with_gangs(volcano={}))] == ["volcano"]
    both = with_gangs(volcano={}, coscheduling={"scheduleTimeoutSeconds": 5})
    assert [p.name for p in select_gang_plugins(both)] == ["coscheduling", "volcano"]
    assert select_ml_plugin(both).name == "torch"


def test_a_render_returns_its_objects_in_kind_order() -> None:
    found = objects(job(numNodes=2), runtime({"mpi": {}}, *()))
    kinds = [o["kind"] for o in found]
    assert kinds == sorted(kinds, key=KIND_RANK.__getitem__)
    assert kinds[-1] == "JobSet" and "Secret" in kinds and "ConfigMap" in kinds


# --- warnings (engine audit, ENGINE.md §11.2) ---------------------------------------------------


def test_only_a_deprecated_cluster_training_runtime_warns() -> None:
    job = _job()
    assert deprecation_warnings(job, _runtime("ClusterTrainingRuntime")) == [
        'Referenced ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of '
        "Kubeflow Trainer. See runtime deprecation policy: "
        "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
    ]
    assert deprecation_warnings(job, _runtime("TrainingRuntime")) == []
