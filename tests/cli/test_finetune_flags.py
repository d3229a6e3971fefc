"""Fine-tuning and placement flags from the command line: the same objects as the TrainJob the
Kubeflow SDK builds for the same settings, and clear errors for flags that do not apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# What `TrainerClient().train(runtime=torchtune-llama3.2-1b, trainer=BuiltinTrainer(config=TorchTuneConfig(
# dtype=DataType.BF16, batch_size=4, epochs=2, peft_config=LoraConfig(lora_rank=16, lora_alpha=32))),
# initializer=Initializer(dataset=HuggingFaceDatasetInitializer(storage_uri="hf://tatsu-lab/alpaca")))`
# submits, written by reading kubeflow/sdk kubeflow/trainer/backends/kubernetes/utils.py
# (get_trainer_cr_from_builtin_trainer: command = the runtime's trainer command, `tune run` for
# torchtune runtimes (constants.TORCH_TUNE_COMMAND); args = get_args_using_torchtune_config) and
# backend.py (runtimeRef by name; the dataset initializer's storageUri).
SDK_TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: ft
spec:
  runtimeRef:
    name: torchtune-llama3.2-1b
  initializer:
    dataset:
      storageUri: hf://tatsu-lab/alpaca
  trainer:
    command: [tune, run]
    args:
    - dtype=bf16
    - batch_size=4
    - epochs=2
    - dataset.data_dir=/workspace/dataset/.
    - model.lora_rank=16
    - model.lora_alpha=32
    - model.lora_attn_modules=[q_proj,v_proj,output_proj]
"""


def test_lora_flags_render_the_trainjob_the_sdk_builds(cli: Any, tmp_path: Path) -> None:
    job = tmp_path / "sdk.yaml"
    job.write_text(SDK_TRAINJOB)
    sdk = cli("job", "render", "-f", str(job))
    flags = cli(
        "job",
        "render",
        "-r",
        "torchtune-llama3.2-1b",
        "--name",
        "ft",
        "--lora",
        "rank=16,alpha=32",
        "--epochs",
        "2",
        "--batch-size",
        "4",
        "--dtype",
        "bf16",
        "--dataset",
        "hf://tatsu-lab/alpaca",
    )
    assert sdk.exit_code == 0 and flags.exit_code == 0, (sdk.stderr, flags.stderr)
    assert flags.stdout == sdk.stdout
    node = next(
        r
        for d in yaml.safe_load_all(flags.stdout)
        if d["kind"] == "JobSet"
        for r in d["spec"]["replicatedJobs"]
        if r["name"] == "node"
    )
    container = node["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][3:6] == ["lora_finetune_distributed", "--config", "llama3_2/1B_lora"]


def test_dataset_preprocessing_flags_reach_tune_run(cli: Any) -> None:
    r = cli(
        "job",
        "render",
        "-r",
        "torchtune-llama3.2-1b",
        "--name",
        "ft",
        "--dataset-source",
        "json",
        "--dataset-split",
        "train[:10%]",
        "--no-train-on-input",
        "--system-prompt",
        "Be terse.",
        "--dataset-column-map",
        "input=q,output=a",
        "--loss",
        "CEWithChunkedOutputLoss",
    )
    assert r.exit_code == 0, r.stderr
    args = next(
        c.get("args")
        for d in yaml.safe_load_all(r.stdout)
        if d["kind"] == "JobSet"
        for rj in d["spec"]["replicatedJobs"]
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]
        if c.get("args")
    )
    assert args == [
        "loss=torchtune.modules.loss.CEWithChunkedOutputLoss",
        "dataset=torchtune.datasets.instruct_dataset",
        "dataset.source=json",
        "dataset.split=train[:10%]",
        "dataset.train_on_input=False",
        "dataset.new_system_prompt=Be terse.",
        "dataset.column_map={'input': 'q', 'output': 'a'}",
    ]


def test_a_fine_tuning_flag_on_another_runtime_names_the_runtimes_that_take_it(cli: Any) -> None:
    r = cli("job", "render", "-r", "torch-distributed", "--epochs", "2", "--", "torchrun", "t.py")
    assert r.exit_code == 2, r.stderr
    assert "need a torchtune runtime" in r.stderr and "torchtune-llama3.2-1b" in r.stderr


def test_controller_rules_still_apply_to_fine_tuning(cli: Any) -> None:
    # V23 (ENGINE.md): LoRA is refused for multi-node torchtune, before anything is printed
    r = cli("job", "render", "-r", "torchtune-llama3.2-1b", "--lora", "rank=8", "--nodes", "2")
    assert r.exit_code == 3 and r.stdout == "", r.stderr
    assert "must be 1 for llama3_2/1B model" in r.stderr


def test_bad_flag_values_are_usage_errors(cli: Any) -> None:
    for argv, words in (
        (["--dtype", "fp16"], "--dtype must be bf16 or fp32"),
        (["--lora", "rank=x"], "rank must be a positive integer"),
        (["--lora", "rank=4", "--qlora", "rank=4"], "one of --lora, --qlora and --dora"),
        (["--toleration", "gpu:Sometimes"], "unknown effect"),
        (["--node-selector", "pool"], "is not KEY=VALUE"),
        (["--elastic", "4:2", "--allow-extensions"], "1 <= MIN <= MAX"),
    ):
        r = cli("job", "render", "-r", "torchtune-llama3.2-1b", *argv)
        assert r.exit_code == 2 and words in r.stderr, (argv, r.stderr)
        assert "Traceback" not in r.stderr


def test_placement_flags_render_and_pass_through_the_flags_patch(cli: Any) -> None:
    r = cli(
        "job",
        "render",
        "-r",
        "torch-distributed",
        "--name",
        "p",
        "--node-selector",
        "pool=a100",
        "--toleration",
        "nvidia.com/gpu:NoSchedule",
        "--gpus",
        "2",
        "--gpu-type",
        "A100",
        "--kueue-queue",
        "q",
        "--",
        "torchrun",
        "t.py",
    )
    assert r.exit_code == 0, r.stderr
    jobset = next(d for d in yaml.safe_load_all(r.stdout) if d["kind"] == "JobSet")
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "a100", "nvidia.com/gpu.product": "A100"}
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "q"
