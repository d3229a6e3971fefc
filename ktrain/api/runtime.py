"""TrainingRuntime / ClusterTrainingRuntime (trainer.kubeflow.org/v1alpha1) as in Trainer v2.3.

CRD defaults are model defaults; the JobSet template stays a plain mapping and gets its
CRD defaults from `default_jobset_spec` (ENGINE.md §2.2 "Client-side defaulting requirement").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ktrain import constants as c
from ktrain.api.base import MLPolicyBehaviour, TrainingRuntimeBehaviour
from ktrain.api.base import default_jobset_spec as default_jobset_spec
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


class MLPolicy(KubeModel, MLPolicyBehaviour):
    num_nodes: int | None = None
    torch: TorchMLPolicySource | None = None
    mpi: MPIMLPolicySource | None = None
    jax: JAXMLPolicySource | None = None
    xgboost: XGBoostMLPolicySource | None = None
    flux: FluxMLPolicySource | None = None


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


class TrainingRuntime(KubeModel, TrainingRuntimeBehaviour):
    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = Field(default=c.TRAINER_API_VERSION)
    kind: Literal["TrainingRuntime", "ClusterTrainingRuntime"] = "ClusterTrainingRuntime"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: TrainingRuntimeSpec


# ClusterTrainingRuntime has the same spec; one class keeps the engine simple, the kind says which.
ClusterTrainingRuntime = TrainingRuntime
