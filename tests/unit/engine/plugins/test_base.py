"""What the plugins share (`ktrain.engine.plugins.base`): the no-op phases of a plugin, the
GPU/CPU detection (ENGINE.md §6.2 step 2, §16 item 4) and the torchrun process count it gives,
the master address, and the reserved-env refusal, on the bundled runtimes."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.engine.plugins.base import AUTO, Plugin, cpu_count, gpu_count

from .renders import bundled, bundled_job, container, env, objects


@pytest.mark.parametrize(
    ("resources", "gpus"),
    [
        ({}, 0),
        ({"limits": {"nvidia.com/gpu": 4}}, 4),
        ({"limits": {"amd.com/GPU": "2"}}, 2),  # any name with "gpu", any case
        ({"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 8}}, 1),  # requests first
        ({"requests": {"nvidia.com/gpu": 0}, "limits": {"nvidia.com/gpu": 8}}, 8),  # a zero request: limits
        ({"limits": {"nvidia.com/gpu": "1500m"}}, 2),  # rounded up
        ({"limits": {"cpu": "4"}}, 0),
    ],
)
def test_gpu_count(resources: dict[str, Any], gpus: int) -> None:
    assert gpu_count(resources) == gpus


@pytest.mark.parametrize(
    ("resources", "cpus"),
    [
        ({}, 1),
        ({"limits": {"cpu": "8"}}, 8),
        ({"requests": {"cpu": "2"}, "limits": {"cpu": "8"}}, 2),
        ({"requests": {"cpu": "0"}, "limits": {"cpu": "8"}}, 8),  # a zero request: the limit
        ({"requests": {"cpu": "2500m"}}, 3),  # rounded up
        ({"requests": {"cpu": "100m"}}, 1),
        ({"requests": {"cpu": "0"}}, 1),  # at least 1
    ],
)
def test_cpu_count(resources: dict[str, Any], cpus: int) -> None:
    assert cpu_count(resources) == cpus


def nproc(runtime: str, **trainer: Any) -> str:
    trainer.setdefault("numNodes", 1)  # (without spec.trainer torch sets no env, as upstream)
    return str(env(container(objects(bundled_job(runtime, **trainer), bundled(runtime))))["PET_NPROC_PER_NODE"])


def test_the_runtime_container_resources_are_detected_when_the_job_sets_none() -> None:
    """torchtune-llama3.2-1b's node container has `limits: {nvidia.com/gpu: 2}`."""
    assert nproc("torchtune-llama3.2-1b") == AUTO
    assert nproc("torch-distributed") == "1"  # no resources at all: one CPU


def test_the_job_resources_are_detected_as_written_not_merged() -> None:
    """ENGINE.md §16 item 4: the runtime's 2 GPUs plus a TrainJob `requests: {cpu: 4}` give 4
    processes, though the container ends up with both."""
    found = objects(
        bundled_job("torchtune-llama3.2-1b", resourcesPerNode={"requests": {"cpu": "4"}}),
        bundled("torchtune-llama3.2-1b"),
    )
    ct = container(found)
    assert env(ct)["PET_NPROC_PER_NODE"] == "4"
    assert ct["resources"] == {"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "4"}}


def test_an_explicit_process_count_wins() -> None:
    assert nproc("torchtune-llama3.2-1b", numProcPerNode=3) == "3"


def test_the_master_address_is_the_first_node_pod_of_the_job() -> None:
    ct = container(objects(bundled_job("torch-distributed", "mnist", numNodes=2), bundled("torch-distributed")))
    assert env(ct)["PET_MASTER_ADDR"] == "mnist-node-0-0.mnist"


def test_reserved_envs_are_refused_sorted_in_one_error() -> None:
    from ktrain.errors import ValidationFailedError

    job = bundled_job(
        "torch-distributed",
        env=[
            {"name": "PET_NODE_RANK", "value": "1"},
            {"name": "PET_NNODES", "value": "2"},
            {"name": "OK", "value": "1"},
        ],
    )
    with pytest.raises(ValidationFailedError) as err:
        objects(job, bundled("torch-distributed"))
    assert [(e.path, e.message) for e in err.value.errors] == [
        ("spec.trainer.env", "must not have reserved envs, invalid envs configured: [PET_NNODES PET_NODE_RANK]")
    ]


def test_a_plugin_does_nothing_in_a_phase_it_does_not_override() -> None:
    class Quiet(Plugin):
        name = "quiet"

    plugin = Quiet()
    assert Quiet.policy_key is None
    info: Any = object()  # no phase reads it
    assert plugin.validate(info) == []
    assert plugin.enforce_ml_policy(info) is None
    assert plugin.enforce_pod_group_policy(info) is None
    assert plugin.build(info) == []
