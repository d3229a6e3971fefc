"""The Kubeflow SDK's types (`kubeflow.trainer`, SDK 0.5), with the same names, fields, defaults and
order, so that code written against the SDK builds the same values with `from ktrain import ...`.

Source: kubeflow/sdk `kubeflow/trainer/types/types.py`, `kubeflow/trainer/constants/constants.py`,
`kubeflow/common/types.py`. What ktrain does with them is in `ktrain.python_api.conversion`
(checked there, where they enter a call, not when they are built: as in the SDK, building one
never fails, except the S3 initializers' scheme check, which the SDK makes too). Two differences:
the secrets (`access_token`, `secret_access_key`) are left out of `repr()`, and
`RuntimeTrainer.command` is the launcher ktrain runs a function with.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from ktrain.constants import constants as sdk
from ktrain.errors import UsageError

# The SDK's constants (ktrain.constants.constants: statuses, paths, defaults from the environment).
UNKNOWN = sdk.UNKNOWN
WORKSPACE_PATH = sdk.WORKSPACE_PATH
DATASET_PATH = sdk.DATASET_PATH
MODEL_PATH = sdk.MODEL_PATH
DEFAULT_PIP_INDEX_URLS = sdk.DEFAULT_PIP_INDEX_URLS
DEFAULT_TRAINING_RUNTIME = sdk.DEFAULT_TRAINING_RUNTIME
INITIALIZER_DEFAULT_IGNORE_PATTERNS = sdk.INITIALIZER_DEFAULT_IGNORE_PATTERNS
TRAINJOB_CREATED = sdk.TRAINJOB_CREATED
TRAINJOB_RUNNING = sdk.TRAINJOB_RUNNING
TRAINJOB_COMPLETE = sdk.TRAINJOB_COMPLETE
TRAINJOB_FAILED = sdk.TRAINJOB_FAILED


@dataclass
class CustomTrainer:
    """Run `func(**func_args)` on every training node (docs/python-api.md)."""

    func: Callable[..., Any]
    func_args: dict[str, Any] | None = None
    image: str | None = None
    packages_to_install: list[str] | None = None
    pip_index_urls: list[str] = field(default_factory=lambda: list(DEFAULT_PIP_INDEX_URLS))
    num_nodes: int | None = None
    resources_per_node: dict[str, Any] | None = None
    env: dict[str, str] | None = None


@dataclass
class CustomTrainerContainer:
    """Run an image that holds the whole training (its own command)."""

    image: str
    num_nodes: int | None = None
    resources_per_node: dict[str, Any] | None = None
    env: dict[str, str] | None = None


class RuntimeKind(Enum):
    CLUSTER_TRAINING_RUNTIME = "ClusterTrainingRuntime"
    TRAINING_RUNTIME = "TrainingRuntime"


class Loss(Enum):
    """Loss function for the TorchTune LLM Trainer."""

    CEWithChunkedOutputLoss = "torchtune.modules.loss.CEWithChunkedOutputLoss"


class DataType(Enum):
    """Data type for the TorchTune LLM Trainer."""

    BF16 = "bf16"
    FP32 = "fp32"


class DataFormat(Enum):
    """Data file type for the TorchTune LLM Trainer."""

    JSON = "json"
    CSV = "csv"
    PARQUET = "parquet"
    ARROW = "arrow"
    TEXT = "text"
    XML = "xml"


@dataclass
class TorchTuneInstructDataset:
    """torchtune's instruct dataset: prompts and responses in columns (`column_map` renames them)."""

    source: DataFormat | None = None
    split: str | None = None
    train_on_input: bool | None = None
    new_system_prompt: str | None = None
    column_map: dict[str, str] | None = None


@dataclass
class LoraConfig:
    """LoRA / QLoRA (`quantize_base`) / DoRA (`use_dora`)."""

    apply_lora_to_mlp: bool | None = None
    apply_lora_to_output: bool | None = None
    lora_attn_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj", "output_proj"])
    lora_rank: int | None = None
    lora_alpha: int | None = None
    lora_dropout: float | None = None
    quantize_base: bool | None = None
    use_dora: bool | None = None


@dataclass
class TorchTuneConfig:
    """Fine-tuning with a torchtune runtime's recipe: what `ktrain job render --epochs ... --lora ...` sets."""

    dtype: DataType | None = None
    batch_size: int | None = None
    epochs: int | None = None
    loss: Loss | None = None
    num_nodes: int | None = None
    peft_config: LoraConfig | None = None
    dataset_preprocess_config: TorchTuneInstructDataset | None = None
    resources_per_node: dict[str, Any] | None = None


