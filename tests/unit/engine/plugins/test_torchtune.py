"""Torchtune mode of the torch policy (`ktrain.engine.plugins.torchtune`, upstream
`plugins/torch/torchtune.go`, ENGINE.md §6.2 and V19-V24): the `tune run` command the engine
writes and the rules it refuses, rendered on the bundled torchtune runtimes."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.engine.plugins.torchtune import model_of, tune_mode
from ktrain.errors import ValidationFailedError

from .renders import bundled, bundled_job, container, env, objects

TUNE = ["tune", "run"]
LLAMA_1B = "torchtune-llama3.2-1b"
IMMUTABLE = [
    "output_dir=/workspace/output",
    "tokenizer.path=/workspace/model/original/tokenizer.model",
    "checkpointer.checkpoint_dir=/workspace/model",
]


def tune(runtime: str = LLAMA_1B, name: str = "tj", **trainer: Any) -> dict[str, Any]:
    return container(objects(bundled_job(runtime, name, command=TUNE, **trainer), bundled(runtime)))


def refused(runtime: str = LLAMA_1B, **trainer: Any) -> list[tuple[str, str]]:
    with pytest.raises(ValidationFailedError) as err:
        objects(bundled_job(runtime, command=TUNE, **trainer), bundled(runtime))
    return [(e.path, e.message) for e in err.value.errors]


def test_the_upstream_example_command() -> None:
    """ENGINE.md §6.2: the runtime's 2 GPUs, numNodes unset."""
    ct = tune(name="tj")
    assert ct["command"] == [
        "tune",
        "run",
        "--rdzv_endpoint=tj-node-0-0.tj:29500",
        "full_finetune_distributed",
        "--config",
        "llama3_2/1B_full",
        *IMMUTABLE,
    ]
    found = env(ct)
    assert found["PET_NPROC_PER_NODE"] == "auto" and found["PET_NNODES"] == "1"
    assert "PET_MASTER_ADDR" not in found and "PET_MASTER_PORT" not in found
    assert [p["containerPort"] for p in ct["ports"]] == [29500]


def test_a_single_gpu_runs_the_single_device_recipe_without_rendezvous() -> None:
    """ENGINE.md §13.7."""
    ct = tune(resourcesPerNode={"limits": {"nvidia.com/gpu": 1}})
    assert ct["command"][:5] == [
        "tune",
        "run",
        "full_finetune_single_device",
        "--config",
        "llama3_2/1B_full_single_device",
    ]
    assert env(ct)["PET_NPROC_PER_NODE"] == "auto"


@pytest.mark.parametrize(
    ("args", "recipe", "config"),
    [
        (["model.lora_attn_modules=[q_proj]"], "lora_finetune_single_device", "llama3_2/1B_lora_single_device"),
        (["model.quantize_base= True "], "lora_finetune_single_device", "llama3_2/1B_qlora_single_device"),
        (
            ["model.quantize_base=True", "model.use_dora=true"],
            "full_finetune_single_device",
            "llama3_2/1B_full_single_device",
        ),
    ],
)
def test_lora_qlora_and_dora_choose_the_recipe(args: list[str], recipe: str, config: str) -> None:
    ct = tune(resourcesPerNode={"limits": {"nvidia.com/gpu": 1}}, args=args)
    assert ct["command"][2:5] == [recipe, "--config", config]
    assert ct["args"] == args


def test_lora_on_several_gpus_runs_distributed() -> None:
    ct = tune(args=["model.lora_attn_modules=[q_proj]"])
    assert ct["command"][2:6] == [
        "--rdzv_endpoint=tj-node-0-0.tj:29500",
        "lora_finetune_distributed",
        "--config",
        "llama3_2/1B_lora",
    ]


def test_the_qwen_runtime_keeps_its_merges_file() -> None:
    ct = tune("torchtune-qwen2.5-1.5b")
    assert ct["command"][-5:] == [
        "qwen2_5/1.5B_full",
        "output_dir=/workspace/output",
        "tokenizer.path=/workspace/model/vocab.json",
        "tokenizer.merges_file=/workspace/model/merges.txt",  # in the runtime's order
        "checkpointer.checkpoint_dir=/workspace/model",
    ]


