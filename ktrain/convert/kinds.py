"""The Training Operator v1 job kinds: their replica types, framework container and port, and
every spec field their API types declare (kubeflow/training-operator `pkg/apis/kubeflow.org/v1`,
kubeflow/mpi-operator `pkg/apis/kubeflow/v2beta1`)."""

from __future__ import annotations

from dataclasses import dataclass

V1 = "kubeflow.org/v1"
V2BETA1 = "kubeflow.org/v2beta1"

RUN_POLICY_FIELDS = (
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "backoffLimit",
    "schedulingPolicy",
    "suspend",
    "managedBy",
)
SCHEDULING_POLICY_FIELDS = ("minAvailable", "queue", "minResources", "priorityClass", "scheduleTimeoutSeconds")
REPLICA_SPEC_FIELDS = ("replicas", "template", "restartPolicy")
TORCH_ELASTIC_FIELDS = (
    "minReplicas",
    "maxReplicas",
    "rdzvBackend",
    "rdzvPort",
    "rdzvHost",
    "rdzvId",
    "rdzvConf",
    "standalone",
    "nProcPerNode",
    "maxRestarts",
    "metrics",
)
PADDLE_ELASTIC_FIELDS = ("minReplicas", "maxReplicas", "maxRestarts", "metrics")


@dataclass(frozen=True)
class KindInfo:
    kind: str
    api_versions: tuple[str, ...]
    replica_key: str
    roles: tuple[str, ...]  # v1 replica types, in the order rJobs are written
    container: str  # the framework's default container name
    port_name: str | None
    default_port: int | None
    framework: str  # trainer.kubeflow.org/framework of a generated runtime
    bundled: str | None  # the bundled runtime a single-role job maps onto
    spec_fields: tuple[str, ...]
    # The replica restartPolicy v1 defaults to (kubeflow.org/v1 `<Kind>DefaultRestartPolicy`;
    # mpi-operator v2beta1: Never, OnFailure for the launcher).
    default_restart: str = "Never"


def default_restart(info: KindInfo, api: str, role: str) -> str:
    if info.kind == "MPIJob" and api == V2BETA1 and role == "Launcher":
        return "OnFailure"
    return info.default_restart


KINDS: dict[str, KindInfo] = {
    k.kind: k
    for k in (
        KindInfo(
            "PyTorchJob",
            (V1,),
            "pytorchReplicaSpecs",
            ("Master", "Worker"),
            "pytorch",
            "pytorchjob-port",
            23456,
            "torch",
            "torch-distributed",
            ("runPolicy", "elasticPolicy", "pytorchReplicaSpecs", "nprocPerNode"),
            "OnFailure",
        ),
        KindInfo(
            "TFJob",
            (V1,),
            "tfReplicaSpecs",
            ("Chief", "Master", "PS", "Worker", "Evaluator"),
            "tensorflow",
            "tfjob-port",
            2222,
            "tensorflow",
            "tensorflow-distributed",
            ("runPolicy", "successPolicy", "tfReplicaSpecs", "enableDynamicWorker"),
        ),
        KindInfo(
            "MPIJob",
            (V1, V2BETA1),
            "mpiReplicaSpecs",
            ("Launcher", "Worker"),
            "mpi",
            None,
            None,
            "mpi",
            None,
            (
                "slotsPerWorker",
                "runLauncherAsWorker",
                "runPolicy",
                "mpiReplicaSpecs",
                "sshAuthMountPath",
                "launcherCreationPolicy",
                "mpiImplementation",
                "cleanPodPolicy",
                "mainContainer",
            ),
        ),
        KindInfo(
            "XGBoostJob",
            (V1,),
            "xgbReplicaSpecs",
            ("Master", "Worker"),
            "xgboost",
            "xgboostjob-port",
            9999,
            "xgboost",
            "xgboost-distributed",
            ("runPolicy", "xgbReplicaSpecs"),
        ),
        KindInfo(
            "JAXJob",
            (V1,),
            "jaxReplicaSpecs",
            ("Worker",),
            "jax",
            "jaxjob-port",
            6666,
            "jax",
            "jax-distributed",
            ("runPolicy", "jaxReplicaSpecs"),
        ),
        KindInfo(
            "PaddleJob",
            (V1,),
            "paddleReplicaSpecs",
            ("Master", "Worker"),
            "paddle",
            "master",
            36543,
            "paddle",
            "paddle-distributed",
            ("runPolicy", "elasticPolicy", "paddleReplicaSpecs"),
            "OnFailure",
        ),
        KindInfo(
            "MXJob",
            (V1,),
            "mxReplicaSpecs",
            ("Scheduler", "Server", "Worker", "TunerTracker", "TunerServer", "Tuner"),
            "mxnet",
            "mxjob-port",
            9091,
            "mxnet",
            "mxnet-distributed",
            ("runPolicy", "jobMode", "mxReplicaSpecs"),
        ),
    )
}

# Fields an MPIJob has only in one of its two API versions.
MPI_V1_ONLY = ("cleanPodPolicy", "mainContainer")
MPI_V2BETA1_ONLY = ("runLauncherAsWorker", "sshAuthMountPath", "launcherCreationPolicy", "mpiImplementation")


def spec_fields(info: KindInfo, api_version: str) -> tuple[str, ...]:
    if info.kind != "MPIJob":
        return info.spec_fields
    skip = MPI_V2BETA1_ONLY if api_version == V1 else MPI_V1_ONLY
    return tuple(f for f in info.spec_fields if f not in skip)


def supported_text() -> str:
    out = []
    for k in KINDS.values():
        out.append(f"{k.kind} ({', '.join(k.api_versions)})")
    return ", ".join(out)


def is_v1_job(data: object) -> bool:
    """A Training Operator / MPI Operator job (any kind in the kubeflow.org group but TrainJob)."""
    if not isinstance(data, dict):
        return False
    api = data.get("apiVersion")
    return isinstance(api, str) and api.split("/")[0] == "kubeflow.org"
