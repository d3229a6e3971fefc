"""mpi-operator's volume names in user mounts (issue #33, cause 5).

mpi-operator v2 (`pkg/controller/mpi_job_controller.go`: setupSSHOnPod names the SSH Secret's
volume `ssh-auth` on the launcher and the workers; newLauncherPodTemplate names the hostfile
ConfigMap's `mpi-job-config`, on the launcher); training-operator's v1 MPIJob
(`pkg/controller.v1/mpi/mpijob_controller.go` newLauncher: `mpi-job-config` and the kubectl
volume `mpi-job-kubectl`). A user's init container that mounts them by those names must keep
working under Trainer v2, whose MPI policy names them `mpi-ssh-auth` and `mpi-hostfile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ktrain.convert import convert_documents
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import load_documents


def mpijob(api: str = "kubeflow.org/v2beta1", launcher_volumes: list[Any] | None = None) -> dict[str, Any]:
    init = {
        "name": "copy-keys",
        "image": "busybox",
        "command": ["sh", "-c", "cp /keys/* /root/.ssh/ && cat /mpi/hostfile"],
        "volumeMounts": [{"name": "ssh-auth", "mountPath": "/keys"}, {"name": "mpi-job-config", "mountPath": "/mpi"}],
    }
    if api == "kubeflow.org/v1":
        init["volumeMounts"] = [
            {"name": "mpi-job-config", "mountPath": "/mpi"},
            {"name": "mpi-job-kubectl", "mountPath": "/opt/kube"},
        ]
    launcher_pod: dict[str, Any] = {
        "initContainers": [init],
        "containers": [{"name": "mpi", "image": "mpi:1", "command": ["mpirun", "hello"]}],
    }
    if launcher_volumes is not None:
        launcher_pod["volumes"] = launcher_volumes
    worker_pod = {
        "initContainers": [
            {"name": "keys", "image": "busybox", "volumeMounts": [{"name": "ssh-auth", "mountPath": "/keys"}]}
        ],
        "containers": [{"name": "mpi", "image": "mpi:1", "command": ["/usr/sbin/sshd", "-De"]}],
    }
    if api == "kubeflow.org/v1":
        worker_pod["initContainers"] = []
    return {
        "apiVersion": api,
        "kind": "MPIJob",
        "metadata": {"name": "pi"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": launcher_pod}},
                "Worker": {"replicas": 2, "template": {"spec": worker_pod}},
            }
        },
    }


def convert(job: dict[str, Any]) -> Any:
    (conv,) = convert_documents(load_documents(yaml.safe_dump(job), "job.yaml"))
    return conv


def pod(conv: Any, rjob: str) -> dict[str, Any]:
    rjobs = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]
    spec: dict[str, Any] = next(r for r in rjobs if r["name"] == rjob)["template"]["spec"]["template"]["spec"]
    return spec


def test_mpi_operator_volume_names_become_trainer_v2s(tmp_path: Path, cli: Any) -> None:
    conv = convert(mpijob())
    assert [m["name"] for m in pod(conv, "launcher")["initContainers"][0]["volumeMounts"]] == [
        "mpi-ssh-auth",
        "mpi-hostfile",
    ]
    assert pod(conv, "node")["initContainers"][0]["volumeMounts"][0]["name"] == "mpi-ssh-auth"
    rows = {r.field: r for r in conv.rows}
    ssh = rows["spec.mpiReplicaSpecs.Launcher.template.spec.initContainers[0].volumeMounts[0].name"]
    assert ssh.status == KEPT and "ssh-auth" in ssh.note and "mpi-ssh-auth" in ssh.note
    hostfile = rows["spec.mpiReplicaSpecs.Launcher.template.spec.initContainers[0].volumeMounts[1].name"]
    assert hostfile.status == APPROXIMATED and "discover_hosts.sh" in hostfile.note
    # and the rendered pods' mounts all name a volume: `job validate` accepts the job
    path = tmp_path / "mpi.yaml"
    path.write_text(yaml.safe_dump(mpijob()))
    result = cli("job", "validate", "-f", str(path))
    assert result.exit_code == 0, result.stderr


def test_a_volume_of_the_users_own_keeps_its_name() -> None:
    mine = [{"name": "ssh-auth", "secret": {"secretName": "my-keys"}}]
    conv = convert(mpijob(launcher_volumes=mine))
    mounts = pod(conv, "launcher")["initContainers"][0]["volumeMounts"]
    assert [m["name"] for m in mounts] == ["ssh-auth", "mpi-hostfile"]


def test_kubeflow_v1_mpijob_kubectl_volume_is_dropped_and_reported() -> None:
    conv = convert(mpijob("kubeflow.org/v1"))
    mounts = pod(conv, "launcher")["initContainers"][0]["volumeMounts"]
    assert [m["name"] for m in mounts] == ["mpi-hostfile"]
    row = next(r for r in conv.rows if r.field.endswith("initContainers[0].volumeMounts[1].name"))
    assert row.status == DROPPED and "kubectl exec" in row.note


def test_a_mount_of_a_volume_no_pod_has_is_refused_with_the_api_servers_words(tmp_path: Path, cli: Any) -> None:
    """A v1 template that mounts a volume it does not declare: the JobSet would be accepted and every
    pod refused (k8s pkg/apis/core/validation ValidateVolumeMounts). `job validate` says so first."""
    job = mpijob()
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["initContainers"][0]["volumeMounts"].append(
        {"name": "scratch", "mountPath": "/scratch"}
    )
    path = tmp_path / "mpi.yaml"
    path.write_text(yaml.safe_dump(job))
    result = cli("job", "validate", "-f", str(path))
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    assert (
        "spec.template.spec.replicatedJobs[1].template.spec.template.spec.initContainers[0].volumeMounts[2].name: "
        'Not found: "scratch"' in result.stderr
    ), result.stderr


def test_a_volume_name_of_the_wrong_type_is_a_clear_error_not_a_crash() -> None:
    """Found by tests/fuzz/test_convert_properties.py: `volumes: [{name: []}]` beside an
    operator mount raised TypeError (a list is no set member) instead of the schema's error."""
    import pytest

    from ktrain.errors import KtrainError
    from ktrain.service.convert import check_conversion

    job = mpijob(launcher_volumes=[{"name": [], "emptyDir": {}}])
    with pytest.raises(KtrainError) as err:
        for conv in convert_documents(load_documents(yaml.safe_dump(job), "job.yaml")):
            check_conversion(conv, None)
    assert "volumes[0].name" in err.value.message and "must be of type string" in err.value.message