def test_another_command_leaves_the_runtime_command_and_sets_the_master_address() -> None:
    rt = bundled(LLAMA_1B)
    ct = container(objects(bundled_job(LLAMA_1B, "tj", args=["x=1"]), rt))
    runtime_ct = rt["spec"]["template"]["spec"]["replicatedJobs"][2]["template"]["spec"]["template"]["spec"]
    assert ct["command"] == runtime_ct["containers"][0]["command"]
    assert env(ct)["PET_MASTER_ADDR"] == "tj-node-0-0.tj"


def test_several_nodes_are_refused_for_a_small_model() -> None:
    assert refused(numNodes=2) == [("spec.trainer.numNodes", "must be 1 for llama3_2/1B model")]


def test_multi_node_lora_is_refused() -> None:
    errors = refused(numNodes=2, args=["model.lora_attn_modules=[q_proj]"])
    assert ("spec.trainer.numNodes", "LoRA fine-tuning is not supported for multi-node training in TorchTune") in errors


def test_qlora_on_qwen_is_refused() -> None:
    errors = refused("torchtune-qwen2.5-1.5b", args=["model.quantize_base=true"])
    assert ("spec.runtimeRef.name", "QLoRA is not supported for qwen2_5/1.5B model") in errors


def test_qlora_on_a_small_llama_needs_a_single_device() -> None:
    assert refused(args=["model.quantize_base=true"]) == [
        ("spec.trainer.numProcPerNode", "must be auto or 1 for llama3_2/1B model when using QLoRA"),
        ("spec.trainer.resourcesPerNode", "must have gpu resource with value 1 for llama3_2/1B model when using QLoRA"),
    ]


def test_an_immutable_config_in_the_args_is_refused_at_its_index() -> None:
    assert refused(args=["epochs=1", "output_dir=/tmp/out"]) == [
        (
            "spec.trainer.args[1]",
            'must not set immutable config "output_dir" in trainer args; it is managed by the runtime',
        )
    ]


def test_a_runtime_name_without_a_supported_model_is_refused() -> None:
    rt = bundled(LLAMA_1B)
    rt["metadata"]["name"] = "my-tune"
    data = bundled_job("my-tune", command=TUNE)
    with pytest.raises(ValidationFailedError) as err:
        objects(data, rt)
    assert [(e.path, e.message) for e in err.value.errors] == [
        ("spec.runtimeRef.name", "must have a supported pretrained model, invalid model configured: ")
    ]


@pytest.mark.parametrize(
    ("runtime", "model"),
    [
        ("torchtune-llama3.2-1b", "llama3_2/1B"),
        ("torchtune-llama3.2-3b", "llama3_2/3B"),
        ("torchtune-qwen2.5-1.5b", "qwen2_5/1.5B"),
        ("torchtune-llama3.3-70b", "llama3_3/70B"),
        ("my-tune", ""),
        ("a-b-c-d", ""),
    ],
)
def test_model_of(runtime: str, model: str) -> None:
    assert model_of(runtime) == model


def test_tune_mode_reads_the_flags_as_upstream() -> None:
    assert tune_mode(["model.quantize_base=TRUE"]).qlora
    assert not tune_mode(["model.quantize_base=false"]).qlora
    assert not tune_mode(["model.quantize_base"]).qlora  # no `=`: not a setting
    dora = tune_mode(["model.use_dora=true", "model.quantize_base=true"])
    assert dora.dora and not dora.qlora
    assert tune_mode(["x", "model.lora_attn_modules"]).lora


def test_one_process_on_the_runtimes_two_gpus_is_single_device_without_rendezvous() -> None:
    ct = tune(numProcPerNode=1)
    assert ct["command"] == [
        *TUNE,
        "full_finetune_single_device",
        "--config",
        "llama3_2/1B_full_single_device",
        *IMMUTABLE,
    ]
    assert env(ct)["PET_NPROC_PER_NODE"] == "1"


def test_several_processes_on_cpus_need_a_rendezvous() -> None:
    ct = tune(numProcPerNode=2, resourcesPerNode={"limits": {"nvidia.com/gpu": 0}})
    assert ct["command"][2:6] == [
        "--rdzv_endpoint=tj-node-0-0.tj:29500",
        "full_finetune_distributed",
        "--config",
        "llama3_2/1B_full",
    ]
