"""Torchtune mode of the Torch policy: `tune run` command rewriting and its validation
(upstream `plugins/torch/torchtune.go`, ENGINE.md §6.2, V19–V24)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import gpu_count, resolve_num_proc_per_node, resources_for_detection
from ktrain.errors import FieldError
from ktrain.util.structs import struct

ENTRYPOINT = ["tune", "run"]
IMMUTABLE_CONFIGS = ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file")
SUPPORTED_MODELS = ("llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B")
MULTI_NODE_MODEL = "llama3_3/70B"
QLORA_SINGLE_GPU_MODELS = ("llama3_2/1B", "llama3_2/3B")


def is_torchtune(info: RuntimeInfo) -> bool:
    trainer = info.job.spec.trainer
    return trainer is not None and trainer.command == ENTRYPOINT


def model_of(runtime_name: str) -> str:
    """`torchtune-llama3.2-1b` -> `llama3_2/1B`; anything but three `-` fields -> ""."""
    fields = runtime_name.split("-")
    if len(fields) != 3:
        return ""
    return f"{fields[1].replace('.', '_')}/{fields[2].upper()}"


def _flag(args: list[str], key_part: str) -> bool:
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep and key_part in key and value.strip().lower() == "true":
            return True
    return False


@struct(frozen=True, slots=True)
class TuneMode:
    lora: bool
    qlora: bool
    dora: bool


def tune_mode(args: list[str]) -> TuneMode:
    lora = any("model.lora_attn_modules" in a for a in args)
    dora = _flag(args, "model.use_dora")
    qlora = not dora and _flag(args, "model.quantize_base")
    return TuneMode(lora=lora, qlora=qlora, dora=dora)


def _num_nodes(info: RuntimeInfo) -> int:
    ps = info.trainer_pod_set()
    return ps.count if ps is not None else 1


def _is_single_device(num_nodes: int, nproc: str, gpus: int) -> bool:
    return num_nodes == 1 and (nproc == "1" or gpus == 1)


def recipe_and_config(model: str, num_nodes: int, nproc: str, gpus: int, mode: TuneMode) -> tuple[str, str]:
    if _is_single_device(num_nodes, nproc, gpus):
        if mode.qlora:
            return "lora_finetune_single_device", f"{model}_qlora_single_device"
        if mode.lora:
            return "lora_finetune_single_device", f"{model}_lora_single_device"
        return "full_finetune_single_device", f"{model}_full_single_device"
    if num_nodes == 1 and mode.qlora:
        return "lora_finetune_distributed", f"{model}_qlora"
    if num_nodes == 1 and mode.lora:
        return "lora_finetune_distributed", f"{model}_lora"
    if num_nodes > 1:
        return "full_finetune_distributed", f"{model}_full_multinode"
    return "full_finetune_distributed", f"{model}_full"


def _needs_rdzv(num_nodes: int, nproc: str, gpus: int) -> bool:
    if num_nodes > 1:
        return True
    if nproc.isdigit() or (nproc.startswith("-") and nproc[1:].isdigit()):
        return int(nproc) > 1
    return gpus > 1


def rewrite_command(info: RuntimeInfo, nproc: str) -> list[str]:
    """The trainer command upstream builds for `tune run` (ENGINE.md §6.2)."""
    trainer = info.job.spec.trainer
    args = list(trainer.args or []) if trainer else []
    num_nodes = _num_nodes(info)
    gpus = gpu_count(resources_for_detection(info))
    model = model_of(info.job.spec.runtime_ref.name)
    recipe, config = recipe_and_config(model, num_nodes, nproc, gpus, tune_mode(args))
    command = list(ENTRYPOINT)
    if _needs_rdzv(num_nodes, nproc, gpus):
        command.append(f"--rdzv_endpoint={info.name}-{c.NODE}-0-0.{info.name}:{c.CONTAINER_TRAINER_PORT}")
    command += [recipe, "--config", config]
    container = info.trainer_container()
    for item in (container or {}).get("command") or []:
        if isinstance(item, str) and item.split("=", 1)[0] in IMMUTABLE_CONFIGS:
            command.append(item)
    return command


def validate(info: RuntimeInfo) -> list[FieldError]:
    trainer = info.job.spec.trainer
    assert trainer is not None  # is_torchtune() holds
    errors: list[FieldError] = []
    model = model_of(info.job.spec.runtime_ref.name)
    if model not in SUPPORTED_MODELS:
        errors.append(
            FieldError(
                "spec.runtimeRef.name", f"must have a supported pretrained model, invalid model configured: {model}"
            )
        )
    args = list(trainer.args or [])
    mode = tune_mode(args)
    num_nodes = trainer.num_nodes if trainer.num_nodes is not None else _num_nodes(info)
    if num_nodes > 1 and model != MULTI_NODE_MODEL:
        errors.append(FieldError("spec.trainer.numNodes", f"must be 1 for {model} model"))
    if mode.qlora and model.startswith("qwen"):
        errors.append(FieldError("spec.runtimeRef.name", f"QLoRA is not supported for {model} model"))
    nproc = resolve_num_proc_per_node(info)
    gpus = gpu_count(resources_for_detection(info))
    if mode.qlora and model in QLORA_SINGLE_GPU_MODELS and not _is_single_device(num_nodes, nproc, gpus):
        errors.append(
            FieldError("spec.trainer.numProcPerNode", f"must be auto or 1 for {model} model when using QLoRA")
        )
        errors.append(
            FieldError(
                "spec.trainer.resourcesPerNode",
                f"must have gpu resource with value 1 for {model} model when using QLoRA",
            )
        )
    if num_nodes > 1 and (mode.lora or mode.qlora):
        errors.append(
            FieldError(
                "spec.trainer.numNodes", "LoRA fine-tuning is not supported for multi-node training in TorchTune"
            )
        )
    for i, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in IMMUTABLE_CONFIGS:
            errors.append(
                FieldError(
                    f"spec.trainer.args[{i}]",
                    f'must not set immutable config "{key}" in trainer args; it is managed by the runtime',
                )
            )
    return errors
