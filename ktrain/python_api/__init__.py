"""ktrain from Python (docs/python-api.md), beside the CLI and on the same use cases.

- `ktrain.render`, `ktrain.validate`, `ktrain.train` (`functions`): the job commands as functions,
  with the command line's job options as keyword arguments (`arguments`);
- `ktrain.Client` (`client`): the cluster commands as methods;
- `ktrain.TrainerClient` and the Kubeflow SDK's types (`trainer_client`, `types`, `conversion`):
  the SDK's interface, so a notebook moves over by changing its import.

Results and errors are the CLI's (`ktrain.errors.KtrainError` and its subclasses, which are also
the built-in exceptions the SDK raises). `import ktrain` loads none of this; the first use does.
"""

from __future__ import annotations

from ktrain.python_api.client import Client, KtrainWarning
from ktrain.python_api.functions import render, train, train_request, validate
from ktrain.python_api.request import function_source
from ktrain.python_api.tpu import get_tpu_num_nodes
from ktrain.python_api.trainer_client import TrainerClient
from ktrain.python_api.types import (
    DATASET_PATH,
    MODEL_PATH,
    BuiltinTrainer,
    ContainerBackendConfig,
    CustomTrainer,
    CustomTrainerContainer,
    DataCacheInitializer,
    DataFormat,
    DataType,
    Event,
    HuggingFaceDatasetInitializer,
    HuggingFaceModelInitializer,
    Initializer,
    KubernetesBackendConfig,
    LocalProcessBackendConfig,
    LoraConfig,
    Loss,
    Runtime,
    RuntimeKind,
    RuntimeTrainer,
    S3DatasetInitializer,
    S3ModelInitializer,
    Step,
    TorchTuneConfig,
    TorchTuneInstructDataset,
    TrainerType,
    TrainingRuntimeSource,
    TrainJob,
    TrainJobTemplate,
)

# What `ktrain.NAME` gives (ktrain/__init__.py spells the same list): ktrain's own, then the SDK's names.
__all__ = [
    "DATASET_PATH",
    "MODEL_PATH",
    "BuiltinTrainer",
    "Client",
    "ContainerBackendConfig",
    "CustomTrainer",
    "CustomTrainerContainer",
    "DataCacheInitializer",
    "DataFormat",
    "DataType",
    "Event",
    "HuggingFaceDatasetInitializer",
    "HuggingFaceModelInitializer",
    "Initializer",
    "KtrainWarning",
    "KubernetesBackendConfig",
    "LocalProcessBackendConfig",
    "LoraConfig",
    "Loss",
    "Runtime",
    "RuntimeKind",
    "RuntimeTrainer",
    "S3DatasetInitializer",
    "S3ModelInitializer",
    "Step",
    "TorchTuneConfig",
    "TorchTuneInstructDataset",
    "TrainJob",
    "TrainJobTemplate",
    "TrainerClient",
    "TrainerType",
    "TrainingRuntimeSource",
    "function_source",
    "get_tpu_num_nodes",
    "render",
    "train",
    "train_request",
    "validate",
]
