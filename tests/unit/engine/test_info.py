"""`ktrain.engine.info`, stage S1 of a render (upstream `newRuntimeInfo`, ENGINE.md §4): the RuntimeInfo
built from a runtime and a TrainJob, its pod sets, the job's resourcesPerNode merged into the trainer's
`node` container, runtimePatches applied, and the names and owner the later stages give objects."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.api.records import validate
from ktrain.engine import RenderContext
from ktrain.engine.info import RuntimeInfo, build_runtime_info, merge_resources
from ktrain.errors import ValidationFailedError

from .plugins.renders import job, runtime, step

UID = "00000000-0000-0000-0000-000000000001"  # renders.job's


def _info(job_data: dict[str, Any], runtime_data: dict[str, Any]) -> RuntimeInfo:
    trainjob, trainingruntime = validate("TrainJob", job_data), validate("TrainingRuntime", runtime_data)
    return build_runtime_info(trainjob, trainingruntime, RenderContext())


def _initializer(parallelism: int | None = None) -> dict[str, Any]:
    rjob = step(c.DATASET_INITIALIZER, c.ANCESTOR_DATASET_INITIALIZER, container_name=c.DATASET_INITIALIZER)
    if parallelism is not None:
        rjob["template"]["spec"]["parallelism"] = parallelism
    return rjob


def test_the_trainer_pod_set_has_the_policys_node_count_and_the_others_their_parallelism() -> None:
    rt = runtime({"torch": {}}, _initializer(3), step(c.NODE, c.ANCESTOR_TRAINER), num_nodes=4)
    info = _info(job(), rt)
    assert [(ps.name, ps.ancestor, ps.count) for ps in info.pod_sets] == [
        (c.DATASET_INITIALIZER, c.ANCESTOR_DATASET_INITIALIZER, 3),
        (c.NODE, c.ANCESTOR_TRAINER, 4),
    ]
    trainer = info.trainer_pod_set()
    assert trainer is not None and trainer is info.pod_set(c.NODE)
    assert info.pod_set("nowhere") is None
    container = info.trainer_container()
    assert container is not None and container["image"] == "img:1"


def test_a_runtime_without_a_trainer_step_has_no_trainer_container() -> None:
    info = _info(job(), runtime({"torch": {}}, _initializer()))
    assert info.trainer_pod_set() is None and info.trainer_container() is None
    assert info.pod_sets[0].count == 1  # no parallelism: one pod


def test_resources_per_node_are_merged_into_the_trainer_node_container_only() -> None:
    rt = runtime({"torch": {}}, _initializer(), step(c.NODE, c.ANCESTOR_TRAINER))
    for rjob in rt["spec"]["template"]["spec"]["replicatedJobs"]:
        container = rjob["template"]["spec"]["template"]["spec"]["containers"][0]
        container["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"}}
    info = _info(job(resourcesPerNode={"limits": {"cpu": "1500m"}, "requests": {"memory": "1024Mi"}}), rt)
    node = info.trainer_container()
    assert node is not None
    # per key: the job's cpu limit replaces the runtime's, its memory limit stays; quantities canonical
    assert node["resources"] == {"limits": {"cpu": "1500m", "memory": "1Gi"}, "requests": {"memory": "1Gi"}}
    initializer = info.pod_set(c.DATASET_INITIALIZER)
    assert initializer is not None
    assert initializer.container(c.DATASET_INITIALIZER)["resources"] == {"limits": {"cpu": "1", "memory": "1Gi"}}
    # what the scheduler plugins count: the pod's requests (PodRequests), after the merge
    assert {k: str(v) for k, v in info.pod_sets[1].single_pod_requests.items()} == {"memory": "1Gi"}


def test_without_an_ml_policy_resources_per_node_are_not_merged() -> None:
    rt = runtime({})
    del rt["spec"]["mlPolicy"]
    info = _info(job(resourcesPerNode={"limits": {"cpu": "2"}}), rt)
    node = info.trainer_container()
    assert node is not None and "resources" not in node
    assert info.ml_policy is None


def test_merge_resources_merges_claims_by_name() -> None:
    current = {"claims": [{"name": "gpu", "request": "a"}, {"name": "nic"}], "requests": {"cpu": "1"}}
    merged = merge_resources(current, {"claims": [{"name": "gpu", "request": "b"}, {"name": "fpga"}]})
    assert merged == {
        "claims": [{"name": "gpu", "request": "b"}, {"name": "nic"}, {"name": "fpga"}],
        "requests": {"cpu": "1"},
    }
    assert current["claims"][0] == {"name": "gpu", "request": "a"}  # the runtime's own is not changed
    assert merge_resources(None, {"requests": {"memory": "0.5Gi"}}) == {"requests": {"memory": "512Mi"}}


def test_runtime_patches_add_metadata_and_patch_the_jobset_spec() -> None:
    rt = runtime({"torch": {}})
    rt["spec"]["template"]["metadata"] = {"labels": {"team": "a", "tier": "x"}, "annotations": {"note": "rt"}}
    data = job()
    patch_spec = {"replicatedJobs": [{"name": c.NODE, "template": {"spec": {"backoffLimit": 7}}}]}
    data["spec"]["runtimePatches"] = [
        {
            "manager": "kueue",
            "trainingRuntimeSpec": {
                "template": {"metadata": {"labels": {"tier": "y"}, "annotations": {"p": "1"}}, "spec": patch_spec}
            },
        },
        {"manager": "nothing-to-patch"},
    ]
    info = _info(data, rt)
    assert info.labels == {"team": "a", "tier": "y"}
    assert info.annotations == {"note": "rt", "p": "1"}
    (rjob,) = info.spec["replicatedJobs"]
    assert rjob["template"]["spec"]["backoffLimit"] == 7
    assert rjob["template"]["spec"]["template"]["spec"]["containers"][0]["image"] == "img:1"  # merged, not replaced


def test_a_patch_that_cannot_be_applied_is_an_error_of_the_runtime_patches() -> None:
    data = job()
    bad = {"replicatedJobs": [{"$patch": "delete"}]}  # apimachinery: an element without its merge key
    data["spec"]["runtimePatches"] = [{"manager": "m", "trainingRuntimeSpec": {"template": {"spec": bad}}}]
    with pytest.raises(ValidationFailedError) as raised:
        _info(data, runtime({"torch": {}}))
    (error,) = raised.value.errors
    assert error.path == "spec.runtimePatches"
    assert "cannot apply the patches: map: {} does not contain declared merge key: name" in str(error)


def test_pod_dns_names_use_the_network_subdomain_or_the_job_name() -> None:
    info = _info(job(), runtime({"torch": {}}, num_nodes=2))
    trainer = info.trainer_pod_set()
    assert trainer is not None
    assert list(info.endpoints(trainer)) == ["j-node-0-0.j", "j-node-0-1.j"]
    rt = runtime({"torch": {}}, num_nodes=2)
    rt["spec"]["template"]["spec"]["network"] = {"subdomain": "hosts"}
    info = _info(job(), rt)
    assert list(info.endpoints(info.pod_sets[0])) == ["j-node-0-0.hosts", "j-node-0-1.hosts"]


def test_objects_are_owned_by_the_trainjob_when_it_has_a_uid() -> None:
    info = _info(job(), runtime({"torch": {}}))
    owner = {
        "apiVersion": c.TRAINER_API_VERSION,
        "kind": "TrainJob",
        "name": "j",
        "uid": UID,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert info.object_meta("j-x") == {"name": "j-x", "namespace": "ns", "ownerReferences": [owner]}
    data = job()
    del data["metadata"]["uid"]
    assert _info(data, runtime({"torch": {}})).object_meta("j-x") == {"name": "j-x", "namespace": "ns"}


def test_the_trainers_command_and_args_are_copied_for_the_later_stages() -> None:
    data = job(command=["python"], args=["train.py"])
    info = _info(data, runtime({"torch": {}}))
    assert (info.trainer_command, info.trainer_args) == (["python"], ["train.py"])
    assert info.trainer_command is not info.job.spec.trainer.command
    plain = _info(job(), runtime({"torch": {}}))
    assert (plain.trainer_command, plain.trainer_args) == (None, None)