def test_rename_operator_mounts_renames_per_step_and_keeps_the_pods_own_volumes() -> None:
    from ktrain.convert.common import Ctx, Role
    from ktrain.convert.kinds import V1, V2BETA1
    from ktrain.convert.mpi_volumes import rename_operator_mounts

    (doc,) = load_documents("kind: MPIJob\n", "mpi.yaml")

    def template(*names: str, own: tuple[str, ...] = ()) -> dict[str, Any]:
        mounts = [{"name": n, "mountPath": f"/m/{n}"} for n in names]
        return {
            "spec": {
                "volumes": [{"name": n, "emptyDir": {}} for n in own],
                "containers": [{"name": "c", "volumeMounts": mounts}],
            }
        }

    role = Role("Launcher", 1, None, {}, ("spec", "mpiReplicaSpecs", "Launcher"), 0)
    launcher = template("ssh-auth", "mpi-job-config", "data", own=("data",))
    rename_operator_mounts(Ctx(doc, ()), role, V2BETA1, "launcher", launcher)
    assert [m["name"] for m in launcher["spec"]["containers"][0]["volumeMounts"]] == [
        "mpi-ssh-auth",
        "mpi-hostfile",
        "data",
    ]
    worker = template("mpi-job-config", "ssh-auth", own=("ssh-auth",))  # the hostfile is the launcher's only
    rename_operator_mounts(Ctx(doc, ()), role, V2BETA1, "node", worker)
    assert [m["name"] for m in worker["spec"]["containers"][0]["volumeMounts"]] == ["mpi-job-config", "ssh-auth"]
    v1 = template("mpi-job-kubectl", "mpi-job-config")
    ctx = Ctx(doc, ())
    rename_operator_mounts(ctx, role, V1, "launcher", v1)
    assert [m["name"] for m in v1["spec"]["containers"][0]["volumeMounts"]] == ["mpi-hostfile"]
    assert [r.status for r in ctx.rows] == [DROPPED, APPROXIMATED]
