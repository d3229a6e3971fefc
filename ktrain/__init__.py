"""ktrain: author, render and submit Kubeflow Trainer v2 jobs. The Python API (`ktrain.render`,
`ktrain.validate`, `ktrain.train`, `ktrain.Client`, and the Kubeflow SDK's `ktrain.TrainerClient`,
`ktrain.CustomTrainer`, ...; docs/python-api.md) is loaded on first use, so `import ktrain` stays
as cheap as the CLI's fast path. `from ktrain import *` binds what `from kubeflow.trainer import *`
binds (the SDK's `__all__`), and ktrain's `Client` and `KtrainWarning`."""

__version__ = "0.1.0"

# The Kubeflow SDK's `kubeflow.trainer.__all__` (SDK 0.5) and ktrain's own classes. Not
# ktrain's `render`, `validate` and `train`: a star import must not rebind a notebook's own `train`
# function, which the SDK's leaves alone.
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
    "TorchTuneConfig",
    "TorchTuneInstructDataset",
    "TrainJobTemplate",
    "TrainerClient",
    "TrainerType",
    "TrainingRuntimeSource",
    "get_tpu_num_nodes",
    "update_trainjob_status",  # last: _PYTHON_API leaves it out
]

# What `ktrain.NAME` gives from ktrain.python_api (reading its __all__ would load it): the star
# import's names, ktrain's functions, and the SDK's types that are not in its __all__.
# (`update_trainjob_status` is not the Python API's: a training script's, from its own module.)
_PYTHON_API = (*__all__[:-1], "render", "validate", "train", "Step", "TrainJob")
# `ktrain.options.Labels`, `ktrain.types.types.Runtime`, ... as `kubeflow.trainer.options.Labels`:
# the SDK's subpackages, imported on first use.
_SUBPACKAGES = ("options", "types", "backends", "constants")


def __getattr__(name: str):  # type: ignore[no-untyped-def]  # PEP 562: lazy attributes
    if name in _SUBPACKAGES:  # (`from ktrain import constants` asks here first: no importlib on the render path)
        import sys

        __import__(f"ktrain.{name}")
        return sys.modules[f"ktrain.{name}"]
    if name == "update_trainjob_status":  # the Kubeflow SDK's, for training scripts
        from ktrain.python_api.status_report import update_trainjob_status

        return update_trainjob_status
    if name in _PYTHON_API:
        from ktrain import python_api

        return getattr(python_api, name)
    raise AttributeError(f"module 'ktrain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PYTHON_API, *_SUBPACKAGES, "update_trainjob_status"})
