"""ktrain/convert/roles.py: the replica specs of a v1 job, read as the v1 defaulters and validators
read them (replica type case, counts, restart policies, the framework container)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from v1convert import ELASTIC, env_of, one, pytorch, rendered, replica, rows, tfjob

from ktrain.convert.report import DROPPED, KEPT
from ktrain.errors import InputError


def test_replica_types_in_any_case_are_renamed_as_v1s_defaulter_did(tmp_path: Path) -> None:
    """pkg/apis/kubeflow.org/v1 defaulting_utils.go setTypeNameToCamelCase (from SetDefaults_TFJob):
    the webhook stored `Ps` as `PS` before the controller read the job, so a TFJob written with `Ps`
    ran a parameter server listed as "ps" in TF_CONFIG. ktrain refused the job."""
    job = tfjob({"Ps": replica(1), "worker": replica(2)})
    conv = one(job)
    table = rows(conv)
    assert table["spec.tfReplicaSpecs.Ps"][0] == KEPT and "'PS'" in table["spec.tfReplicaSpecs.Ps"][2]
    assert table["spec.tfReplicaSpecs.worker"][0] == KEPT
    objects = rendered(job, tmp_path)
    tf_config = env_of(objects, "ps")["TF_CONFIG"]
    assert '"ps":["$(KTRAIN_JOBSET)-ps-0-0.$(KTRAIN_JOBSET):2222"]' in tf_config
    assert '"task":{"type":"ps"' in tf_config
    assert '"worker":[' in env_of(objects, "node")["TF_CONFIG"]


def test_two_spellings_of_one_replica_type_are_refused() -> None:
    """setTypeNameToCamelCase renames one of them and the other overwrites it: v1 silently lost a
    replica spec. ktrain says so instead of guessing which one counts."""
    with pytest.raises(InputError, match="same type"):
        one(tfjob({"PS": replica(1), "ps": replica(2), "Worker": replica(1)}))


def test_mpijob_replica_types_keep_their_case() -> None:
    """SetDefaults_MPIJob has no camel-case step (and mpi-operator v2beta1 has no defaulter for it):
    a lower-case `worker` was never a Worker, so it stays refused."""
    job = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "m"},
        "spec": {"mpiReplicaSpecs": {"Launcher": replica(1), "worker": replica(2)}},
    }
    with pytest.raises(InputError, match="unknown MPIJob replica type 'worker'"):
        one(job)


def test_a_template_restart_policy_v1_overwrote_is_reported_dropped() -> None:
    """kubeflow/common pod.go setRestartPolicy: the controller wrote the replica's restartPolicy
    (a TFJob's default Never) over the template's `restartPolicy: OnFailure`. The pods get Never;
    the report must not call the template's OnFailure kept."""
    job = tfjob({"Chief": replica(1, restartPolicy="OnFailure"), "Worker": replica(1, restartPolicy="Never")})
    conv = one(job)
    table = rows(conv)
    status, _, note = table["spec.tfReplicaSpecs.Chief.template.spec.restartPolicy"]
    assert status == DROPPED and "Never" in note
    assert table["spec.tfReplicaSpecs.Worker.template.spec.restartPolicy"][0] == KEPT
    for rjob in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        assert rjob["template"]["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_v1_mpijob_worker_without_replicas_has_none(tmp_path: Path) -> None:
    """training-operator pkg/apis/kubeflow.org/v1 mpi_defaults.go SetDefaults_MPIJob
    (setDefaultReplicas(Worker, 0)) and mpi-operator v2beta1 setDefaultsTypeWorker (Replicas 0): an
    MPIJob whose Worker names no replicas ran its launcher alone; ktrain ran one worker (the default
    of every other replica type)."""
    cont = {"name": "mpi", "image": "i:1", "command": ["mpirun", "x"]}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "m"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {"template": {"spec": {"containers": [cont]}}},
                "Worker": {"template": {"spec": {"containers": [{"name": "mpi", "image": "i:1"}]}}},
            }
        },
    }
    for api in ("kubeflow.org/v1", "kubeflow.org/v2beta1"):
        job["apiVersion"] = api
        conv = one(job)
        steps = [r["name"] for r in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]]
        assert steps == ["launcher"], api
        assert rows(conv)["spec.mpiReplicaSpecs.Worker.replicas"][0] == DROPPED


def test_more_than_one_master_is_refused_as_v1_did() -> None:
    """pkg/apis/kubeflow.org/v1 pytorch_validation.go: "There must be only 1 master replica"."""
    job = pytorch()
    job["spec"]["pytorchReplicaSpecs"]["Master"] = {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "pytorch", "image": "torch:2"}]}},
    }
    with pytest.raises(InputError, match="there must be only 1 master replica"):
        one(job)


def test_two_containers_and_none_named_as_expected_is_an_error_naming_the_container() -> None:
    text = ELASTIC.replace(
        "          - name: pytorch\n", "          - name: sidecar\n            image: s:1\n          - name: trainer\n"
    )
    with pytest.raises(InputError, match="none is named 'pytorch'") as exc:
        one(text)
    assert exc.value.hint == "name the framework container 'pytorch'"
    assert exc.value.line == 19  # the containers list


@pytest.mark.parametrize("replicas", [2147483647, 100000])
def test_huge_replica_counts_are_refused_fast(replicas: int) -> None:
    """Issue #25: 2^31-1 XGBoost replicas took 25 s and 270 MB to build a WORKER_ADDRS nobody
    could store; refused before anything is built."""
    job: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": "x"},
        "spec": {
            "xgbReplicaSpecs": {
                t: {"replicas": n, "template": {"spec": {"containers": [{"name": "xgboost", "image": "x:1"}]}}}
                for t, n in (("Master", 1), ("Worker", replicas))
            }
        },
    }
    with pytest.raises(InputError, match="more than the 1572864 bytes"):
        one(job)
    job["spec"]["xgbReplicaSpecs"]["Worker"]["replicas"] = 2**31
    with pytest.raises(InputError, match="at most 2147483647"):
        one(job)


def test_camel_case_is_v1s_defaulter_for_the_training_operator_kinds_only() -> None:
    from ktrain.convert.kinds import KINDS, V1, V2BETA1
    from ktrain.convert.roles import camel_case

    assert camel_case(KINDS["TFJob"], V1, "ps") == "PS"
    assert camel_case(KINDS["PyTorchJob"], V1, "WORKER") == "Worker"
    assert camel_case(KINDS["PyTorchJob"], V1, "Launcher") == "Launcher"  # not a PyTorch type: as written
    assert camel_case(KINDS["MPIJob"], V1, "worker") == "worker"  # SetDefaults_MPIJob does not rename
    assert camel_case(KINDS["MPIJob"], V2BETA1, "worker") == "worker"
