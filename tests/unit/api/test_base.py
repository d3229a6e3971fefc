"""The API types' behaviours shared by the pydantic models and the render path's records:
camelCase names, OpenAPI type names in errors, the runtime CRD's structural defaults, and the
trainer container of a runtime's JobSet template."""

from __future__ import annotations

import pytest

from ktrain import constants as c
from ktrain.api.base import camel, default_jobset_spec, openapi_type, runtime_trainer_container


@pytest.mark.parametrize(
    ("snake", "wire"),
    [
        ("name", "name"),
        ("num_nodes", "numNodes"),
        ("resources_per_node", "resourcesPerNode"),
        ("ttl_seconds_after_finished", "ttlSecondsAfterFinished"),
        ("pod_template_overrides", "podTemplateOverrides"),
    ],
)
def test_camel(snake: str, wire: str) -> None:
    assert camel(snake) == wire


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),  # a bool is not an integer here, as the API server words it
        (False, "boolean"),
        (3, "integer"),
        (3.5, "number"),
        ("3", "string"),
        ([1], "array"),
        ((1,), "array"),
        ({"a": 1}, "object"),
    ],
)
def test_openapi_type(value: object, name: str) -> None:
    assert openapi_type(value) == name


def _rjob(ports: list[dict[str, object]], **extra: object) -> dict[str, object]:
    pod = {
        "containers": [{"name": "node", "ports": ports}],
        "initContainers": [{"name": "i", "ports": [{"containerPort": 1}]}],
    }
    return {"name": "node", "template": {"spec": {"template": {"spec": pod}}}, **extra}


def test_structural_defaults_fill_where_the_parent_exists() -> None:
    spec = {
        "failurePolicy": {"maxRestarts": 2},
        "volumeClaimPolicies": [{"retentionPolicy": {}}, {"templates": []}],
        "replicatedJobs": [_rjob([{"containerPort": 23456}, {"containerPort": 1, "protocol": "UDP"}])],
    }
    out = default_jobset_spec(spec)
    assert out["failurePolicy"] == {"maxRestarts": 2, "restartStrategy": "Recreate"}
    assert out["volumeClaimPolicies"] == [{"retentionPolicy": {"whenDeleted": "Delete"}}, {"templates": []}]
    rjob = out["replicatedJobs"][0]
    assert rjob["groupName"] == "default" and rjob["replicas"] == 1
    pod = rjob["template"]["spec"]["template"]["spec"]
    assert [p["protocol"] for p in pod["containers"][0]["ports"]] == ["TCP", "UDP"]  # a set value is kept
    assert pod["initContainers"][0]["ports"] == [{"containerPort": 1, "protocol": "TCP"}]


def test_structural_defaults_create_no_parent_and_keep_set_values() -> None:
    spec = {"replicatedJobs": [{"name": "a", "replicas": 3, "groupName": "g"}]}
    out = default_jobset_spec(spec)
    assert "failurePolicy" not in out and "volumeClaimPolicies" not in out
    assert out["replicatedJobs"] == [{"name": "a", "replicas": 3, "groupName": "g"}]


def test_structural_defaults_return_a_copy() -> None:
    spec = {"failurePolicy": {}, "replicatedJobs": [_rjob([{"containerPort": 1}])]}
    default_jobset_spec(spec)
    assert spec["failurePolicy"] == {}
    assert "groupName" not in spec["replicatedJobs"][0]


def test_structural_defaults_tolerate_malformed_entries() -> None:
    spec = {"replicatedJobs": ["x", {"template": {"spec": None}}], "volumeClaimPolicies": [None]}
    out = default_jobset_spec(spec)
    assert out["replicatedJobs"][0] == "x"
    assert out["replicatedJobs"][1]["replicas"] == 1


def _template(*rjobs: dict[str, object]) -> dict[str, object]:
    return {"replicatedJobs": list(rjobs)}


def _job(ancestor: str | None, containers: list[dict[str, object]]) -> dict[str, object]:
    labels = {c.LABEL_ANCESTOR: ancestor} if ancestor else {}
    return {"template": {"metadata": {"labels": labels}, "spec": {"template": {"spec": {"containers": containers}}}}}


def test_trainer_container_is_the_node_container_of_the_trainer_job() -> None:
    spec = _template(
        _job(c.ANCESTOR_DATASET_INITIALIZER, [{"name": c.NODE, "image": "init"}]),
        _job(c.ANCESTOR_TRAINER, [{"name": "sidecar", "image": "side"}, {"name": c.NODE, "image": "train"}]),
    )
    found = runtime_trainer_container(spec)
    assert found == {"name": c.NODE, "image": "train"}
    found["image"] = "changed"  # a copy
    assert runtime_trainer_container(spec)["image"] == "train"


@pytest.mark.parametrize(
    "spec",
    [
        None,
        "text",
        {},
        {"replicatedJobs": "x"},
        _template(_job(None, [{"name": c.NODE}])),  # no ancestor label
        _template(_job(c.ANCESTOR_TRAINER, [{"name": "other"}])),  # no node container
        _template(_job(c.ANCESTOR_TRAINER, "not a list")),  # type: ignore[arg-type]
        _template({"template": {"metadata": {"labels": "x"}}}),
    ],
)
def test_no_trainer_container_is_an_empty_dict(spec: object) -> None:
    assert runtime_trainer_container(spec) == {}
