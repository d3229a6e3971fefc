"""What a TAB press offers, through the same entry the shell scripts call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ktrain.completion.complete import answer, split_line
from unit.completion.trees import FUTURE_TREE, values_of

BUNDLED = {
    "deepspeed-distributed",
    "jax-distributed",
    "mlx-distributed",
    "torch-distributed",
    "xgboost-distributed",
    "torchtune-llama3.2-1b",
    "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
    # ktrain's own, for Training Operator v1 frameworks (issue #14)
    "tensorflow-distributed",
    "paddle-distributed",
    "mxnet-distributed",
}


def complete(line: str, shell: str = "bash", env: dict[str, str] | None = None) -> list[str]:
    """Run the console entry exactly as the shell scripts do; return its output lines."""
    out = subprocess.run(
        [sys.executable, "-m", "ktrain", line],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "_KTRAIN_COMPLETE": shell, **(env or {})},
    )
    assert out.stderr == ""
    return out.stdout.splitlines()


def test_split_line_keeps_quotes_and_the_incomplete_word() -> None:
    assert split_line("ktrain job render --env 'A=b c' --runtime to") == (
        ["ktrain", "job", "render", "--env", "A=b c", "--runtime"],
        "to",
    )
    assert split_line("ktrain job ") == (["ktrain", "job"], "")
    assert split_line('ktrain "unclosed') == (["ktrain"], "unclosed")


def test_runtime_option_completes_bundled_runtime_names_through_the_entry_point() -> None:
    lines = complete("ktrain job render --runtime ")
    assert lines[0] == ":values"
    assert set(lines[1:]) == BUNDLED
    assert complete("ktrain render -r torch-")[1:] == ["torch-distributed"]


def test_bash_gets_the_part_after_the_equals_sign_zsh_the_whole_word() -> None:
    assert complete("ktrain job render --runtime=jax")[1:] == ["jax-distributed"]
    zsh = complete("ktrain job render --runtime=jax", shell="zsh")
    assert zsh[1].split("\t")[0] == "--runtime=jax-distributed"


def test_user_runtimes_from_flags_and_env_path_are_offered(tmp_path: Path) -> None:
    mine = tmp_path / "rt"
    mine.mkdir()
    (mine / "a.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: my-own}\n"
        "spec: {template: {spec: {}}}\n"
    )
    assert "my-own" in complete(f"ktrain job render --runtimes-dir {mine} --runtime my")
    assert complete("ktrain job render --runtime my-", env={"KTRAIN_RUNTIMES_PATH": str(mine)})[1:] == ["my-own"]


def test_commands_options_and_output_formats() -> None:
    assert {"job", "runtime", "render", "completion"} <= set(complete("ktrain ")[1:])
    options = complete("ktrain job render --r")[1:]
    assert {
        "--runtime",
        "--runtime-kind",
        "--runtime-file",
        "--runtimes-dir",
        "--resource",
        "--requirements",
        "--restart-on-preemption",
        "--restart-strategy",
    } == set(options)
    assert complete("ktrain job render -o ")[1:] == ["yaml", "json", "name"]
    assert complete("ktrain runtime list -o ")[1:] == ["table", "wide", "yaml", "json", "name"]
    assert complete("ktrain job render --resource nv") == [":nospace", "nvidia.com/gpu="]
    assert set(complete("ktrain runtime show ")[1:]) == BUNDLED


def test_file_options_and_the_trainer_command_use_the_shells_file_completion() -> None:
    assert complete("ktrain job render -f ./jo") == [":files", "./jo"]
    assert complete("ktrain job render --runtime-file=run") == [":files", "run"]
    assert complete("ktrain job render --runtime-file=run", shell="fish") == [":files", "run", "--runtime-file="]
    assert complete("ktrain job render --runtimes-dir ")[0] == ":dirs"
    assert complete("ktrain job render --runtime x -- torchrun tr")[0] == ":files"


def test_a_broken_request_prints_no_traceback(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ktrain"],
        capture_output=True,
        text=True,
        env={**os.environ, "_KTRAIN_COMPLETE": "bash", "KTRAIN_RUNTIMES_PATH": str(tmp_path / "x")},
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.yaml").write_text("kind: [unclosed\n")
    lines = complete("ktrain job render --runtime ", env={"KTRAIN_RUNTIMES_PATH": str(bad)})
    assert set(lines[1:]) == BUNDLED


def test_step_set_and_job_names_complete_once_the_tree_has_those_options() -> None:
    result = answer(FUTURE_TREE, "ktrain job logs --step ")
    assert values_of(result) == ["dataset-initializer", "model-initializer", "launcher", "node"]
    result = answer(FUTURE_TREE, "ktrain job render --set trainer.numN")
    assert result.directive == "nospace" and values_of(result) == ["trainer.numNodes="]
    assert "metadata.name=" in values_of(answer(FUTURE_TREE, "ktrain job render --set meta"))
    # -f is a flag on `job logs`: the next word is the job name, not a file.
    assert answer(FUTURE_TREE, "ktrain job logs -f ").directive == "values"
