"""`--elastic MIN:MAX` on the rendered JobSet (`ktrain.authoring.elastic`). The render through a
bundled runtime is checked in tests/test_placement_render.py."""

from __future__ import annotations

import pytest

from ktrain.authoring.elastic import apply, parse_elastic
from ktrain.errors import ExitCode, UsageError


def torch_jobset(env: list[dict] | None = None, **spec: object) -> dict:
    if env is None:
        env = [
            {"name": "PET_NNODES", "value": "4"},
            {"name": "PET_MASTER_ADDR", "value": "job-node-0-0.job"},
            {"name": "PET_MASTER_PORT", "value": "29500"},
            {"name": "PET_RDZV_BACKEND", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
        ]
    container = {"name": "node", "env": env}
    rjob = {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [container]}}}}}
    return {"kind": "JobSet", "spec": {"replicatedJobs": [rjob], **spec}}


def env_of(jobset: dict) -> dict[str, object]:
    (container,) = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_min_max_is_two_counts_in_order() -> None:
    assert parse_elastic("2:4") == (2, 4)
    assert parse_elastic("3:3") == (3, 3)
    for bad, message in (
        ("4", "is not MIN:MAX"),
        ("2-4", "is not MIN:MAX"),
        ("a:4", "is not MIN:MAX"),
        ("2:", "is not MIN:MAX"),
        ("0:4", "need 1 <= MIN <= MAX"),
        ("4:2", "need 1 <= MIN <= MAX"),
        (f"1:{2**31}", "need 1 <= MIN <= MAX"),
    ):
        with pytest.raises(UsageError, match=message) as err:
            parse_elastic(bad)
        assert err.value.exit_code == ExitCode.USAGE


def test_torchrun_gets_a_c10d_rendezvous_at_the_master_and_the_restart_budget() -> None:
    jobset = torch_jobset()
    apply([jobset], min_nodes=2, max_nodes=4, max_restarts=3)
    env = env_of(jobset)
    assert env["PET_NNODES"] == "2:4"
    assert env["PET_RDZV_BACKEND"] == "c10d"  # a valueFrom is replaced by the value
    assert env["PET_RDZV_ENDPOINT"] == "job-node-0-0.job:29500"
    assert env["PET_MAX_RESTARTS"] == "3"
    assert jobset["spec"]["failurePolicy"] == {"maxRestarts": 3}
    names = [
        e["name"]
        for e in jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    ]
    assert len(names) == len(set(names))  # updated in place, never duplicated


def test_the_runtimes_own_restart_budget_is_kept_and_no_budget_adds_none() -> None:
    kept = torch_jobset(failurePolicy={"maxRestarts": 7})
    apply([kept], min_nodes=1, max_nodes=2, max_restarts=3)
    assert kept["spec"]["failurePolicy"] == {"maxRestarts": 7}
    assert env_of(kept)["PET_MAX_RESTARTS"] == "3"
    plain = torch_jobset()
    apply([plain], min_nodes=1, max_nodes=2, max_restarts=None)
    assert "failurePolicy" not in plain["spec"] and "PET_MAX_RESTARTS" not in env_of(plain)


def test_a_runtime_without_torchrun_is_refused() -> None:
    with pytest.raises(UsageError, match="--elastic needs a torch runtime") as err:
        apply([torch_jobset(env=[{"name": "XGBOOST", "value": "1"}])], min_nodes=1, max_nodes=2, max_restarts=None)
    assert err.value.hint == "e.g. --runtime torch-distributed"
    with pytest.raises(UsageError, match="needs a torch runtime"):
        apply([{"kind": "TrainJob"}], min_nodes=1, max_nodes=2, max_restarts=None)
    no_master = torch_jobset(env=[{"name": "PET_NNODES", "value": "2"}])
    with pytest.raises(UsageError, match="no torchrun master address"):
        apply([no_master], min_nodes=1, max_nodes=2, max_restarts=None)