@dataclass
class BuiltinTrainer:
    """A runtime's built-in trainer (torchtune), configured."""

    config: TorchTuneConfig


class TrainerType(Enum):
    CUSTOM_TRAINER = CustomTrainer.__name__
    BUILTIN_TRAINER = BuiltinTrainer.__name__


@dataclass
class RuntimeTrainer:
    trainer_type: TrainerType
    framework: str
    image: str
    num_nodes: int = 1
    device: str = UNKNOWN
    device_count: str = UNKNOWN
    __command: tuple[str, ...] = field(init=False, repr=False, default=())

    @property
    def command(self) -> tuple[str, ...]:
        return self.__command

    def set_command(self, command: tuple[str, ...]) -> None:
        self.__command = command


@dataclass
class Runtime:
    name: str
    trainer: RuntimeTrainer
    kind: RuntimeKind
    pretrained_model: str | None = None


@dataclass
class Step:
    name: str
    status: str | None
    pod_name: str
    device: str = UNKNOWN
    device_count: str = UNKNOWN


@dataclass
class TrainerStatus:
    """A TrainJob's `status.trainerStatus` (the Trainer's TrainJobStatus feature), as upstream's
    progress guide reads it from the SDK: `get_job(name).trainer_status.progress_percentage`.
    None: not reported (or out of the CRD's bounds). Not in the SDK 0.5's TrainJob (a later one's)."""

    progress_percentage: int | None = None
    estimated_remaining_seconds: int | None = None
    metrics: dict[str, str] = field(default_factory=dict)
    last_updated_time: datetime | None = None


@dataclass
class TrainJob:
    name: str
    runtime: Runtime
    steps: list[Step]
    num_nodes: int
    creation_timestamp: datetime
    status: str = UNKNOWN
    trainer_status: TrainerStatus | None = None  # ktrain (and upstream's guide): see TrainerStatus

    def __repr__(self) -> str:
        """The SDK 0.5's repr (a notebook prints a TrainJob as the SDK's did), `trainer_status` after
        it only when one was reported: SDK 0.5's TrainJob has no such field."""
        shown = ", ".join(
            f"{f}={getattr(self, f)!r}"
            for f in ("name", "runtime", "steps", "num_nodes", "creation_timestamp", "status")
        )
        extra = f", trainer_status={self.trainer_status!r}" if self.trainer_status is not None else ""
        return f"TrainJob({shown}{extra})"


@dataclass
class Event:
    """A Kubernetes event about a TrainJob, its JobSet, Jobs or pods (`get_job_events`)."""

    involved_object_kind: str
    involved_object_name: str
    message: str
    reason: str
    event_time: datetime


@dataclass
class BaseInitializer(abc.ABC):  # the SDK's: an abstract base without abstract methods
    storage_uri: str


@dataclass
class HuggingFaceDatasetInitializer(BaseInitializer):
    ignore_patterns: list[str] | None = None
    access_token: str | None = field(default=None, repr=False)


@dataclass
class S3DatasetInitializer(BaseInitializer):
    ignore_patterns: list[str] | None = None
    endpoint: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)
    region: str | None = None
    role_arn: str | None = None

    def __post_init__(self) -> None:
        _require_scheme(self.storage_uri, "s3://")


@dataclass
class HuggingFaceModelInitializer(BaseInitializer):
    ignore_patterns: list[str] | None = field(default_factory=lambda: list(INITIALIZER_DEFAULT_IGNORE_PATTERNS))
    access_token: str | None = field(default=None, repr=False)


@dataclass
class S3ModelInitializer(BaseInitializer):
    ignore_patterns: list[str] | None = field(default_factory=lambda: list(INITIALIZER_DEFAULT_IGNORE_PATTERNS))
    endpoint: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)
    region: str | None = None
    role_arn: str | None = None

    def __post_init__(self) -> None:
        _require_scheme(self.storage_uri, "s3://")


