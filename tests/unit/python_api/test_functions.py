"""`ktrain.render`, `ktrain.validate` and `ktrain.train` (ktrain/python_api/functions.py) without a
cluster: every job flag of the CLI as a keyword with the CLI's result, and `ktrain.train`'s function
called as the Kubeflow SDK calls it, `func(**func_args)`, from what is rendered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_code_run import _run_trainer

import ktrain
from ktrain.errors import ArgumentTypeError, KtrainError, UsageError, ValidationFailedError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.python_api import arguments
from ktrain.python_api.functions import train_request
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest
from ktrain.util.structs import fields
from unit.python_api.functions_to_run import record, train_fn

REPO = Path(__file__).resolve().parents[3]


def test_render_equals_the_flags_render() -> None:
    api = ktrain.render(
        runtime="torch-distributed",
        name="demo",
        num_nodes=3,
        env={"LR": "3e-4"},
        resources_per_node={"GPU": 2, "cpu": "4"},
        command=["torchrun", "train.py"],
    )
    flags = JobOverrides(
        runtime="torch-distributed",
        name="demo",
        nodes=3,
        env=[("LR", "3e-4")],
        requests={"nvidia.com/gpu": "2", "cpu": "4"},
        limits={"nvidia.com/gpu": "2", "cpu": "4"},
        command=["torchrun", "train.py"],
    )
    assert api == render_request(RenderRequest(overrides=flags), RuntimeRegistry()).result.objects


def test_a_job_as_dict_yaml_text_or_path_renders_the_same(tmp_path: Path) -> None:
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "j1"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}},
    }
    text = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j1}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {numNodes: 2}\n"
    )
    path = tmp_path / "job.yaml"
    path.write_text(text)
    assert ktrain.render(job) == ktrain.render(text) == ktrain.render(path) == ktrain.render(str(path))
    with pytest.raises(KtrainError, match="No such file"):
        ktrain.render(str(tmp_path / "missing.yaml"))  # a one-line str is a path, not YAML


def test_errors_are_the_cli_errors() -> None:
    with pytest.raises(ValidationFailedError) as err:
        ktrain.validate(
            {
                "kind": "TrainJob",
                "metadata": {"name": "x"},
                "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNode": 2}},
            }
        )
    assert "unknown field 'numNode'" in err.value.message
    assert isinstance(err.value, ValueError)  # what the Kubeflow SDK raises for bad input
    with pytest.raises(KtrainError, match="no such file or directory"):
        ktrain.render(runtime="torch-distributed", code=["/nonexistent/path"], name="x", command=["a"])


# --- every job flag of the CLI is a keyword argument --------------------------------------------

TUNE = "torchtune-llama3.2-1b"


def argv(*parts: list[str]) -> list[str]:
    return [word for part in parts for word in part]


# (CLI flags, the same in Python): each renders the same objects. Together they use every job flag
# of `ktrain job render` (test_every_job_flag_is_exercised), as the fast-path tables do.
CASES: list[tuple[list[str], dict[str, Any]]] = [
    (
        ["-r", "torch-distributed", "--name", "a", "--nodes", "2", "--nproc-per-node", "4", "--image", "img:1"],
        {"runtime": "torch-distributed", "name": "a", "num_nodes": 2, "num_proc_per_node": 4, "image": "img:1"},
    ),
    (
        argv(
            ["-r", "torch-distributed", "-n", "team-a", "-e", "LR=1", "--cpu", "2", "--memory", "4Gi"],
            ["--resource", "example.com/fpga=1", "--", "torchrun", "t.py"],
        ),
        {
            "runtime": "torch-distributed",
            "namespace": "team-a",
            "env": {"LR": "1"},
            "requests": {"cpu": "2", "memory": "4Gi"},
            "limits": {"example.com/fpga": "1"},
            "command": ["torchrun", "t.py"],
        },
    ),
    (
        argv(
            [
                "-r",
                "torch-distributed",
                "--runtime-kind",
                "ClusterTrainingRuntime",
                "-l",
                "team=a",
                "--annotation",
                "x=y",
            ],
            ["--kueue-queue", "q", "--kueue-priority-class", "urgent", "--priority-class", "high", "--suspend"],
        ),
        {
            "runtime": "torch-distributed",
            "runtime_kind": "ClusterTrainingRuntime",
            "labels": {"team": "a"},
            "annotations": {"x": "y"},
            "kueue_queue": "q",
            "kueue_priority_class": "urgent",
            "priority_class": "high",
            "suspend": True,
        },
    ),
    (
        argv(
            ["-r", "torch-distributed", "--queue", "research", "--scheduler", "kai", "--allow-extensions"],
            ["--node-selector", "pool=a100", "--toleration", "nvidia.com/gpu:NoSchedule", "--gpus", "2"],
            ["--gpu-type", "H100", "--gpu-type-label", "gpu.model"],
        ),
        {
            "runtime": "torch-distributed",
            "queue": "research",
            "scheduler": "kai",
            "allow_extensions": True,
            "node_selector": {"pool": "a100"},
            "tolerations": ["nvidia.com/gpu:NoSchedule"],
            "gpus": 2,
            "gpu_type": "H100",
            "gpu_type_label": "gpu.model",
        },
    ),
    (
        ["-r", "torch-distributed", "--elastic", "1:3", "--max-restarts", "2", "--allow-extensions"],
        {"runtime": "torch-distributed", "elastic": (1, 3), "max_restarts": 2, "allow_extensions": True},
    ),
    (
        argv(
            [
                "-r",
                "torch-distributed",
                "--max-restarts",
                "3",
                "--restart-on-preemption",
                "--fail-on-exit-code",
                "42,2",
            ],
            [
                "--restart-strategy",
                "blocking-recreate",
                "--ttl",
                "1d",
                "--checkpoint",
                "ckpt:/ckpt",
                "--",
                "python",
                "t.py",
            ],
        ),
        {
            "runtime": "torch-distributed",
            "max_restarts": 3,
            "restart_on_preemption": True,
            "fail_on_exit_codes": [2, 42],
            "restart_strategy": "BlockingRecreate",
            "ttl": 86400,
            "checkpoint": ("ckpt", "/ckpt"),
            "command": ["python", "t.py"],
        },
    ),
    (
        argv(
            ["-r", TUNE, "--dataset", "hf://tatsu-lab/alpaca", "--model", "hf://meta-llama/Llama-3.2-1B-Instruct"],
            ["--dataset-secret", "ds", "--model-secret", "ms", "--epochs", "2", "--batch-size", "4", "--dtype", "bf16"],
            ["--loss", "CEWithChunkedOutputLoss", "--lora", "rank=8,alpha=16,dropout=0.1,modules=q_proj,v_proj,mlp"],
            ["--dataset-source", "json", "--dataset-split", "train[:10%]", "--dataset-column-map", "input=q,output=a"],
            ["--train-on-input", "--system-prompt", "be brief"],
        ),
        {
            "runtime": TUNE,
            "dataset": "hf://tatsu-lab/alpaca",
            "model": "hf://meta-llama/Llama-3.2-1B-Instruct",
            "dataset_secret": "ds",
            "model_secret": "ms",
            "fine_tuning": ktrain.TorchTuneConfig(
                epochs=2,
                batch_size=4,
                dtype=ktrain.DataType.BF16,
                loss=ktrain.Loss.CEWithChunkedOutputLoss,
                peft_config=ktrain.LoraConfig(
                    lora_rank=8,
                    lora_alpha=16,
                    lora_dropout=0.1,
                    lora_attn_modules=["q_proj", "v_proj"],
                    apply_lora_to_mlp=True,
                ),
                dataset_preprocess_config=ktrain.TorchTuneInstructDataset(
                    source=ktrain.DataFormat.JSON,
                    split="train[:10%]",
                    column_map={"input": "q", "output": "a"},
                    train_on_input=True,
                    new_system_prompt="be brief",
                ),
            ),
        },
    ),
    (
        ["-r", TUNE, "--lora", "default"],
        {"runtime": TUNE, "fine_tuning": ktrain.TorchTuneConfig(peft_config=ktrain.LoraConfig())},
    ),
    (
        ["-r", TUNE, "--qlora", "modules=k_proj,output", "--gpus", "1"],
        {
            "runtime": TUNE,
            "gpus": 1,
            "fine_tuning": ktrain.TorchTuneConfig(
                peft_config=ktrain.LoraConfig(
                    lora_attn_modules=["k_proj"], apply_lora_to_output=True, quantize_base=True
                )
            ),
        },
    ),
    (
        ["-r", TUNE, "--dora", "rank=4"],
        {
            "runtime": TUNE,
            "fine_tuning": ktrain.TorchTuneConfig(peft_config=ktrain.LoraConfig(lora_rank=4, use_dora=True)),
        },
    ),
    (
        ["-r", "deepspeed-distributed", "--ssh-secret", "keys", "--name", "mpi"],
        {"runtime": "deepspeed-distributed", "ssh_secret": "keys", "name": "mpi"},
    ),
]


def _cli_objects(cli: Any, argv: list[str]) -> list[dict[str, Any]]:
    result = cli("job", "render", "-o", "json", *argv)
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    return list(document["items"]) if document.get("kind") == "List" else [document]


@pytest.mark.parametrize(("argv", "keywords"), CASES, ids=[" ".join(a[:4]) for a, _ in CASES])
def test_each_job_flag_and_its_keyword_render_the_same(cli: Any, argv: list[str], keywords: dict[str, Any]) -> None:
    assert ktrain.render(**keywords) == _cli_objects(cli, argv)


def test_files_templates_and_code_flags_have_their_keywords(cli: Any, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    runtimes = tmp_path / "runtimes"
    runtimes.mkdir()
    runtime = (REPO / "runtimes" / "torch-distributed.yaml").read_text()
    runtime = runtime.replace("name: torch-distributed", "name: mine")
    (runtimes / "mine.yaml").write_text(runtime)
    (tmp_path / "other.yaml").write_text(runtime.replace("name: mine", "name: other"))
    (tmp_path / "patch.yaml").write_text("template:\n  metadata:\n    labels: {patched: 'yes'}\n")
    (tmp_path / "values.yaml").write_text("nodes: 3\n")
    (tmp_path / "job.yaml.j2").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tpl}\n"
        "spec:\n  runtimeRef: {name: other}\n  trainer: {numNodes: {{ nodes }}, image: '{{ image }}'}\n"
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('hi')\n")
    (project / "secret.env").write_text("A=1\n")
    (project / "requirements.txt").write_text("rich\n")
    monkeypatch.chdir(project)
    argv = ["-f", str(tmp_path / "job.yaml.j2"), "--values", str(tmp_path / "values.yaml"), "--set", "image=i:2"]
    argv += ["--runtime-file", str(tmp_path / "other.yaml"), "--runtimes-dir", str(runtimes)]
    argv += ["--patch", str(tmp_path / "patch.yaml"), "--code", ".", "--code-include", "*.env"]
    argv += ["--pip", "numpy", "--requirements", "requirements.txt", "--pip-index-url", "https://mirror/simple"]
    argv += ["--", "torchrun", "train.py"]
    keywords = {
        "values_files": [tmp_path / "values.yaml"],
        "sets": ["image=i:2"],
        "runtime_files": [str(tmp_path / "other.yaml")],
        "runtimes_dirs": [runtimes],
        "patch_files": [tmp_path / "patch.yaml"],
        "code": ["."],
        "code_include": ["*.env"],
        "packages_to_install": ["numpy"],
        "requirements": ["requirements.txt"],
        "pip_index_urls": ["https://mirror/simple"],
        "command": ["torchrun", "train.py"],
    }
    objects = ktrain.render(tmp_path / "job.yaml.j2", **keywords)
    assert objects == _cli_objects(cli, argv)
    assert any("secret.env" in str(o.get("data")) for o in objects if o["kind"] == "ConfigMap")
    assert ktrain.render(runtime="mine", runtimes_dirs=[runtimes], name="m")[0]["metadata"]["name"] == "m"


# Every job flag (a JobInput field) and where its Python keyword is exercised above.
FLAG_KEYWORDS = {
    "command": "command",
    "filename": "job (the first argument)",
    "values": "values_files",
    "sets": "sets",
    "runtime": "runtime",
    "runtime_kind": "runtime_kind",
    "runtime_file": "runtime_files",
    "runtimes_dir": "runtimes_dirs",
    "name": "name",
    "namespace": "namespace",
    "nodes": "num_nodes",
    "nproc_per_node": "num_proc_per_node",
    "image": "image",
    "env": "env",
    "resource": "limits",
    "cpu": "requests",
    "memory": "requests",
    "label": "labels",
    "annotation": "annotations",
    "dataset": "dataset",
    "model": "model",
    "dataset_secret": "dataset_secret",
    "model_secret": "model_secret",
    "queue": "queue",
    "kueue_queue": "kueue_queue",
    "kueue_priority_class": "kueue_priority_class",
    "priority_class": "priority_class",
    "scheduler": "scheduler",
    "node_selector": "node_selector",
    "toleration": "tolerations",
    "gpus": "gpus",
    "gpu_type": "gpu_type",
    "gpu_type_label": "gpu_type_label",
    "elastic": "elastic",
    "max_restarts": "max_restarts",
    "restart_on_preemption": "restart_on_preemption",
    "fail_on_exit_code": "fail_on_exit_codes",
    "restart_strategy": "restart_strategy",
    "ttl": "ttl",
    "checkpoint": "checkpoint",
    # the controller's configuration, not a job's: the Python API reads them from the environment
    "feature_gates": "the KTRAIN_FEATURE_GATES variable",
    "status_server": "the KTRAIN_STATUS_SERVER variable",
    "epochs": "fine_tuning",
    "batch_size": "fine_tuning",
    "dtype": "fine_tuning",
    "loss": "fine_tuning",
    "lora": "fine_tuning",
    "qlora": "fine_tuning",
    "dora": "fine_tuning",
    "dataset_source": "fine_tuning",
    "dataset_split": "fine_tuning",
    "dataset_column_map": "fine_tuning",
    "train_on_input": "fine_tuning",
    "system_prompt": "fine_tuning",
    "code": "code",
    "code_include": "code_include",
    "requirements": "requirements",
    "pip": "packages_to_install",
    "pip_index_url": "pip_index_urls",
    "patch": "patch_files",
    "suspend": "suspend",
    "ssh_secret": "ssh_secret",
    "allow_extensions": "allow_extensions",
    "kubeconfig": "Client(kubeconfig=) / train(kubeconfig=)",
    "context": "Client(context=) / train(context=)",
}


def test_every_job_flag_is_exercised() -> None:
    """A new job flag needs its keyword (derived from JobOverrides) and a case above."""
    from ktrain.cli.jobinput import JobInput

    assert {f.name for f in fields(JobInput)} == set(FLAG_KEYWORDS)
    keywords = {*arguments.job_keywords(), *arguments.EXTRA_KEYWORDS, "runtime_files", "runtimes_dirs"}
    keywords |= {"allow_extensions", "ssh_secret"}
    plain = {k for k in FLAG_KEYWORDS.values() if " " not in k}
    assert plain <= keywords


def test_render_keeps_content_derived_names() -> None:
    first = ktrain.render(runtime="torch-distributed", num_nodes=2)
    assert first == ktrain.render(runtime="torch-distributed", num_nodes=2)  # GitOps relies on it
    assert first[0]["metadata"]["name"].startswith("torch-")


# --- func(**func_args) ------------------------------------------------------------------------


def test_train_calls_the_function_with_its_args_as_keywords_on_every_rank(tmp_path: Path) -> None:
    request = train_request(
        train_fn, runtime="torch-distributed", func_args={"lr": 0.01, "epochs": 2}, num_nodes=2, name="fn"
    )
    objects = render_request(request, RuntimeRegistry()).result.objects
    script = next(iter(objects[0]["data"].values()))
    assert script.splitlines()[-1] == "train_fn(**{'lr': 0.01, 'epochs': 2})"  # the SDK's call
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["lr 0.01 epochs 2 rank 0", "lr 0.01 epochs 2 rank 1"]


def test_train_failure_exit_code_comes_back(tmp_path: Path) -> None:
    request = train_request(train_fn, runtime="torch-distributed", func_args={"lr": 1, "fail": True}, name="f")
    result = _run_trainer(render_request(request, RuntimeRegistry()).result.objects, tmp_path)
    assert result.returncode == 7


def test_func_args_arrive_as_the_same_python_values(tmp_path: Path) -> None:
    args = {"t": (1, 2.5), "s": {"a", "b"}, "n": None, "q": 'it\'s "$HOME" `x` \\n', "big": 2**70, "d": {"k": [True]}}
    request = train_request(record, runtime="torch-distributed", func_args=args, name="v", num_nodes=2)
    result = _run_trainer(render_request(request, RuntimeRegistry()).result.objects, tmp_path)
    assert result.returncode == 0, result.stderr
    import ast

    assert [ast.literal_eval(line) for line in result.stdout.splitlines()] == [args, args]


def test_train_uses_the_runtime_launcher() -> None:
    for runtime, launcher in (
        ("torch-distributed", ["torchrun", "ktrain_train.py"]),
        ("deepspeed-distributed", ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python3", "ktrain_train.py"]),
        ("xgboost-distributed", ["python3", "ktrain_train.py"]),
    ):
        request = train_request(train_fn, runtime=runtime, name="fn", func_args={"lr": 1}, ssh_secret="k")
        objects = render_request(request, RuntimeRegistry()).result.objects
        jobset = next(o for o in objects if o["kind"] == "JobSet")
        commands = [
            ct["command"]
            for rjob in jobset["spec"]["replicatedJobs"]
            for ct in rjob["template"]["spec"]["template"]["spec"]["containers"]
            if ct["name"] == "node" and ct.get("command", [None])[0] == "sh"
        ]
        assert commands and commands[0][-len(launcher) :] == launcher, runtime


def test_a_function_cannot_run_on_a_torchtune_runtime() -> None:
    with pytest.raises(UsageError, match="a torchtune runtime runs its own recipe"):
        render_request(train_request(train_fn, runtime=TUNE, func_args={"lr": 1}), RuntimeRegistry())


def test_train_refuses_what_the_function_replaces() -> None:
    for keyword in ("command", "code"):
        with pytest.raises(ArgumentTypeError, match=f"does not take {keyword}="):
            train_request(train_fn, runtime="torch-distributed", **{keyword: ["x"]})
