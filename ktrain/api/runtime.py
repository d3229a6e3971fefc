"""TrainingRuntime / ClusterTrainingRuntime (trainer.kubeflow.org/v1alpha1) as in Trainer v2.3.

CRD defaults are model defaults; the JobSet template stays a plain mapping and gets its
CRD defaults from `default_jobset_spec` (ENGINE.md §2.2 "Client-side defaulting requirement").
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import Field

from ktrain import constants as c
from ktrain.api.common import KubeModel, ObjectMeta


class EnvInjectionTarget(KubeModel):
    job_name: str
    container_names: list[str]


class EnvInjection(KubeModel):
    targets: list[EnvInjectionTarget] | None = None


class TorchMLPolicySource(KubeModel):
    env_injection: EnvInjection | None = None


class MPIMLPolicySource(KubeModel):
    num_proc_per_node: int = 1
    # The CRD enum admits "OpenMPI" and ""; Intel/MPICH are ktrain extensions (--allow-extensions).
    mpi_implementation: str = "OpenMPI"
    ssh_auth_mount_path: str = "/root/.ssh"
    run_launcher_as_node: bool = False


class JAXMLPolicySource(KubeModel):
    pass


class XGBoostMLPolicySource(KubeModel):
    pass


class FluxMLPolicySource(KubeModel):
    num_proc_per_node: int = 1


class MLPolicy(KubeModel):
    num_nodes: int | None = None
    torch: TorchMLPolicySource | None = None
    mpi: MPIMLPolicySource | None = None
    jax: JAXMLPolicySource | None = None
    xgboost: XGBoostMLPolicySource | None = None
    flux: FluxMLPolicySource | None = None

    @property
    def policy_keys(self) -> list[str]:
        return [k for k in ("torch", "mpi", "jax", "xgboost", "flux") if getattr(self, k) is not None]


class CoschedulingPodGroupPolicySource(KubeModel):
    schedule_timeout_seconds: int = 60


class VolcanoNetworkTopology(KubeModel):
    mode: str = "hard"
    highest_tier_allowed: int = 1


class VolcanoPodGroupPolicySource(KubeModel):
    network_topology: VolcanoNetworkTopology | None = None


class PodGroupPolicy(KubeModel):
    coscheduling: CoschedulingPodGroupPolicySource | None = None
    volcano: VolcanoPodGroupPolicySource | None = None


class JobSetTemplateSpec(KubeModel):
    metadata: dict[str, Any] | None = None
    spec: dict[str, Any] = Field(default_factory=dict)


class TrainingRuntimeSpec(KubeModel):
    ml_policy: MLPolicy | None = None
    pod_group_policy: PodGroupPolicy | None = None
    template: JobSetTemplateSpec = Field(default_factory=JobSetTemplateSpec)


class TrainingRuntime(KubeModel):
    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = Field(default=c.TRAINER_API_VERSION)
    kind: Literal["TrainingRuntime", "ClusterTrainingRuntime"] = "ClusterTrainingRuntime"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: TrainingRuntimeSpec

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.metadata.labels or {})

    @property
    def framework(self) -> str:
        return self.labels.get(c.LABEL_FRAMEWORK, "")


# ClusterTrainingRuntime has the same spec; one class keeps the engine simple, the kind says which.
ClusterTrainingRuntime = TrainingRuntime

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def default_jobset_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Apply the runtime CRD's structural defaults inside `spec.template.spec` (a copy is returned).

    Defaults apply only where the parent object exists, as the API server's structural
    defaulting does.
    """
    out = copy.deepcopy(spec)
    failure = out.get("failurePolicy")
    if isinstance(failure, dict):
        failure.setdefault("restartStrategy", "Recreate")
    for vcp in out.get("volumeClaimPolicies") or []:
        if isinstance(vcp, dict) and isinstance(vcp.get("retentionPolicy"), dict):
            vcp["retentionPolicy"].setdefault("whenDeleted", "Delete")
    for rjob in out.get("replicatedJobs") or []:
        if not isinstance(rjob, dict):
            continue
        rjob.setdefault("groupName", "default")
        rjob.setdefault("replicas", 1)
        pod_spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        if not isinstance(pod_spec, dict):
            continue
        for key in _CONTAINER_LISTS:
            for container in pod_spec.get(key) or []:
                if isinstance(container, dict):
                    for port in container.get("ports") or []:
                        if isinstance(port, dict):
                            port.setdefault("protocol", "TCP")
    return out
