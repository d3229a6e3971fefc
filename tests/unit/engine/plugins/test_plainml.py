"""PlainML (`ktrain.engine.plugins.plainml`): what runs for a runtime without a framework policy."""

from __future__ import annotations

from ktrain.api.records import validate
from ktrain.engine.framework import select_ml_plugin
from ktrain.engine.plugins.plainml import PlainMLPlugin

from .renders import container, env, job, objects, of_kind, runtime


def test_a_runtime_without_a_policy_selects_plainml() -> None:
    assert select_ml_plugin(validate("TrainingRuntime", runtime({}))).name == "plainml"


def test_plainml_copies_trainer_env_and_the_node_count() -> None:
    found = objects(job(numNodes=3, env=[{"name": "LR", "value": "0.1"}]), runtime({}))
    assert env(container(found))["LR"] == "0.1"
    (jobset,) = of_kind(found, "JobSet")
    node = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == "node")
    assert node["template"]["spec"]["parallelism"] == 3


def test_plainml_builds_no_objects_of_its_own() -> None:
    assert [o["kind"] for o in objects(job(numNodes=1), runtime({}))] == ["JobSet"]


def test_plainml_is_selected_by_no_key() -> None:
    assert PlainMLPlugin.policy_key is None and PlainMLPlugin.name == "plainml"
