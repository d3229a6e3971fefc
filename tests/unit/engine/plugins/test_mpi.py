"""The MPI ML policy (`ktrain.engine.plugins.mpi`, upstream `plugins/mpi/mpi.go`): the hostfile
ConfigMap, the SSH Secret, and OpenMPI's settings on the launcher."""

from __future__ import annotations

from base64 import b64decode

import pytest
from conftest import REPO

from ktrain import constants as c
from ktrain.engine.plugins.mpi import HOSTFILE_SUFFIX, SSH_AUTH_SECRET_SUFFIX
from ktrain.errors import ValidationFailedError

from .renders import KEY, container, env, job, objects, of_kind, runtime, step

MPI_CASE = REPO / "tests" / "golden" / "cases" / "mpi" / "launcher-count-from-policy"
STEPS = (step(c.LAUNCHER, c.ANCESTOR_TRAINER), step(c.NODE, c.ANCESTOR_TRAINER))


def mpi(**policy: object) -> dict[str, object]:
    return runtime({"mpi": {"numProcPerNode": 2, **policy}}, *STEPS)


def test_the_hostfile_lists_every_node_pod_with_its_slots() -> None:
    (hostfile,) = of_kind(objects(job(numNodes=2), mpi()), "ConfigMap")
    assert hostfile["metadata"]["name"] == "j-mpi-hostfile" == "j" + HOSTFILE_SUFFIX
    assert hostfile["data"]["hostfile"] == "j-node-0-0.j slots=2\nj-node-0-1.j slots=2\n"


def test_the_launcher_as_node_is_a_host_too_and_the_nodes_one_fewer() -> None:
    (hostfile,) = of_kind(objects(job(numNodes=3), mpi(runLauncherAsNode=True)), "ConfigMap")
    hosts = [line.split()[0] for line in hostfile["data"]["hostfile"].splitlines()]
    assert hosts == ["j-launcher-0-0.j", "j-node-0-0.j", "j-node-0-1.j"]


def test_the_ssh_secret_holds_the_key_pair_from_the_context() -> None:
    (secret,) = of_kind(objects(job(numNodes=1), mpi()), "Secret")
    assert secret["metadata"]["name"] == "j-mpi-ssh-auth" == "j" + SSH_AUTH_SECRET_SUFFIX
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert b64decode(secret["data"]["ssh-privatekey"]) == KEY.private_key_pem
    assert b64decode(secret["data"]["ssh-publickey"]) == KEY.public_key_line


def test_an_existing_secret_is_mounted_instead_of_made() -> None:
    found = objects(job(numNodes=1), mpi(), ssh_secret_name="mine")
    assert of_kind(found, "Secret") == []


def test_openmpi_reads_the_hostfile_and_slots_from_env_on_the_launcher_only() -> None:
    found = objects(job(numNodes=2), mpi(sshAuthMountPath="/home/u/.ssh"))
    launcher = container(found, rjob=c.LAUNCHER)
    assert env(launcher)["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    assert env(launcher)["OMPI_MCA_orte_set_default_slots"] == "2"
    assert {"name": "mpi-ssh-auth", "mountPath": "/home/u/.ssh"} in launcher["volumeMounts"]
    assert "OMPI_MCA_orte_default_hostfile" not in env(container(found))


def test_a_hostfile_over_a_configmap_s_size_is_refused_before_it_is_built() -> None:
    try:
        objects(job(numNodes=200_000), mpi())  # ~5 MB of `j-node-0-N.j slots=2` lines
    except ValidationFailedError as exc:
        (too_large,) = exc.errors
        assert too_large.path == "spec.trainer.numNodes" and too_large.kind == "TooLong"
    else:
        raise AssertionError("a 5 MB hostfile rendered")


@pytest.mark.parametrize("nodes", [1, 9, 10, 11, 99, 100, 101, 1234])
def test_hostfile_size_is_the_length_of_the_hostfile(nodes: int) -> None:
    from ktrain.api.records import validate
    from ktrain.engine import RenderContext, SshKeyPair
    from ktrain.engine.framework import select_ml_plugin
    from ktrain.engine.info import build_runtime_info
    from ktrain.engine.plugins.mpi import hostfile, hostfile_size
    from ktrain.inputs.documents import load_documents

    runtime = validate("TrainingRuntime", load_documents((MPI_CASE / "runtime.yaml").read_text(), "r")[0].data)
    job = validate(
        "TrainJob",
        {
            "metadata": {"name": "mp", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "mpi", "kind": "TrainingRuntime"}, "trainer": {"numNodes": nodes}},
        },
    )
    info = build_runtime_info(job, runtime, RenderContext(ssh_key=SshKeyPair(b"k", b"k\n")))
    select_ml_plugin(runtime).enforce_ml_policy(info)
    assert hostfile_size(info) == len(hostfile(info))
