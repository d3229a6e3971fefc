"""Which script a trainer command runs (issue #24 item 3): read only when sure, so that a script
missing from `--code` is an error at render time, never a false alarm."""

from __future__ import annotations

import pytest

from ktrain.authoring.code_command import check_script, script_of
from ktrain.errors import UsageError

SURE = [
    (["python", "train.py", "--lr", "1"], ("file", "train.py")),
    (["python3", "-u", "-W", "ignore", "src/train.py"], ("file", "src/train.py")),
    (["python3.11", "-Wignore", "-uB", "train.py"], ("file", "train.py")),
    (["python", "-m", "pkg.train"], ("module", "pkg.train")),
    (["torchrun", "--nproc_per_node=4", "--nnodes", "2", "train.py"], ("file", "train.py")),
    (["torchrun", "--standalone", "--nproc-per-node", "8", "-m", "pkg.main"], ("module", "pkg.main")),
    (["python", "-m", "torch.distributed.run", "--nnodes=1", "train.py"], ("file", "train.py")),
    (["deepspeed", "--num_gpus", "2", "ds_train.py", "--deepspeed"], ("file", "ds_train.py")),
    (["accelerate", "launch", "--num_processes", "2", "--multi_gpu", "train.py"], ("file", "train.py")),
    (["mpirun", "-np", "4", "--allow-run-as-root", "python", "x.py"], ("file", "x.py")),
    (
        ["mpirun", "--hostfile", "/etc/mpi/hostfile", "--mca", "btl", "tcp", "-x", "A", "python3", "x.py"],
        ("file", "x.py"),
    ),
    (["bash", "run.sh"], ("file", "run.sh")),
    (["sh", "-e", "scripts/run.sh", "a"], ("file", "scripts/run.sh")),
    (["./run.sh"], ("file", "./run.sh")),
    (["env", "A=1", "B=2", "python", "t.py"], ("file", "t.py")),
]
NOT_SURE = [
    ["python", "-c", "print(1)"],
    ["python", "-"],
    ["python", "--frobnicate", "x.py"],  # an option python may take a value for: unknown
    ["torchrun", "--brand-new-flag", "x", "train.py"],
    ["torchrun", "--no-python", "train.sh"],
    ["deepspeed", "--unknown", "x.py"],
    ["mpirun", "--weird", "python", "x.py"],
    ["bash", "-c", "python train.py"],
    ["train"],  # looked up on PATH
    ["/usr/bin/python", "-c", "1"],
    ["accelerate", "config"],
    [],
]


@pytest.mark.parametrize("command, expected", SURE)
def test_the_script_a_launcher_runs_is_found(command: list[str], expected: tuple[str, str]) -> None:
    assert script_of(command) == expected


@pytest.mark.parametrize("command", NOT_SURE)
def test_commands_it_cannot_read_for_sure_give_no_answer(command: list[str]) -> None:
    assert script_of(command) is None


SENT = ["train.py", "helpers.py", "pkg/__init__.py", "pkg/main.py", "run.sh", "src/model.py"]


@pytest.mark.parametrize(
    "command",
    [
        ["torchrun", "train.py"],
        ["python", "./train.py"],
        ["python", "/opt/ktrain/code/train.py"],
        ["python", "-m", "pkg.main"],
        ["python", "-m", "pkg"],
        ["python", "-m", "torch.utils.collect_env"],  # not a package of the code directory
        ["python", "/workspace/train.py"],  # absolute: the image's
        ["python", "../up.py"],
        ["python", "$(SCRIPT)"],  # the kubelet expands it
        ["python", "src"],  # a directory (its __main__.py)
    ],
)
def test_a_script_that_was_sent_or_not_ours_passes(command: list[str]) -> None:
    check_script(command, SENT, "/opt/ktrain/code")


def test_a_missing_script_is_an_error_with_a_did_you_mean() -> None:
    with pytest.raises(UsageError) as err:
        check_script(["torchrun", "--nproc_per_node=2", "trian.py"], SENT, "/opt/ktrain/code")
    assert "runs trian.py, which is not among the 6 files sent" in err.value.message
    assert "did you mean train.py?" in (err.value.hint or "")


def test_the_old_subfolder_layout_is_pointed_at() -> None:
    """`--code .` beside proj/ while the command names train.py: proj/train.py is what was meant."""
    with pytest.raises(UsageError) as err:
        check_script(["python", "train.py"], ["proj/train.py", "proj/util.py"], "/opt/ktrain/code")
    assert "did you mean proj/train.py?" in (err.value.hint or "")
    assert "its files at the top" in (err.value.hint or "")


def test_a_missing_module_of_a_sent_package_is_an_error() -> None:
    with pytest.raises(UsageError, match=r"runs module pkg\.tarin"):
        check_script(["python", "-m", "pkg.tarin"], SENT, "/opt/ktrain/code")
