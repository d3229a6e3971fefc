"""What a render needs besides the TrainJob and the runtime.

Everything random or read from a cluster arrives here, so the engine stays pure
(STYLE.md: the job name and the SSH key pair are passed in, never made inside).
"""

from __future__ import annotations

from ktrain.util.structs import field, struct


@struct(frozen=True, slots=True)
class SshKeyPair:
    private_key_pem: bytes
    public_key_line: bytes  # "ecdsa-sha2-nistp521 AAAA...\n"

    def __repr__(self) -> str:  # never leak key material through logs, errors or --debug
        return "SshKeyPair(<redacted>)"


@struct(frozen=True, slots=True)
class StatusServer:
    """Where the Trainer controller's TrainJob status server listens (feature gate TrainJobStatus):
    the controller configuration's `certManagement.webhookServiceName`, its own namespace and
    `trainJobStatusServer.port` (upstream `pkg/apis/config/v1alpha1/defaults.go`), and the CA it
    copies from its webhook Secret into `<job>-tls-config` (None: unknown, e.g. an offline render)."""

    service: str = "kubeflow-trainer-controller-manager"
    namespace: str = "kubeflow-system"
    port: int = 10443
    ca_cert: str | None = None


@struct(frozen=True, slots=True)
class RenderContext:
    # MPI: a fresh key pair for the <job>-mpi-ssh-auth Secret ...
    ssh_key: SshKeyPair | None = None
    # ... or the name of an existing Secret to mount instead (no key material is emitted).
    ssh_secret_name: str | None = None
    # Names of Secrets known to exist in the job's namespace (upstream skips creating the MPI
    # Secret when it already exists).
    existing_secrets: frozenset[str] = frozenset()
    # PriorityClass names known to exist; None = unknown (offline), so V31 is not checked.
    priority_classes: frozenset[str] | None = None
    # ktrain extensions beyond upstream (Intel MPI / MPICH hostfile formats).
    allow_extensions: bool = False
    # Also emit the controller's `<job>-runtime-snapshot` ConfigMap.
    runtime_snapshot: bool = False
    # The runtime object as the snapshot stores it (YAML text made at the edge).
    runtime_snapshot_text: str | None = None
    # The controller's TrainJobStatus feature gate: on when set (ktrain.engine.plugins.trainjobstatus).
    status_server: StatusServer | None = None
    extra: dict[str, str] = field(default_factory=dict)
