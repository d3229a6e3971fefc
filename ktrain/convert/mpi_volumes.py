"""The volumes the MPI operators gave a launcher or worker pod, under Trainer v2's names.

A user container (often an init container that copies the SSH keys or reads the hostfile) mounts
them by the operator's names; Trainer v2's MPI policy adds its own under other names, so the mounts
are renamed, or they would name no volume and the pod would be refused:

- mpi-operator v2beta1 (`pkg/controller/mpi_job_controller.go`): `ssh-auth` (the SSH Secret,
  setupSSHOnPod, launcher and workers) and `mpi-job-config` (the ConfigMap with `hostfile` and
  `discover_hosts.sh` at /etc/mpi, newLauncherPodTemplate, launcher only);
- training-operator's v1 MPIJob (`pkg/controller.v1/mpi/mpijob_controller.go` newLauncher):
  `mpi-job-config` (`hostfile` and `kubexec.sh`) and `mpi-job-kubectl` (kubectl for
  `kubectl exec`, which v2's SSH replaces: such a mount is dropped).

Trainer v2 (ENGINE.md §6.3): `mpi-ssh-auth` on the launcher and node pods, `mpi-hostfile` (the
hostfile only) on the launcher.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.convert.common import Ctx, Role
from ktrain.convert.kinds import V1
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.engine.plugins.mpi import HOSTFILE_VOLUME, SSH_AUTH_VOLUME
from ktrain.util.jsondata import Obj

RENAMED = {
    "v2beta1": {"ssh-auth": SSH_AUTH_VOLUME, "mpi-job-config": HOSTFILE_VOLUME},
    "v1": {"mpi-job-config": HOSTFILE_VOLUME},
}
KUBECTL_VOLUME = "mpi-job-kubectl"
# Which of Trainer v2's volumes each step's pods have.
V2_VOLUMES = {c.LAUNCHER: {SSH_AUTH_VOLUME, HOSTFILE_VOLUME}, c.NODE: {SSH_AUTH_VOLUME}}
NOTES = {
    SSH_AUTH_VOLUME: "the SSH Secret's volume",
    HOSTFILE_VOLUME: "the hostfile ConfigMap's volume, at /etc/mpi (it has only `hostfile`: mpi-operator's also had "
    "discover_hosts.sh, v1's kubexec.sh)",
}


def rename_operator_mounts(ctx: Ctx, role: Role, api: str, rjob: str, pod_template: Obj) -> None:
    """Rename (in `pod_template`, the role's copy) every mount of an operator volume the pod does not
    declare itself, and report each."""
    pod = pod_template.get("spec") or {}
    volumes = pod.get("volumes")
    volumes = volumes if isinstance(volumes, list) else []
    own = {v["name"] for v in volumes if isinstance(v, dict) and isinstance(v.get("name"), str)}
    names = RENAMED["v1" if api == V1 else "v2beta1"]
    for key in ("initContainers", "containers"):
        for i, cont in enumerate(pod.get(key) or []):
            if not isinstance(cont, dict) or not isinstance(cont.get("volumeMounts"), list):
                continue
            kept: list[Obj] = []
            for j, mount in enumerate(cont["volumeMounts"]):
                name = mount.get("name") if isinstance(mount, dict) else None
                path = (*role.path, "template", "spec", key, i, "volumeMounts", j, "name")
                if not isinstance(name, str) or name in own:  # (a name of the wrong type: refused elsewhere)
                    kept.append(mount)
                elif api == V1 and name == KUBECTL_VOLUME:
                    ctx.row(
                        path, DROPPED, "-", "v1's kubectl volume for `kubectl exec`: v2 reaches the workers over SSH"
                    )
                    continue
                elif name in names and names[name] in V2_VOLUMES.get(rjob, set()):
                    new = names[name]
                    mount = {**mount, "name": new}
                    kept.append(mount)
                    ctx.row(
                        path,
                        KEPT if new == SSH_AUTH_VOLUME else APPROXIMATED,
                        f"runtime replicatedJobs[{rjob}] {key}[{cont.get('name')}] volumeMounts name {new}",
                        f"the MPI operator named {NOTES[new].split(',')[0]} {name}; Trainer v2's MPI policy names it "
                        f"{new}" + ("" if new == SSH_AUTH_VOLUME else f": {NOTES[new]}"),
                    )
                else:
                    kept.append(mount)
            cont["volumeMounts"] = kept
