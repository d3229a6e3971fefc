"""The XGBoost ML policy (`ktrain.engine.plugins.xgboost`, upstream `plugins/xgboost`): the DMLC
tracker settings as env, and `trainer.env` as PlainML would copy it."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.plugins.xgboost import RESERVED_ENVS
from ktrain.errors import ValidationFailedError

from .renders import COMPLETION_INDEX, MASTER, container, env, job, objects, runtime

XGB = {"xgboost": {}}


def test_xgboost_points_every_worker_at_the_tracker_on_rank_0() -> None:
    found = env(container(objects(job(numNodes=2, env=[{"name": "A", "value": "1"}]), runtime(XGB))))
    assert found["DMLC_TRACKER_URI"] == MASTER
    assert found["DMLC_TRACKER_PORT"] == str(c.CONTAINER_TRAINER_PORT)
    assert found["DMLC_TASK_ID"] == COMPLETION_INDEX
    assert found["A"] == "1"  # upstream's PlainML runs beside it


def test_xgboost_counts_one_worker_per_gpu() -> None:
    trainer = {"numNodes": 3, "resourcesPerNode": {"requests": {"nvidia.com/gpu": "2"}}}
    assert env(container(objects(job(**trainer), runtime(XGB))))["DMLC_NUM_WORKER"] == "6"
    assert env(container(objects(job(numNodes=3), runtime(XGB))))["DMLC_NUM_WORKER"] == "3"


def test_xgboost_refuses_a_reserved_env_var() -> None:
    try:
        objects(job(numNodes=1, env=[{"name": "DMLC_NUM_WORKER", "value": "9"}]), runtime(XGB))
    except ValidationFailedError as exc:
        assert [e.path for e in exc.errors] == ["spec.trainer.env[0]"], exc.errors
    else:
        raise AssertionError("a job setting DMLC_NUM_WORKER rendered")


def test_every_dmlc_variable_is_reserved() -> None:
    for name in RESERVED_ENVS:
        try:
            objects(job(numNodes=1, env=[{"name": name, "value": "x"}]), runtime(XGB))
        except ValidationFailedError as exc:
            assert f"{name} is reserved for the XGBoost runtime" in str(exc.errors[0])
        else:
            raise AssertionError(f"a job setting {name} rendered")
