"""The Kubeflow SDK's types → ktrain's job options, checked as they enter.

Each SDK value becomes what the command line would say (`JobOverrides` keywords: `num_nodes`,
`resources_per_node`, `fine_tuning`, `dataset`, ...), so `TrainerClient().train(...)` renders
through the same use case as `ktrain job create`. The mapping follows the SDK's Kubernetes backend
(kubeflow/sdk `kubeflow/trainer/backends/kubernetes/utils.py`: `get_trainer_cr_from_custom_trainer`,
`get_trainer_cr_from_builtin_trainer`, `get_args_using_torchtune_config`, `get_dataset_initializer`,
`get_model_initializer`); tests/unit/python_api/test_conversion.py holds the two to the same TrainJob.

Values are read by field name, so the SDK's own instances (`kubeflow.trainer.CustomTrainer`)
work as well as ktrain's; enums are read by value (`DataType.BF16` or `"bf16"`).
"""

from __future__ import annotations

from typing import Any

from ktrain.errors import ArgumentTypeError, UsageError
from ktrain.python_api import arguments as a
from ktrain.python_api.types import DEFAULT_TRAINING_RUNTIME
from ktrain.util.jsondata import Obj

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
    "dataset": ("HuggingFaceDatasetInitializer", "S3DatasetInitializer", "DataCacheInitializer"),
    "model": ("HuggingFaceModelInitializer", "S3ModelInitializer"),
}
INITIALIZER_FIELDS = {
    "HuggingFaceDatasetInitializer": ("ignore_patterns", "access_token"),
    "HuggingFaceModelInitializer": ("ignore_patterns", "access_token"),
    "S3DatasetInitializer": ("ignore_patterns", "endpoint", "access_key_id", "secret_access_key", "region", "role_arn"),
    "S3ModelInitializer": ("ignore_patterns", "endpoint", "access_key_id", "secret_access_key", "region", "role_arn"),
    # after CLUSTER_SIZE and METADATA_LOC (data_cache_env)
    "DataCacheInitializer": ("head_cpu", "head_mem", "worker_cpu", "worker_mem", "iam_role"),
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
        env: list[Obj] = data_cache_env(source, where) if kind == "DataCacheInitializer" else []
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


def data_cache_env(source: object, where: str) -> list[Obj]:
    """A DataCacheInitializer's first variables, as the SDK sends them: CLUSTER_SIZE (the data
    nodes and the head) and METADATA_LOC."""
    nodes = a.integer(a.field_of(source, "num_data_nodes"), f"{where}.num_data_nodes", minimum=2)
    metadata = a.text(a.field_of(source, "metadata_loc"), f"{where}.metadata_loc")
    return [{"name": "CLUSTER_SIZE", "value": str(nodes + 1)}, {"name": "METADATA_LOC", "value": metadata}]


def runtime_name(runtime: object, arg: str = "runtime") -> str:
    """A runtime given as its name or as a Runtime (`list_runtimes()`, `get_runtime()`)."""
    if runtime is None:
        return DEFAULT_TRAINING_RUNTIME
    if isinstance(runtime, str):
        return runtime
    if a.kind_of(runtime) == "Runtime" and isinstance(a.field_of(runtime, "name"), str):
        return str(a.field_of(runtime, "name"))
    raise a.wrong_type(arg, "a runtime name or a Runtime", runtime)


# --- the SDK's training options (`options=[...]`: ktrain.python_api.options) ---------------------------

# Each option's fields, and what it sets: a job keyword (the command line's option) or a job field.
OPTION_KEYWORDS = {"Name": "name", "Labels": "labels", "Annotations": "annotations", "TrainerCommand": "command"}
OPTION_KIND = {keyword: kind for kind, keyword in OPTION_KEYWORDS.items()}
OPTION_FIELDS = {
    "Name": "name",
    "Labels": "labels",
    "Annotations": "annotations",
    "TrainerCommand": "command",
    "TrainerArgs": "args",
    "ActiveDeadlineSeconds": "seconds",
    "RuntimePatch": "training_runtime_spec",
}
TRAINER_OPTIONS = ("TrainerCommand", "TrainerArgs")  # the SDK refuses them with other trainers
# The RuntimePatch tree (SDK `kubernetes.py`): each patch class's fields, and the class a field holds
# (a list of them for replicated_jobs, containers, init_containers); other fields are plain data.
PATCH_FIELDS: dict[str, tuple[str, ...]] = {
    "RuntimePatch": ("training_runtime_spec", "manager"),
    "TrainingRuntimeSpecPatch": ("template",),
    "JobSetTemplatePatch": ("metadata", "spec"),
    "JobSetSpecPatch": ("replicated_jobs",),
    "ReplicatedJobPatch": ("name", "template"),
    "JobTemplatePatch": ("metadata", "spec"),
    "JobSpecPatch": ("template",),
    "PodTemplatePatch": ("metadata", "spec"),
    "PodSpecPatch": (
        "service_account_name",
        "volumes",
        "init_containers",
        "containers",
        "image_pull_secrets",
        "security_context",
        "node_selector",
        "affinity",
        "tolerations",
        "scheduling_gates",
    ),
    "ContainerPatch": ("name", "env", "volume_mounts", "security_context"),
}
PATCH_CHILD = {
    ("RuntimePatch", "training_runtime_spec"): "TrainingRuntimeSpecPatch",
    ("TrainingRuntimeSpecPatch", "template"): "JobSetTemplatePatch",
    ("JobSetTemplatePatch", "spec"): "JobSetSpecPatch",
    ("JobSetSpecPatch", "replicated_jobs"): "ReplicatedJobPatch",
    ("ReplicatedJobPatch", "template"): "JobTemplatePatch",
    ("JobTemplatePatch", "spec"): "JobSpecPatch",
    ("JobSpecPatch", "template"): "PodTemplatePatch",
    ("PodTemplatePatch", "spec"): "PodSpecPatch",
    ("PodSpecPatch", "containers"): "ContainerPatch",
    ("PodSpecPatch", "init_containers"): "ContainerPatch",
}
PATCH_LISTS = {"replicated_jobs", "containers", "init_containers"}
PATCH_TEXT = {"manager", "name", "service_account_name"}
PATCH_MAPS = {"metadata", "security_context", "node_selector", "affinity"}


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def _patch_dict(value: object, kind: str, arg: str) -> Obj:
    """A RuntimePatch (ktrain's or the SDK's) as the SDK writes it (`_patch_to_dict`): camelCase
    keys, unset fields left out, and empty lists and empty patch classes too."""
    from ktrain.python_api.request import _plain

    if a.kind_of(value) != kind:
        raise a.wrong_type(arg, f"a {kind}", value)
    if kind == "ContainerPatch":
        from ktrain.python_api.options import check_container_patch

        check_container_patch(a.field_of(value, "name"), a.field_of(value, "env"), a.field_of(value, "volume_mounts"))
    out: Obj = {}
    for name in PATCH_FIELDS[kind]:
        item = a.field_of(value, name)
        where = f"{arg}.{name}"
        if item is None:
            continue
        child = PATCH_CHILD.get((kind, name))
        if child is not None and name in PATCH_LISTS:
            items = a.items_of(item, where, child)
            converted: Any = [_patch_dict(x, child, f"{where}[{i}]") for i, x in enumerate(items)]
        elif child is not None:
            converted = _patch_dict(item, child, where)
        elif name in PATCH_TEXT:
            converted = a.text(item, where)
        elif name in PATCH_MAPS:
            _plain(a.mapping(item, where), where)
            converted = item
        else:
            _plain(a.items_of(item, where, "dicts"), where)
            converted = list(item)
        if converted or (child is None and not isinstance(converted, list)):  # as the SDK drops empties
            out[_camel(name)] = converted
    return out


def option_kinds(options: object) -> list[str]:
    """The class names of the options given (after option_parts checked them)."""
    return [] if options is None else [a.kind_of(option) for option in a.items_of(options, "options", "options")]


def option_parts(options: object, trainer: object, *, backend: str | None = None) -> tuple[Obj, Obj]:
    """(job keywords, TrainJob fields: `metadata` and `spec`) for the SDK's `options=[...]`
    (ktrain's option classes or the SDK's own, read by field name), each meaning what its `__call__` does in the SDK's
    Kubernetes backend (kubeflow/sdk `kubeflow/trainer/options/`). `backend`: a local backend's
    name, where the SDK takes only Name. Refused as in the SDK: TrainerCommand / TrainerArgs with
    another trainer than a CustomTrainerContainer; by ktrain: an option given twice (the SDK keeps
    the last, or for RuntimePatch sends two patches of one manager, which the API server refuses)."""
    keywords: Obj = {}
    metadata: Obj = {}
    spec: Obj = {}
    job = {"metadata": metadata, "spec": spec}
    if options is None:
        return keywords, {}
    seen: set[str] = set()
    for i, option in enumerate(a.items_of(options, "options", "options")):
        kind = a.kind_of(option)
        arg = f"options[{i}] ({kind})"
        if kind not in OPTION_FIELDS:
            raise ArgumentTypeError(
                f"options[{i}] must be one of {', '.join(sorted(OPTION_FIELDS))}, not {kind}",
                hint="from ktrain.options import Name, Labels, ... (or kubeflow.trainer.options)",
            )
        if kind in seen:
            raise UsageError(f"options: {kind} is given twice", hint="give each option once")
        seen.add(kind)
        if backend is not None and kind != "Name":  # the SDK's message
            raise UsageError(f"{kind} option is not compatible with {backend}. Supported backends: KubernetesBackend")
        if kind in TRAINER_OPTIONS and trainer is not None and a.kind_of(trainer) != "CustomTrainerContainer":
            own, preset = ("command", "commands") if kind == "TrainerCommand" else ("arguments", "arguments")
            raise UsageError(  # the SDK's words
                f"{kind} can only be used with CustomTrainerContainer. CustomTrainer generates its own "
                f"{own} from the function, and BuiltinTrainer uses pre-configured {preset}."
            )
        value = a.field_of(option, OPTION_FIELDS[kind])
        if kind == "Name":
            keywords["name"] = a.text(value, f"{arg}.name")
        elif kind in ("Labels", "Annotations"):
            # Onto the TrainJob's metadata only, as the SDK: the `labels=` keyword (the CLI's
            # --label) also carries them to the JobSet by a runtime patch.
            field = OPTION_FIELDS[kind]
            metadata[field] = a.text_map(a.mapping(value, f"{arg}.{field}"), f"{arg}.{field}")
        elif kind == "TrainerCommand":
            keywords["command"] = a.text_list(value, f"{arg}.command")
        elif kind == "TrainerArgs":
            spec.setdefault("trainer", {})["args"] = a.text_list(value, f"{arg}.args")
        elif kind == "ActiveDeadlineSeconds":
            if type(value) is not int or value < 1:  # the SDK's check, in its words
                raise UsageError(f"{arg}: activeDeadlineSeconds must be a positive integer (minimum 1)")
            spec["activeDeadlineSeconds"] = value
        else:
            spec.setdefault("runtimePatches", []).append(_patch_dict(option, kind, arg))
    return keywords, {k: v for k, v in job.items() if v}
