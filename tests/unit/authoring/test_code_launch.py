"""How `--code` and `--pip` reach the trainer (`ktrain.authoring.code_launch`): the wrapper command,
run here with the local `sh` as the kubelet would start it, and the runtime patch that mounts the
code. The whole render, run rank by rank, is tested in tests/test_code_run.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ktrain.authoring import code_launch
from ktrain.authoring.code_launch import is_wrapped, mount_patch, mpi_fan_out, pip_arguments, wrap, wrapper_words
from ktrain.errors import UsageError
from ktrain.inputs.registry import RuntimeRegistry

VOLUME = {"name": "ktrain-code", "configMap": {"name": "job-code"}}


def as_the_kubelet_runs(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The kubelet turns `$$` into `$` in a container's command and args (no `$(VAR)` is used here)."""
    words = [w.replace("$$", "$") for w in command]
    return subprocess.run(words, capture_output=True, text=True, cwd=cwd, timeout=30, check=False)


def template_of(runtime: str) -> dict:
    return {"spec": dict(RuntimeRegistry().get(runtime).runtime.spec.template.spec)}


def test_pip_arguments_are_the_sdks_first_url_the_index_the_others_extra() -> None:
    assert pip_arguments(["torch", "x==1"], [], []) == ["torch", "x==1"]
    assert pip_arguments(["a"], ["https://i/simple", "https://e1", "https://e2"], ["req.txt"]) == [
        "--index-url",
        "https://i/simple",
        "--extra-index-url",
        "https://e1",
        "--extra-index-url",
        "https://e2",
        "-r",
        "req.txt",
        "a",
    ]


def test_the_wrapper_copies_the_code_changes_into_it_and_runs_the_command_word_for_word(tmp_path: Path) -> None:
    payload = tmp_path / "src" / "..2026_01_01"
    payload.mkdir(parents=True)
    (payload / "train.py").write_text("print('hi')\n")
    (tmp_path / "src" / "..data").symlink_to(payload.name)  # the kubelet's ConfigMap layout
    dst = tmp_path / "work"
    dst.mkdir()
    user = ["sh", "-c", 'pwd; ls; printf "<%s>\\n" "$@"; exit 7', "user", "a b", "$(touch pwned)", "'q'", "$HOME"]
    command = wrap(user, code_source=str(tmp_path / "src"), code_dir=str(dst), pip_args=[])
    assert command[:2] == ["sh", "-c"] and command[3] == "ktrain-launch"
    assert command[-len(user) :] == user  # the user's words, unquoted and unchanged
    done = as_the_kubelet_runs(command, tmp_path)
    assert done.returncode == 7, done.stderr  # the command's exit code, unchanged (exec)
    lines = done.stdout.splitlines()
    assert lines[0] == str(dst) and lines[1] == "train.py"
    assert lines[2:] == ["<a b>", "<$(touch pwned)>", "<'q'>", "<$HOME>"]
    assert not (tmp_path / "pwned").exists() and not (dst / "pwned").exists()


def test_pip_arguments_are_escaped_for_the_kubelet_and_never_reach_the_script() -> None:
    command = wrap(["python", "t.py"], code_source=None, code_dir=None, pip_args=["pkg==$(X)"])
    assert "pkg==$$(X)" in command and "$(X)" not in command[2]
    assert command[2] == code_launch.WRAPPER_SCRIPT.replace("$", "$$")
    with pytest.raises(UsageError, match="the runtime's trainer has no command to run") as err:
        wrap([], code_source=None, code_dir=None, pip_args=[])
    assert err.value.hint == "give one after `--`"


def test_wrapper_words_count_the_fan_out_and_pip_words() -> None:
    user = ["mpirun", "python", "t.py"]
    command = wrap(
        user, code_source="/s", code_dir="/d", pip_args=["--index-url", "u", "a"], fan_out=mpi_fan_out("/etc/hosts")
    )
    assert is_wrapped(command) and not is_wrapped(user) and not is_wrapped(None)
    assert command[wrapper_words(command) :] == user
    assert mpi_fan_out("/h") == ["mpirun", "--hostfile", "/h", "--map-by", "ppr:1:node"]
    plain = wrap(user, code_source=None, code_dir=None, pip_args=[])
    assert plain[wrapper_words(plain) :] == user


def test_the_mount_patch_gives_the_trainer_a_writable_copy_and_skips_the_initializers() -> None:
    patch = mount_patch(template_of("torchtune-llama3.2-1b"), VOLUME, "/workspace/code", "sha256:abc")
    assert patch["manager"] == "ktrain.io/cli-code"
    template = patch["trainingRuntimeSpec"]["template"]
    assert template["metadata"]["annotations"] == {code_launch.CODE_ANNOTATION: "sha256:abc"}
    (rjob,) = template["spec"]["replicatedJobs"]  # not the dataset and model initializers
    pod = rjob["template"]["spec"]["template"]["spec"]
    assert rjob["name"] == "node"
    assert pod["volumes"] == [VOLUME, {"name": "ktrain-workdir", "emptyDir": {}}]
    assert pod["containers"] == [
        {
            "name": "node",
            "volumeMounts": [
                {"name": "ktrain-code", "mountPath": code_launch.SOURCE_PATH, "readOnly": True},
                {"name": "ktrain-workdir", "mountPath": "/workspace/code"},
            ],
        }
    ]


def test_mpi_workers_get_the_copy_only_with_the_fan_out() -> None:
    def mounts(fan_out: bool) -> dict[str, list[dict]]:
        patch = mount_patch(template_of("deepspeed-distributed"), VOLUME, "/code", "d", fan_out=fan_out)
        rjobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        return {r["name"]: r["template"]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] for r in rjobs}

    read_only = [{"name": "ktrain-code", "mountPath": "/code", "readOnly": True}]
    assert mounts(False)["node"] == read_only  # the workers (no trainer ancestor label) see the ConfigMap
    assert mounts(False)["launcher"][1] == {"name": "ktrain-workdir", "mountPath": "/code"}
    assert mounts(True)["node"][1] == {"name": "ktrain-workdir", "mountPath": "/code"}


def test_a_runtime_without_pods_for_the_code_is_refused() -> None:
    only_initializers = {
        "spec": {
            "replicatedJobs": [
                {
                    "name": "dataset-initializer",
                    "template": {
                        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
                        "spec": {"template": {"spec": {"containers": [{"name": "dataset-initializer"}]}}},
                    },
                }
            ]
        }
    }
    with pytest.raises(UsageError, match="--code: the runtime has no trainer pods to mount the code into"):
        mount_patch(only_initializers, VOLUME, "/code", "d")
