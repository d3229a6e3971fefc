"""Fine-tuning flags -> the `tune run` overrides of a torchtune TrainJob.

Mirrors the Kubeflow SDK's `BuiltinTrainer(config=TorchTuneConfig(...))`: the same settings give
the same `spec.trainer.command` / `spec.trainer.args` as the SDK's
`get_trainer_cr_from_builtin_trainer` and `get_args_using_torchtune_config`
(kubeflow/sdk `kubeflow/trainer/backends/kubernetes/utils.py`; types in
`kubeflow/trainer/types/types.py`), in the same order and spelling (Python's `True`, a dict's
`repr` for the column map), so a job moves between the SDK and ktrain unchanged. The Trainer
controller's torchtune plugin then turns `tune run` + these args into the full command.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from ktrain.errors import UsageError

ENTRYPOINT = ["tune", "run"]
# SDK `Loss` enum: its member names are what users write; the values are what torchtune reads.
LOSSES = {"CEWithChunkedOutputLoss": "torchtune.modules.loss.CEWithChunkedOutputLoss"}
DTYPES = ("bf16", "fp32")  # SDK `DataType`
DATA_FORMATS = ("json", "csv", "parquet", "arrow", "text", "xml")  # SDK `DataFormat`
DATASET_PATH = "/workspace/dataset"  # SDK constants.DATASET_PATH: where the dataset initializer writes
INSTRUCT_DATASET = "torchtune.datasets.instruct_dataset"  # SDK constants.TORCH_TUNE_INSTRUCT_DATASET
ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "output_proj")
DEFAULT_ATTENTION_MODULES = ("q_proj", "v_proj", "output_proj")  # SDK LoraConfig.lora_attn_modules
PEFT_KINDS = ("lora", "qlora", "dora")
LORA_KEYS = ("rank", "alpha", "dropout", "modules")


@dataclass
class Peft:
    """SDK `LoraConfig`: `--lora` / `--qlora` (quantize_base) / `--dora` (use_dora)."""

    kind: str = "lora"
    rank: int | None = None
    alpha: int | None = None
    dropout: float | None = None
    attention_modules: list[str] = field(default_factory=lambda: list(DEFAULT_ATTENTION_MODULES))
    mlp: bool | None = None
    output: bool | None = None
    # The SDK's quantize_base / use_dora as given from Python (False included); None: what `kind` says.
    quantize_base: bool | None = None
    use_dora: bool | None = None


@dataclass
class FineTuning:
    """SDK `TorchTuneConfig` (less num_nodes / resources_per_node, which are `--nodes` and
    `--cpu/--memory/--resource/--gpus`) with its `TorchTuneInstructDataset`."""

    dtype: str | None = None
    batch_size: int | None = None
    epochs: int | None = None
    loss: str | None = None
    peft: Peft | None = None
    dataset_source: str | None = None
    dataset_split: str | None = None
    train_on_input: bool | None = None
    system_prompt: str | None = None
    column_map: dict[str, str] | None = None
    # An SDK TorchTuneInstructDataset was given (even with no field set): the instruct dataset is used.
    instruct_dataset: bool = False

    def preprocesses_dataset(self) -> bool:
        return self.instruct_dataset or any(
            value is not None
            for value in (
                self.dataset_source,
                self.dataset_split,
                self.train_on_input,
                self.system_prompt,
                self.column_map,
            )
        )


def parse_peft(kind: str, text: str) -> Peft:
    """`--lora rank=16,alpha=32,dropout=0.05,modules=q_proj,v_proj,mlp,output`: every item after
    `modules=` that has no `=` is one more module; `mlp` and `output` are the SDK's
    apply_lora_to_mlp / apply_lora_to_output. An empty value (`--lora ''`) keeps the defaults."""
    flag = f"--{kind}"
    peft = Peft(kind=kind)
    modules: list[str] | None = None
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            if modules is None:
                raise UsageError(
                    f"{flag}: {item!r} is not KEY=VALUE",
                    hint=f"keys: {', '.join(LORA_KEYS)}; e.g. {flag} rank=16,alpha=32,modules=q_proj,v_proj,mlp",
                )
            modules.append(key)
            continue
        value = value.strip()
        if key == "modules":
            modules = [value] if value else []
        elif key in ("rank", "alpha"):
            setattr(peft, key, _positive_int(flag, key, value))
        elif key == "dropout":
            peft.dropout = _probability(flag, value)
        else:
            raise UsageError(
                f"{flag}: unknown key {key!r}", hint=f"keys: {', '.join(LORA_KEYS)} (e.g. {flag} rank=16,alpha=32)"
            )
    if modules is not None:
        attention: list[str] = []
        for module in modules:
            if module == "mlp":
                peft.mlp = True
            elif module == "output":
                peft.output = True
            elif module in ATTENTION_MODULES:
                if module not in attention:
                    attention.append(module)
            else:
                raise UsageError(
                    f"{flag}: unknown module {module!r}",
                    hint=f"modules: {', '.join(ATTENTION_MODULES)}, mlp, output",
                )
        if not attention:
            # Without lora_attn_modules neither the SDK nor the controller sees a LoRA job.
            raise UsageError(
                f"{flag}: modules= needs at least one attention module",
                hint=f"one or more of {', '.join(ATTENTION_MODULES)}, plus mlp / output if wanted",
            )
        peft.attention_modules = attention
    return peft


def _positive_int(flag: str, key: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1 or int(value) > 2**31 - 1:
        raise UsageError(f"{flag}: {key} must be a positive integer, not {value!r}")
    return int(value)


def _probability(flag: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number < 1.0 or value.lower() in ("nan", "inf"):
        raise UsageError(f"{flag}: dropout must be a number in [0, 1), not {value!r}")
    return number


def parse_column_map(text: str) -> dict[str, str]:
    """`--dataset-column-map input=question,output=answer` (SDK TorchTuneInstructDataset.column_map)."""
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(
                f"--dataset-column-map: {item!r} is not COLUMN=NAME", hint="e.g. input=question,output=answer"
            )
        mapping[key.strip()] = value.strip()
    return mapping


def parse_loss(text: str) -> str:
    if text in LOSSES:
        return LOSSES[text]
    if text in LOSSES.values():
        return text
    raise UsageError(f"--loss: unknown loss {text!r}", hint=f"one of: {', '.join(LOSSES)}")


def _python_str(value: object) -> str:
    # The SDK formats with f-strings: Python's spelling of booleans, floats and dicts.
    return str(value)


def peft_args(peft: Peft) -> list[str]:
    """SDK `get_args_from_peft_config`, same field order."""
    fields = (
        ("model.apply_lora_to_mlp", peft.mlp),
        ("model.apply_lora_to_output", peft.output),
        ("model.lora_rank", peft.rank),
        ("model.lora_alpha", peft.alpha),
        ("model.lora_dropout", peft.dropout),
        ("model.quantize_base", peft.quantize_base if peft.quantize_base is not None else peft.kind == "qlora" or None),
        ("model.use_dora", peft.use_dora if peft.use_dora is not None else peft.kind == "dora" or None),
    )
    args = [f"{name}={_python_str(value)}" for name, value in fields if value is not None]
    if peft.attention_modules:
        args.append(f"model.lora_attn_modules=[{','.join(peft.attention_modules)}]")
    return args


def dataset_path_arg(storage_uri: str | None) -> str | None:
    """Where `tune run` finds a Hugging Face dataset the initializer downloaded (SDK: only for an
    `hf://` dataset initializer), byte for byte as the SDK's `get_args_using_torchtune_config`.

    The dataset initializer downloads the whole repository `hf://ORG/REPO` into DATASET_PATH
    (kubeflow/trainer `pkg/initializers/dataset/huggingface.py`: `snapshot_download(repo_id=...,
    local_dir=DATASET_PATH)`), so the repository is DATASET_PATH itself (the SDK writes
    `/workspace/dataset/.`), and `hf://ORG/REPO/SUB/PATH` names `SUB/PATH` inside it: a path with a
    dot in it is a file (`dataset.data_files`), anything else a directory (`dataset.data_dir`)."""
    if not storage_uri or not storage_uri.startswith("hf://"):
        return None
    # urllib.parse.urlsplit, as the SDK calls it (not imported: it costs the render `re`): tabs and
    # newlines dropped, the netloc (ORG) up to the first of "/?#", then the fragment and the query
    # cut off the path, which starts with "/REPO".
    rest = storage_uri[len("hf://") :].replace("\t", "").replace("\r", "").replace("\n", "")
    cut = min((i for i in (rest.find(ch) for ch in "/?#") if i >= 0), default=len(rest))
    path = rest[cut:].split("#", 1)[0].split("?", 1)[0]
    parts = path.strip("/").split("/")
    relative = "/".join(parts[1:]) if len(parts) > 1 else "."
    key = "data_files" if relative != "." and "." in relative else "data_dir"
    # posixpath.join, as the SDK's os.path.join on Linux (a relative part starting with "/" wins).
    return f"dataset.{key}={posixpath.join(DATASET_PATH, relative)}"


def torchtune_args(tuning: FineTuning, dataset_uri: str | None) -> list[str]:
    """SDK `get_args_using_torchtune_config`: the trainer args for these settings."""
    args: list[str] = []
    if tuning.dtype:
        args.append(f"dtype={tuning.dtype}")
    if tuning.batch_size:
        args.append(f"batch_size={tuning.batch_size}")
    if tuning.epochs:
        args.append(f"epochs={tuning.epochs}")
    if tuning.loss:
        args.append(f"loss={tuning.loss}")
    path = dataset_path_arg(dataset_uri)
    if path:
        args.append(path)
    if tuning.peft is not None:
        args += peft_args(tuning.peft)
    if tuning.preprocesses_dataset():
        args.append(f"dataset={INSTRUCT_DATASET}")
        if tuning.dataset_source:
            args.append(f"dataset.source={tuning.dataset_source}")
        if tuning.dataset_split:
            args.append(f"dataset.split={tuning.dataset_split}")
        if tuning.train_on_input is not None:
            args.append(f"dataset.train_on_input={_python_str(tuning.train_on_input)}")
        if tuning.system_prompt:
            args.append(f"dataset.new_system_prompt={tuning.system_prompt}")
        if tuning.column_map:
            args.append(f"dataset.column_map={_python_str(tuning.column_map)}")
    return args


def merge_args(existing: list[str], new: list[str]) -> list[str]:
    """The job file's own `key=value` overrides, with the flags' values winning key by key
    (torchtune reads each key once); items that are not overrides stay where they are."""
    keys = {arg.split("=", 1)[0] for arg in new}
    kept = [arg for arg in existing if not ("=" in arg and arg.split("=", 1)[0] in keys)]
    return kept + new
