"""The Kubeflow SDK's types → ktrain's job options, checked as they enter.

Each SDK value becomes what the command line would say (`JobOverrides` keywords: `num_nodes`,
`resources_per_node`, `fine_tuning`, `dataset`, ...), so `TrainerClient().train(...)` renders
through the same use case as `ktrain job create`. The mapping follows the SDK's Kubernetes backend
(kubeflow/sdk `kubeflow/trainer/backends/kubernetes/utils.py`: `get_trainer_cr_from_custom_trainer`,
`get_trainer_cr_from_builtin_trainer`, `get_args_using_torchtune_config`, `get_dataset_initializer`,
`get_model_initializer`); tests/test_sdk_differential.py holds the two to the same TrainJob.

Values are read by field name, so the SDK's own instances (`kubeflow.trainer.CustomTrainer`)
work as well as ktrain's; enums are read by value (`DataType.BF16` or `"bf16"`).
"""

from __future__ import annotations

from typing import Any

from ktrain.errors import ArgumentTypeError, UsageError
from ktrain.python_api import arguments as a

Obj = dict[str, Any]

CUSTOM_TRAINERS = ("CustomTrainer", "CustomTrainerContainer")
BUILTIN_TRAINER = "BuiltinTrainer"
HF_SCHEME = "hf://"


def _trainer_common(trainer: object, arg: str) -> Obj:
    """num_nodes, resources_per_node, env and image, as job keywords (unset ones left out)."""
    out: Obj = {}
    nodes = a.optional_integer(a.field_of(trainer, "num_nodes"), f"{arg}.num_nodes", minimum=1)
    if nodes:
        out["num_nodes"] = nodes
    amounts = a.field_of(trainer, "resources_per_node")
    if amounts:
        a.resources(amounts, f"{arg}.resources_per_node")
        out["resources_per_node"] = amounts
    env = a.field_of(trainer, "env")
    if env:
        out["env"] = a.text_map(env, f"{arg}.env")
    image = a.optional_text(a.field_of(trainer, "image"), f"{arg}.image")
    if image:
        out["image"] = image
    return out


def trainer_keywords(trainer: object, arg: str = "trainer") -> tuple[Obj, Any]:
    """(job keywords, the CustomTrainer's function or None) for an SDK trainer."""
    kind = a.kind_of(trainer)
    if kind == "CustomTrainer":
        out = _trainer_common(trainer, arg)
        func = a.field_of(trainer, "func")
        if not callable(func):
            raise a.wrong_type(f"{arg}.func", "a function", func)
        packages = a.optional_text_list(a.field_of(trainer, "packages_to_install"), f"{arg}.packages_to_install")
        if packages:
            out["packages_to_install"] = packages
            out["pip_index_urls"] = a.text_list_or_empty(a.field_of(trainer, "pip_index_urls"), f"{arg}.pip_index_urls")
        return out, func
    if kind == "CustomTrainerContainer":
        out = _trainer_common(trainer, arg)
        if not out.get("image"):
            raise UsageError(f"{arg}.image: a CustomTrainerContainer needs its image")
        return out, None
    if kind == BUILTIN_TRAINER:
        config = a.field_of(trainer, "config")
        out = _trainer_common(config, f"{arg}.config") if a.kind_of(config) == "TorchTuneConfig" else {}
        a.fine_tuning_of(config, f"{arg}.config")  # checked here, for errors that name trainer.config
        out["fine_tuning"] = config
        out["command"] = ["tune", "run"]  # as the SDK: the runtime's torchtune entry point, then the args
        return out, None
    raise ArgumentTypeError(
        f"{arg} must be a CustomTrainer, CustomTrainerContainer or BuiltinTrainer, not {kind}",
        hint="from ktrain import CustomTrainer",
    )


INITIALIZERS = {
    "dataset": ("HuggingFaceDatasetInitializer", "S3DatasetInitializer"),
    "model": ("HuggingFaceModelInitializer", "S3ModelInitializer"),
}
INITIALIZER_FIELDS = {
    "HuggingFaceDatasetInitializer": ("ignore_patterns", "access_token"),
    "HuggingFaceModelInitializer": ("ignore_patterns", "access_token"),
    "S3DatasetInitializer": ("ignore_patterns", "endpoint", "access_key_id", "secret_access_key", "region", "role_arn"),
    "S3ModelInitializer": ("ignore_patterns", "endpoint", "access_key_id", "secret_access_key", "region", "role_arn"),
}


def initializer_parts(initializer: object, arg: str = "initializer") -> tuple[Obj, Obj]:
    """(job keywords `dataset` / `model`: the storage URIs, the TrainJob's `spec.initializer` with
    each initializer's env) for an SDK Initializer. The env is the SDK's: every optional field
    that is set, upper-cased, lists joined with commas (`IGNORE_PATTERNS`, `ACCESS_TOKEN`, ...)."""
    keywords: Obj = {}
    spec: Obj = {}
    if initializer is None:
        return keywords, spec
    if a.kind_of(initializer) != "Initializer":
        raise a.wrong_type(arg, "an Initializer", initializer)
    for part, kinds in INITIALIZERS.items():
        source = a.field_of(initializer, part)
        where = f"{arg}.{part}"
        if source is None:
            continue
        kind = a.kind_of(source)
        if kind not in kinds:
            raise a.wrong_type(where, " or ".join(kinds), source)
        uri = a.text(a.field_of(source, "storage_uri"), f"{where}.storage_uri")
        if kind.startswith("HuggingFace") and not uri.startswith(HF_SCHEME):
            # The initializer reads only hf:// (and s3://) URIs; the SDK sends the bare name as
            # given and computes the dataset path as if it had the prefix.
            uri = HF_SCHEME + uri
        if kind.startswith("S3") and not uri.startswith("s3://"):
            raise UsageError(f"{where}.storage_uri must start with 's3://', got {a.shown(uri)}")
        env: list[Obj] = []
        for name in INITIALIZER_FIELDS[kind]:
            value = a.field_of(source, name)
            if value is None:
                continue
            if name == "ignore_patterns":
                value = ",".join(a.text_list(value, f"{where}.ignore_patterns"))
            else:
                value = a.text(value, f"{where}.{name}")
            env.append({"name": name.upper(), "value": value})
        keywords[part] = uri
        if env:
            spec[part] = {"env": env}
    return keywords, spec


def runtime_name(runtime: object, arg: str = "runtime") -> str:
    """A runtime given as its name or as a Runtime (`list_runtimes()`, `get_runtime()`)."""
    from ktrain.python_api.types import DEFAULT_TRAINING_RUNTIME

    if runtime is None:
        return DEFAULT_TRAINING_RUNTIME
    if isinstance(runtime, str):
        return runtime
    if a.kind_of(runtime) == "Runtime" and isinstance(a.field_of(runtime, "name"), str):
        return str(a.field_of(runtime, "name"))
    raise a.wrong_type(arg, "a runtime name or a Runtime", runtime)
