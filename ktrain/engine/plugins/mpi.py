"""MPI ML policy: hostfile ConfigMap, SSH Secret, volumes, mounts and OMPI env
(upstream `plugins/mpi/mpi.go`, ENGINE.md §6.3).

The SSH key pair is made at the edge and arrives in the RenderContext; the engine only
encodes it. With `ctx.ssh_secret_name` an existing Secret is mounted and no key is emitted.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import (
    env_var,
    upsert_env_vars,
    upsert_volume_mounts,
    upsert_volumes,
)
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import (
    Plugin,
    gpu_count,
    reserved_env_error,
    resources_for_detection,
)
from ktrain.errors import FieldError, KtrainError, ValidationFailedError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.api.runtime import MPIMLPolicySource
    from ktrain.util.jsondata import Obj


OPENMPI = "OpenMPI"
INTEL_MPI = "Intel"
MPICH = "MPICH"
EXTENSION_IMPLEMENTATIONS = (INTEL_MPI, MPICH)

SSH_AUTH_SECRET_SUFFIX = "-mpi-ssh-auth"
SSH_AUTH_VOLUME = "mpi-ssh-auth"
SSH_PRIVATE_KEY = "ssh-privatekey"
SSH_PUBLIC_KEY = "ssh-publickey"
HOSTFILE_SUFFIX = "-mpi-hostfile"
HOSTFILE_VOLUME = "mpi-hostfile"
HOSTFILE_DIR = "/etc/mpi"
HOSTFILE_NAME = "hostfile"
SECRET_TYPE_SSH_AUTH = "kubernetes.io/ssh-auth"

ENV_HOSTFILE = "OMPI_MCA_orte_default_hostfile"
ENV_KEEP_FQDN = "OMPI_MCA_orte_keep_fqdn_hostnames"
ENV_DEFAULT_SLOTS = "OMPI_MCA_orte_set_default_slots"
ENV_RSH_ARGS = "OMPI_MCA_plm_rsh_args"
RESERVED_ENVS = (ENV_HOSTFILE, ENV_RSH_ARGS, ENV_KEEP_FQDN, ENV_DEFAULT_SLOTS)
RSH_ARGS = "-o ConnectionAttempts=10"


def _policy(info: RuntimeInfo) -> MPIMLPolicySource:
    assert info.ml_policy is not None and info.ml_policy.mpi is not None
    return info.ml_policy.mpi


def slots(info: RuntimeInfo) -> int:
    """Processes per node: TrainJob value, else GPUs (>1) when the policy says 1, else the policy."""
    trainer = info.job.spec.trainer
    if trainer is not None and trainer.num_proc_per_node is not None:
        return trainer.num_proc_per_node
    policy_value = _policy(info).num_proc_per_node
    if policy_value == 1:
        gpus = gpu_count(resources_for_detection(info))
        if gpus > 1:
            return gpus
    return policy_value


def ssh_secret_name(info: RuntimeInfo) -> str:
    return info.ctx.ssh_secret_name or f"{info.name}{SSH_AUTH_SECRET_SUFFIX}"


def _ssh_volume(info: RuntimeInfo) -> Obj:
    return {
        "name": SSH_AUTH_VOLUME,
        "secret": {
            "secretName": ssh_secret_name(info),
            "defaultMode": 0o400,
            "items": [
                {"key": SSH_PRIVATE_KEY, "path": "id_rsa", "mode": 0o640},
                {"key": SSH_PUBLIC_KEY, "path": "id_rsa.pub", "mode": 0o644},
                {"key": SSH_PUBLIC_KEY, "path": "authorized_keys", "mode": 0o644},
            ],
        },
    }


def _hostfile_volume(info: RuntimeInfo) -> Obj:
    return {
        "name": HOSTFILE_VOLUME,
        "configMap": {
            "name": f"{info.name}{HOSTFILE_SUFFIX}",
            "items": [{"key": HOSTFILE_NAME, "path": HOSTFILE_NAME, "mode": 0o444}],
        },
    }


# core/v1 validation refuses a ConfigMap whose data holds more than MaxSecretSize bytes.
CONFIGMAP_DATA_LIMIT = 1024 * 1024


def _digits_total(count: int) -> int:
    """len(str(0)) + len(str(1)) + ... + len(str(count - 1)), without the loop."""
    total, width, start = 0, 1, 0
    while start < count:
        end = min(count, 10**width)
        total += (end - start) * width
        start, width = end, width + 1
    return total


def hostfile_size(info: RuntimeInfo) -> int:
    """The length of `hostfile(info)`, computed from the counts alone (it may be too large to build)."""
    policy = _policy(info)
    n = str(slots(info))
    extension = policy.mpi_implementation in EXTENSION_IMPLEMENTATIONS
    sub = info.subdomain()
    size = 0
    for ps in info.pod_sets:
        if ps.name == c.NODE or (ps.name == c.LAUNCHER and policy.run_launcher_as_node):
            prefix = f"{info.name}-{ps.name}-0-"
            fixed = len(prefix) + 1 + len(sub) + (1 + len(n) if extension else len(" slots=") + len(n)) + 1
            size += ps.count * fixed + _digits_total(ps.count)
    return size


def hostfile_size_errors(info: RuntimeInfo) -> list[FieldError]:
    """The API server refuses a hostfile ConfigMap over 1 MiB: say so before building it (a
    numNodes of 2^31-1 would otherwise build gigabytes of hostfile)."""
    size = hostfile_size(info)
    if size <= CONFIGMAP_DATA_LIMIT:
        return []
    hosts = sum(ps.count for ps in info.pod_sets if ps.name in (c.NODE, c.LAUNCHER))
    return [
        FieldError(
            "spec.trainer.numNodes",
            f"the MPI hostfile ConfigMap {info.name}{HOSTFILE_SUFFIX} for {hosts} hosts would hold {size} bytes; "
            f"the API server refuses it (data: Too long: may not be more than {CONFIGMAP_DATA_LIMIT} bytes)",
            kind="TooLong",
        )
    ]


def hostfile(info: RuntimeInfo) -> str:
    """One line per pod of the `node` job (and of the launcher when it runs as a node).

    OpenMPI: `<host> slots=<n>`; the ktrain extension for Intel MPI and MPICH writes
    `<host>:<n>` as mpi-operator does.
    """
    policy = _policy(info)
    n = slots(info)
    fmt = "{host}:{slots}\n" if policy.mpi_implementation in EXTENSION_IMPLEMENTATIONS else "{host} slots={slots}\n"
    lines: list[str] = []
    for ps in info.pod_sets:
        if ps.name == c.NODE or (ps.name == c.LAUNCHER and policy.run_launcher_as_node):
            lines.extend(fmt.format(host=host, slots=n) for host in info.endpoints(ps))
    return "".join(lines)


class MPIPlugin(Plugin):
    name = "mpi"
    policy_key = "mpi"

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        errors = reserved_env_error(info, RESERVED_ENVS)
        policy = _policy(info)
        trainer = info.job.spec.trainer
        if (
            trainer is not None
            and trainer.num_nodes is not None
            and trainer.num_nodes >= 2
            and policy.run_launcher_as_node
            and (info.pod_set(c.LAUNCHER) is None or info.pod_set(c.NODE) is None)
        ):
            errors.append(
                FieldError(
                    "spec.trainer.numNodes",
                    "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have "
                    "either launcher and node",
                )
            )
        return errors

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        policy = _policy(info)
        implementation = policy.mpi_implementation
        supported = implementation == OPENMPI or (
            info.ctx.allow_extensions and implementation in EXTENSION_IMPLEMENTATIONS
        )
        launcher = info.pod_set(c.LAUNCHER)
        if not supported and launcher is not None and launcher.container(c.NODE) is not None:
            # Upstream fails every reconcile here ("MPI implementation for <ptr> doesn't supported").
            raise KtrainError(
                # keep upstream's words so a match on the controller's error still works
                f'MPI implementation "{implementation}" is not supported (upstream: "MPI implementation for '
                "<pointer> doesn't supported\"): the Trainer controller only implements OpenMPI",
                hint="use mpiImplementation: OpenMPI, or --allow-extensions for Intel MPI / MPICH hostfiles",
            )
        trainer = info.job.spec.trainer
        node = info.pod_set(c.NODE)
        if trainer is not None and trainer.num_nodes is not None and node is not None:
            node.count = max(trainer.num_nodes - 1, 1) if policy.run_launcher_as_node else trainer.num_nodes

        ssh_mount = {"name": SSH_AUTH_VOLUME, "mountPath": policy.ssh_auth_mount_path}
        for ps in (node, launcher):
            if ps is None:
                continue
            upsert_volumes(ps.pod_spec, [_ssh_volume(info)])
            container = ps.container(c.NODE)
            if container is not None:
                upsert_volume_mounts(container, [ssh_mount])
        if launcher is not None:
            upsert_volumes(launcher.pod_spec, [_hostfile_volume(info)])
            container = launcher.container(c.NODE)
            if container is not None:
                upsert_volume_mounts(container, [{"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}])
                if implementation == OPENMPI:
                    upsert_env_vars(
                        container,
                        [
                            env_var(ENV_HOSTFILE, f"{HOSTFILE_DIR}/{HOSTFILE_NAME}"),
                            env_var(ENV_KEEP_FQDN, "true"),
                            env_var(ENV_DEFAULT_SLOTS, str(slots(info))),
                            env_var(ENV_RSH_ARGS, RSH_ARGS),
                        ],
                    )

    def build(self, info: RuntimeInfo) -> list[Obj]:
        too_large = hostfile_size_errors(info)
        if too_large:
            raise ValidationFailedError(too_large)
        objects: list[Obj] = []
        secret_name = f"{info.name}{SSH_AUTH_SECRET_SUFFIX}"
        if info.ctx.ssh_secret_name is None and secret_name not in info.ctx.existing_secrets:
            key = info.ctx.ssh_key
            if key is None:
                raise KtrainError("an MPI runtime needs an SSH key pair (none was supplied to the engine)")
            from base64 import b64encode  # only for a Secret made here

            objects.append(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": info.object_meta(secret_name),
                    "type": SECRET_TYPE_SSH_AUTH,
                    "immutable": True,
                    "data": {
                        SSH_PRIVATE_KEY: b64encode(key.private_key_pem).decode(),
                        SSH_PUBLIC_KEY: b64encode(key.public_key_line).decode(),
                    },
                }
            )
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": info.object_meta(f"{info.name}{HOSTFILE_SUFFIX}"),
                "data": {HOSTFILE_NAME: hostfile(info)},
            }
        )
        return objects