@dataclass
class DataCacheInitializer(BaseInitializer):
    """The data cache (an Iceberg table served to the trainers by `num_data_nodes` cache nodes),
    as the SDK's: `storage_uri` is `cache://<SCHEMA_NAME>/<TABLE_NAME>`, `metadata_loc` the
    table's metadata file. The TrainJob's dataset initializer gets CLUSTER_SIZE
    (`num_data_nodes + 1`), METADATA_LOC and every optional field that is set, upper-cased
    (HEAD_CPU, HEAD_MEM, WORKER_CPU, WORKER_MEM, IAM_ROLE), as the SDK sends them; the runtime
    must be one with a data-cache initializer (upstream's `torch-distributed-with-cache`)."""

    metadata_loc: str
    num_data_nodes: int
    head_cpu: str | None = None
    head_mem: str | None = None
    worker_cpu: str | None = None
    worker_mem: str | None = None
    iam_role: str | None = None

    def __post_init__(self) -> None:
        # The SDK's checks and messages (its ValueErrors; UsageError is one).
        from ktrain.python_api.arguments import integer, text

        nodes = integer(self.num_data_nodes, "num_data_nodes", minimum=-(2**63))
        if nodes <= 1:
            raise UsageError(f"num_data_nodes must be greater than 1, got {nodes}")
        uri = text(self.storage_uri, "storage_uri")  # the annotation is the SDK's; a caller may pass anything
        if not uri.startswith("cache://"):
            raise UsageError(f"storage_uri must start with 'cache://', got {uri}")
        if len(uri[len("cache://") :].split("/")) != 2:
            raise UsageError(f"storage_uri must be in format 'cache://<SCHEMA_NAME>/<TABLE_NAME>', got {uri}")


def _require_scheme(uri: object, scheme: str) -> None:
    # The SDK raises ValueError here; UsageError is one.
    if not isinstance(uri, str) or not uri.startswith(scheme):
        from ktrain.python_api.arguments import shown

        raise UsageError(f"storage_uri must start with {scheme!r}, got {shown(uri)}")


@dataclass
class Initializer:
    dataset: HuggingFaceDatasetInitializer | S3DatasetInitializer | DataCacheInitializer | None = None
    model: HuggingFaceModelInitializer | S3ModelInitializer | None = None


@dataclass
class TrainJobTemplate:
    """A TrainJob to make later (the SDK's, for its optimizer's trials): what `train` takes. It
    reads as a mapping, so `client.train(**template)` submits it."""

    trainer: CustomTrainer
    runtime: str | Runtime | None = None
    initializer: Initializer | None = None

    def keys(self) -> list[str]:
        return ["trainer", "runtime", "initializer"]

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


@dataclass
class KubernetesBackendConfig:
    """Where `TrainerClient` connects: a kubeconfig file (`config_file`, else $KUBECONFIG and
    ~/.kube/config, else the in-cluster service account), `context`, `namespace` (else the
    context's). `client_configuration` (a kubernetes client Configuration) is the SDK's; ktrain
    connects as kubectl does and refuses one."""

    namespace: str | None = None
    config_file: str | None = None
    context: str | None = None
    client_configuration: Any = None


@dataclass
class LocalProcessBackendConfig:
    """`TrainerClient(backend_config=LocalProcessBackendConfig())` runs each job's pods as
    processes on this machine (`ktrain job run --local`), in the background (SDK
    `kubeflow.trainer.backends.localprocess.types.LocalProcessBackendConfig`). `cleanup_venv`:
    False keeps the run's directory (volumes, emptyDirs) afterwards; the `--pip` environment is
    ktrain's cache and always kept."""

    cleanup_venv: bool = True


@dataclass
class TrainingRuntimeSource:
    """Where the SDK's container backend finds its runtimes (its default: upstream's, on GitHub).
    ktrain runs the runtimes it renders with (`runtime_files=`), so only this default is taken."""

    sources: list[str] = field(default_factory=lambda: ["github://kubeflow/trainer"])


@dataclass
class ContainerBackendConfig:
    """`TrainerClient(backend_config=ContainerBackendConfig())` runs each job's pods as containers
    of their images under podman or docker (`ktrain job run --local --container`), in the
    background (SDK `kubeflow.trainer.backends.container.types.ContainerBackendConfig`).
    `container_runtime`: docker or podman (default: the first whose `info` works, docker first, as
    the SDK); `pull_policy`: IfNotPresent | Always | Never; `auto_remove`: False keeps the
    containers and the run's network; `container_host`: the engine's address (DOCKER_HOST or
    CONTAINER_HOST). The SDK's `runtime_source` and initializer images and timeout are its own:
    ktrain runs the runtimes it renders with (`runtime_files=`), and refuses other values."""

    pull_policy: str = "IfNotPresent"
    auto_remove: bool = True
    container_host: str | None = None
    container_runtime: str | None = None
    runtime_source: TrainingRuntimeSource = field(default_factory=TrainingRuntimeSource)
    dataset_initializer_image: str = "ghcr.io/kubeflow/trainer/dataset-initializer:latest"
    model_initializer_image: str = "ghcr.io/kubeflow/trainer/model-initializer:latest"
    initializer_timeout: int = 600
