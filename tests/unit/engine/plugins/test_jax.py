"""The JAX ML policy (`ktrain.engine.plugins.jax`, upstream `plugins/jax/jax.go`): jax.distributed's
settings as env on the trainer container."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.plugins.jax import JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID

from .renders import COMPLETION_INDEX, MASTER, container, env, job, objects, runtime


def test_jax_sets_process_count_id_and_coordinator() -> None:
    found = env(container(objects(job(numNodes=4), runtime({"jax": {}}))))
    assert found["JAX_NUM_PROCESSES"] == "4"
    assert found["JAX_PROCESS_ID"] == COMPLETION_INDEX
    assert found["JAX_COORDINATOR_ADDRESS"] == f"{MASTER}:{c.CONTAINER_TRAINER_PORT}"


def test_jax_counts_the_runtime_nodes_when_the_job_sets_none() -> None:
    found = env(container(objects(job(image="x:1"), runtime({"jax": {}}, num_nodes=3))))
    assert found["JAX_NUM_PROCESSES"] == "3"


def test_without_the_jax_key_no_jax_env_is_set() -> None:
    assert not [k for k in env(container(objects(job(numNodes=2), runtime({})))) if k.startswith("JAX_")]


def test_jax_names_its_variables_as_jax_distributed_reads_them() -> None:
    assert (JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_COORDINATOR_ADDRESS) == (
        "JAX_NUM_PROCESSES",
        "JAX_PROCESS_ID",
        "JAX_COORDINATOR_ADDRESS",
    )
