"""The torch ML policy (`ktrain.engine.plugins.torch`, upstream `plugins/torch/torch.go`): torchrun's
settings as PET_* env on the trainer container."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.plugins.torch import RESERVED_ENVS, TorchPlugin
from ktrain.errors import ValidationFailedError

from .renders import COMPLETION_INDEX, MASTER, container, env, job, objects, runtime, step

TORCH = {"torch": {}}


def test_torch_sets_torchrun_env_from_the_node_count() -> None:
    found = env(container(objects(job(numNodes=3), runtime(TORCH))))
    assert found["PET_NNODES"] == "3"
    assert found["PET_NODE_RANK"] == COMPLETION_INDEX
    assert found["PET_MASTER_ADDR"] == MASTER
    assert found["PET_MASTER_PORT"] == str(c.CONTAINER_TRAINER_PORT)


def nproc(**trainer: object) -> str:
    return str(env(container(objects(job(numNodes=1, **trainer), runtime(TORCH))))["PET_NPROC_PER_NODE"])


def test_torch_nproc_per_node_is_auto_with_gpus_else_the_cpu_count_unless_the_job_sets_it() -> None:
    assert nproc(resourcesPerNode={"limits": {"nvidia.com/gpu": "4", "cpu": "8"}}) == "auto"
    assert nproc(resourcesPerNode={"limits": {"cpu": "2500m"}}) == "3"  # rounded up
    assert nproc(resourcesPerNode={"limits": {"cpu": "8"}}, numProcPerNode=2) == "2"


def test_torch_opens_the_trainer_port() -> None:
    ports = container(objects(job(numNodes=1), runtime(TORCH)))["ports"]
    assert [p["containerPort"] for p in ports] == [c.CONTAINER_TRAINER_PORT]


def test_torch_refuses_a_reserved_env_var_in_the_job() -> None:
    try:
        objects(job(numNodes=1, env=[{"name": "PET_NNODES", "value": "9"}]), runtime(TORCH))
    except ValidationFailedError as exc:
        assert any("PET_NNODES" in str(e) for e in exc.errors), exc.errors
    else:
        raise AssertionError("a job setting PET_NNODES rendered")


def test_torch_env_injection_targets_get_the_master_address_too() -> None:
    sidecar = step("helper", None, container_name="agent")
    ml = {"torch": {"envInjection": {"targets": [{"jobName": "helper", "containerNames": ["agent"]}]}}}
    found = objects(job(numNodes=2), runtime(ml, step(c.NODE, c.ANCESTOR_TRAINER), sidecar))
    assert env(container(found, rjob="helper", name="agent"))["PET_MASTER_ADDR"] == MASTER


def test_without_the_torch_key_no_pet_env_is_set() -> None:
    assert not [k for k in env(container(objects(job(numNodes=2), runtime({})))) if k.startswith("PET_")]


def test_every_torchrun_variable_is_reserved() -> None:
    assert TorchPlugin.policy_key == "torch"
    for name in RESERVED_ENVS:
        try:
            objects(job(numNodes=1, env=[{"name": name, "value": "x"}]), runtime(TORCH))
        except ValidationFailedError as exc:
            assert name in str(exc.errors[0])
        else:
            raise AssertionError(f"a job setting {name} rendered")
