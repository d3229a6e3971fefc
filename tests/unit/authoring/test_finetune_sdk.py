"""Fine-tuning flags against the real Kubeflow SDK (kubeflow 0.5, the `test` extra): the SDK's own
`get_args_using_torchtune_config` is called with the same settings and the same dataset
initializer, and ktrain's `torchtune_args` must give the same list, byte for byte.

Where the dataset lands is the Trainer's dataset initializer's business: kubeflow/trainer
`pkg/initializers/dataset/huggingface.py` downloads the whole repository `hf://ORG/REPO` with
`huggingface_hub.snapshot_download(repo_id=..., repo_type="dataset", local_dir=DATASET_PATH)`,
DATASET_PATH being `/workspace/dataset` (`pkg/initializers/utils/utils.py`). So the repository's
files are right under /workspace/dataset, and `hf://ORG/REPO/SUB` is /workspace/dataset/SUB.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.authoring.finetune import (
    DATASET_PATH,
    INSTRUCT_DATASET,
    FineTuning,
    Peft,
    dataset_path_arg,
    torchtune_args,
)

sdk_utils = pytest.importorskip("kubeflow.trainer.backends.kubernetes.utils")
sdk_types = pytest.importorskip("kubeflow.trainer.types.types")
sdk_constants = pytest.importorskip("kubeflow.trainer.constants.constants")


def sdk_args(tuning: FineTuning, dataset_uri: str | None) -> list[str]:
    """The SDK's args for the TorchTuneConfig (and dataset initializer) these settings stand for."""
    t = sdk_types
    peft = None
    if tuning.peft is not None:
        p = tuning.peft
        peft = t.LoraConfig(
            apply_lora_to_mlp=p.mlp,
            apply_lora_to_output=p.output,
            lora_attn_modules=list(p.attention_modules),
            lora_rank=p.rank,
            lora_alpha=p.alpha,
            lora_dropout=p.dropout,
            quantize_base=True if p.kind == "qlora" else None,
            use_dora=True if p.kind == "dora" else None,
        )
    preprocess = None
    if tuning.preprocesses_dataset():
        preprocess = t.TorchTuneInstructDataset(
            source=t.DataFormat(tuning.dataset_source) if tuning.dataset_source else None,
            split=tuning.dataset_split,
            train_on_input=tuning.train_on_input,
            new_system_prompt=tuning.system_prompt,
            column_map=tuning.column_map,
        )
    config = t.TorchTuneConfig(
        dtype=t.DataType(tuning.dtype) if tuning.dtype else None,
        batch_size=tuning.batch_size,
        epochs=tuning.epochs,
        loss=t.Loss(tuning.loss) if tuning.loss else None,
        peft_config=peft,
        dataset_preprocess_config=preprocess,
    )
    initializer = None
    if dataset_uri is not None:
        dataset: Any = (
            t.HuggingFaceDatasetInitializer(storage_uri=dataset_uri)
            if dataset_uri.startswith("hf://")
            else t.S3DatasetInitializer(storage_uri=dataset_uri)
        )
        initializer = t.Initializer(dataset=dataset)
    return list(sdk_utils.get_args_using_torchtune_config(config, initializer))


def test_ktrain_and_the_sdk_agree_on_where_the_dataset_is() -> None:
    assert DATASET_PATH == sdk_constants.DATASET_PATH
    assert INSTRUCT_DATASET == sdk_constants.TORCH_TUNE_INSTRUCT_DATASET


# (storage URI, what the SDK passes to torchtune): each expectation is the SDK's own answer
# (checked below) and names a path the initializer's download has.
DATASET_CASES = [
    # README's example: the repository itself, downloaded into /workspace/dataset (issue #24 item 11:
    # ktrain said /workspace/dataset/alpaca, which does not exist).
    ("hf://tatsu-lab/alpaca", "dataset.data_dir=/workspace/dataset/."),
    ("hf://tatsu-lab/alpaca/", "dataset.data_dir=/workspace/dataset/."),
    ("hf://tatsu-lab/alpaca/data", "dataset.data_dir=/workspace/dataset/data"),
    ("hf://org/repo/data/train.parquet", "dataset.data_files=/workspace/dataset/data/train.parquet"),
    ("hf://org/repo/v1.0/split", "dataset.data_files=/workspace/dataset/v1.0/split"),  # a dot: a file
    ("hf://tatsu-lab/alpaca?revision=main", "dataset.data_dir=/workspace/dataset/."),
    ("hf://org/repo/data#frag", "dataset.data_dir=/workspace/dataset/data"),
    ("hf://tatsu-lab", "dataset.data_dir=/workspace/dataset/."),
]


@pytest.mark.parametrize(("uri", "expected"), DATASET_CASES, ids=[c[0] for c in DATASET_CASES])
def test_hf_dataset_path_is_where_the_initializer_downloads_it(uri: str, expected: str) -> None:
    assert dataset_path_arg(uri) == expected
    assert torchtune_args(FineTuning(epochs=1), uri) == sdk_args(FineTuning(epochs=1), uri)


def test_non_hf_datasets_get_no_path_as_in_the_sdk() -> None:
    assert dataset_path_arg("s3://bucket/data") is None
    assert torchtune_args(FineTuning(epochs=1), "s3://bucket/data") == sdk_args(
        FineTuning(epochs=1), "s3://bucket/data"
    )


_segment = st.text(alphabet="abcAB09-_.~/?#:@= \t%", min_size=0, max_size=12)


@settings(max_examples=400, deadline=None)
@given(org=_segment, rest=st.lists(_segment, max_size=4))
def test_any_hf_uri_gives_the_sdks_dataset_arg(org: str, rest: list[str]) -> None:
    uri = "hf://" + org + "".join("/" + part for part in rest)
    assert torchtune_args(FineTuning(), uri) == sdk_args(FineTuning(), uri)


_peft = st.builds(
    Peft,
    kind=st.sampled_from(["lora", "qlora", "dora"]),
    rank=st.none() | st.integers(1, 64),
    alpha=st.none() | st.integers(1, 64),
    dropout=st.none() | st.sampled_from([0.0, 0.05, 0.1]),
    attention_modules=st.lists(st.sampled_from(["q_proj", "k_proj", "v_proj", "output_proj"]), min_size=1, unique=True),
    mlp=st.none() | st.just(True),
    output=st.none() | st.just(True),
)
_tuning = st.builds(
    FineTuning,
    dtype=st.none() | st.sampled_from(["bf16", "fp32"]),
    batch_size=st.none() | st.integers(1, 64),
    epochs=st.none() | st.integers(1, 9),
    loss=st.none() | st.just("torchtune.modules.loss.CEWithChunkedOutputLoss"),
    peft=st.none() | _peft,
    dataset_source=st.none() | st.sampled_from(["json", "csv", "parquet", "arrow", "text", "xml"]),
    dataset_split=st.none() | st.sampled_from(["train", "train[:10%]"]),
    train_on_input=st.none() | st.booleans(),
    system_prompt=st.none() | st.sampled_from(["You are terse.", "a=b"]),
    column_map=st.none() | st.just({"input": "question", "output": "answer"}),
)


@settings(max_examples=300, deadline=None)
@given(
    tuning=_tuning,
    uri=st.none() | st.sampled_from(["hf://tatsu-lab/alpaca", "hf://org/repo/data/x.json", "s3://b/d"]),
)
def test_every_fine_tuning_setting_gives_the_sdks_args_in_its_order(tuning: FineTuning, uri: str | None) -> None:
    assert torchtune_args(tuning, uri) == sdk_args(tuning, uri)
