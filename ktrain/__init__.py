"""ktrain: author, render and submit Kubeflow Trainer v2 jobs. The Python API (`ktrain.render`,
`ktrain.validate`, `ktrain.train`, `ktrain.Client`, and the Kubeflow SDK's `ktrain.TrainerClient`,
`ktrain.CustomTrainer`, ...; docs/python-api.md) is loaded on first use, so `import ktrain` stays
as cheap as the CLI's fast path."""

__version__ = "0.1.0"

# ktrain.python_api.__all__ (less its helpers), spelled out: reading it would load the Python API.
_PYTHON_API = (
    "render",
    "validate",
    "train",
    "Client",
    "KtrainWarning",
    "TrainerClient",
    "BuiltinTrainer",
    "CustomTrainer",
    "CustomTrainerContainer",
    "DATASET_PATH",
    "DataFormat",
    "DataType",
    "Event",
    "HuggingFaceDatasetInitializer",
    "HuggingFaceModelInitializer",
    "Initializer",
    "KubernetesBackendConfig",
    "LocalProcessBackendConfig",
    "ContainerBackendConfig",
    "LoraConfig",
    "Loss",
    "MODEL_PATH",
    "Runtime",
    "RuntimeKind",
    "RuntimeTrainer",
    "S3DatasetInitializer",
    "S3ModelInitializer",
    "Step",
    "TorchTuneConfig",
    "TorchTuneInstructDataset",
    "TrainerType",
    "TrainJob",
)


def __getattr__(name: str):  # type: ignore[no-untyped-def]  # PEP 562: lazy attributes
    if name == "options":  # `ktrain.options.Labels`, as `kubeflow.trainer.options.Labels`
        import importlib

        return importlib.import_module("ktrain.options")
    if name == "update_trainjob_status":  # the Kubeflow SDK's, for training scripts
        from ktrain.python_api.status_report import update_trainjob_status

        return update_trainjob_status
    if name in _PYTHON_API:
        from ktrain import python_api

        return getattr(python_api, name)
    raise AttributeError(f"module 'ktrain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PYTHON_API, "options", "update_trainjob_status"})
