"""Fine-tuning flags give the same `tune run` args as the Kubeflow SDK's TorchTuneConfig.

Each expectation below was written by reading kubeflow/sdk `kubeflow/trainer/backends/kubernetes/
utils.py` (`get_args_using_torchtune_config`, `get_args_from_peft_config`,
`get_args_from_dataset_preprocess_config`) and `kubeflow/trainer/types/types.py` (`LoraConfig`
defaults, `DataType`, `Loss`, `DataFormat`), for the SDK call named in each case.
"""

from __future__ import annotations

import pytest

from ktrain.authoring.finetune import (
    FineTuning,
    dataset_path_arg,
    merge_args,
    parse_column_map,
    parse_loss,
    parse_peft,
    torchtune_args,
)
from ktrain.errors import UsageError

CASES = [
    # TorchTuneConfig(dtype=DataType.BF16)
    ("dtype", FineTuning(dtype="bf16"), None, ["dtype=bf16"]),
    # TorchTuneConfig(batch_size=4)
    ("batch-size", FineTuning(batch_size=4), None, ["batch_size=4"]),
    # TorchTuneConfig(epochs=2)
    ("epochs", FineTuning(epochs=2), None, ["epochs=2"]),
    # TorchTuneConfig(loss=Loss.CEWithChunkedOutputLoss)
    (
        "loss",
        FineTuning(loss=parse_loss("CEWithChunkedOutputLoss")),
        None,
        ["loss=torchtune.modules.loss.CEWithChunkedOutputLoss"],
    ),
    # initializer=Initializer(dataset=HuggingFaceDatasetInitializer(storage_uri="hf://tatsu-lab/alpaca"))
    (
        "dataset dir",
        FineTuning(epochs=1),
        "hf://tatsu-lab/alpaca",
        ["epochs=1", "dataset.data_dir=/workspace/dataset/."],
    ),
    # ... storage_uri="hf://org/repo/data/train.parquet": a path with a dot is a file, inside the
    # repository the initializer downloaded into /workspace/dataset
    (
        "dataset file",
        FineTuning(epochs=1),
        "hf://org/repo/data/train.parquet",
        ["epochs=1", "dataset.data_files=/workspace/dataset/data/train.parquet"],
    ),
    # an S3 dataset: the SDK adds no path
    ("s3 dataset", FineTuning(epochs=1), "s3://bucket/data", ["epochs=1"]),
    # peft_config=LoraConfig(lora_rank=16, lora_alpha=32)
    (
        "lora",
        FineTuning(peft=parse_peft("lora", "rank=16,alpha=32")),
        None,
        ["model.lora_rank=16", "model.lora_alpha=32", "model.lora_attn_modules=[q_proj,v_proj,output_proj]"],
    ),
    # LoraConfig(lora_dropout=0.05, apply_lora_to_mlp=True, apply_lora_to_output=True,
    #            lora_attn_modules=["q_proj", "k_proj"])
    (
        "lora modules",
        FineTuning(peft=parse_peft("lora", "dropout=0.05,modules=q_proj,k_proj,mlp,output")),
        None,
        [
            "model.apply_lora_to_mlp=True",
            "model.apply_lora_to_output=True",
            "model.lora_dropout=0.05",
            "model.lora_attn_modules=[q_proj,k_proj]",
        ],
    ),
    # LoraConfig(quantize_base=True)
    (
        "qlora",
        FineTuning(peft=parse_peft("qlora", "")),
        None,
        ["model.quantize_base=True", "model.lora_attn_modules=[q_proj,v_proj,output_proj]"],
    ),
    # LoraConfig(use_dora=True, lora_rank=8)
    (
        "dora",
        FineTuning(peft=parse_peft("dora", "rank=8")),
        None,
        ["model.lora_rank=8", "model.use_dora=True", "model.lora_attn_modules=[q_proj,v_proj,output_proj]"],
    ),
    # dataset_preprocess_config=TorchTuneInstructDataset(source=DataFormat.JSON, split="train[:10%]")
    (
        "dataset source and split",
        FineTuning(dataset_source="json", dataset_split="train[:10%]"),
        None,
        ["dataset=torchtune.datasets.instruct_dataset", "dataset.source=json", "dataset.split=train[:10%]"],
    ),
    # TorchTuneInstructDataset(train_on_input=False): False is still written (`is not None`)
    (
        "train on input",
        FineTuning(train_on_input=False),
        None,
        ["dataset=torchtune.datasets.instruct_dataset", "dataset.train_on_input=False"],
    ),
    # TorchTuneInstructDataset(new_system_prompt="You are terse.")
    (
        "system prompt",
        FineTuning(system_prompt="You are terse."),
        None,
        ["dataset=torchtune.datasets.instruct_dataset", "dataset.new_system_prompt=You are terse."],
    ),
    # TorchTuneInstructDataset(column_map={"input": "question", "output": "answer"}): a dict's repr
    (
        "column map",
        FineTuning(column_map=parse_column_map("input=question,output=answer")),
        None,
        ["dataset=torchtune.datasets.instruct_dataset", "dataset.column_map={'input': 'question', 'output': 'answer'}"],
    ),
]


@pytest.mark.parametrize(("tuning", "dataset", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_setting_gives_the_sdk_args(tuning: FineTuning, dataset: str | None, expected: list[str]) -> None:
    assert torchtune_args(tuning, dataset) == expected


def test_all_settings_keep_the_sdk_order() -> None:
    # TorchTuneConfig(dtype, batch_size, epochs, loss, peft_config, dataset_preprocess_config) + an HF dataset
    tuning = FineTuning(
        dtype="fp32",
        batch_size=2,
        epochs=3,
        loss=parse_loss("CEWithChunkedOutputLoss"),
        peft=parse_peft("lora", "rank=4"),
        dataset_source="parquet",
    )
    assert torchtune_args(tuning, "hf://tatsu-lab/alpaca") == [
        "dtype=fp32",
        "batch_size=2",
        "epochs=3",
        "loss=torchtune.modules.loss.CEWithChunkedOutputLoss",
        "dataset.data_dir=/workspace/dataset/.",
        "model.lora_rank=4",
        "model.lora_attn_modules=[q_proj,v_proj,output_proj]",
        "dataset=torchtune.datasets.instruct_dataset",
        "dataset.source=parquet",
    ]


def test_a_repository_root_dataset_reads_the_whole_download() -> None:
    # SDK: urlparse("hf://tatsu-lab").path is "", so the relative path is "." (os.path.join keeps it)
    assert dataset_path_arg("hf://tatsu-lab") == "dataset.data_dir=/workspace/dataset/."


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("lora", "rank=0", "rank must be a positive integer"),
        ("lora", "rank=abc", "rank must be a positive integer"),
        ("lora", "dropout=1.5", "dropout must be a number in [0, 1)"),
        ("lora", "dropout=nan", "dropout must be a number in [0, 1)"),
        ("lora", "size=3", "unknown key 'size'"),
        ("qlora", "q_proj", "'q_proj' is not KEY=VALUE"),
        ("dora", "modules=q_proj,ffn", "unknown module 'ffn'"),
        ("lora", "modules=mlp", "needs at least one attention module"),
    ],
)
def test_bad_peft_settings_name_the_flag_and_the_problem(kind: str, text: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_peft(kind, text)
    assert f"--{kind}" in err.value.message and message in err.value.message


def test_bad_column_map_and_loss_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="not COLUMN=NAME"):
        parse_column_map("input")
    with pytest.raises(UsageError, match="unknown loss"):
        parse_loss("MSE")


def test_flag_args_replace_the_same_keys_of_the_job_file() -> None:
    assert merge_args(["epochs=9", "seed=1"], ["epochs=2"]) == ["seed=1", "epochs=2"]
