"""Run what we generate: the code ConfigMaps are laid out as the pod's projected volume would show
them, and the rendered trainer command runs with the local `sh` and `python` — the launcher
(torchrun, mpirun) replaced by a stub that runs the program once per rank with the rank's env.
The user's code must run, see its arguments, and its exit code must come back unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.authoring.code_launch import SOURCE_PATH
from ktrain.inputs.code_bundle import MOUNT_PATH
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest
from tests.pod_run import run_container, trainer_pod, write_exe

TRAIN = """\
import os, sys
from helpers import greet
print(greet(os.environ.get("RANK", "?")), sys.argv[1:], os.getcwd() == os.environ["EXPECTED_CWD"])
sys.exit(int(os.environ.get("EXIT_CODE", "0")) if os.environ.get("RANK") in ("0", None) else 0)
"""
HELPERS = "def greet(rank):\n    return f'hello from rank {rank}'\n"

# Stubs for the launchers: run the program once per rank, with the rank in RANK.
TORCHRUN = """#!{python}
import os, subprocess, sys
argv = sys.argv[1:]
args = argv[next(i for i, a in enumerate(argv) if not a.startswith("--")):]  # torchrun's own options first
codes = [subprocess.call([sys.executable, *args], env={{**os.environ, "RANK": str(r)}})
         for r in range(int(os.environ["PET_NNODES"]))]
sys.exit(max(codes))
"""
MPIRUN = """#!{python}
import os, subprocess, sys
argv = sys.argv[1:]
while argv and argv[0].startswith("-"):
    argv = argv[2:] if argv[0] in ("--hostfile", "-np") else argv[1:]
codes = [subprocess.call(argv, env={{**os.environ, "RANK": str(r)}}) for r in range(2)]
sys.exit(max(codes))
"""
PYTHON = """#!/bin/sh
# `python3 -m pip install ...` is recorded, anything else runs the real interpreter.
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> "$PIP_LOG"; exit 0; fi
exec {python} "$@"
"""


def _render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: str, command: list[str], **extra: Any) -> list:
    project = tmp_path / "project"
    (project / "lib").mkdir(parents=True)
    (project / "train.py").write_text(TRAIN)
    (project / "helpers.py").write_text(HELPERS)
    (project / "requirements.txt").write_text("numpy\n")
    monkeypatch.chdir(project)
    registry = RuntimeRegistry(files=extra.pop("runtime_files", []))
    overrides = JobOverrides(runtime=runtime, name="job", nodes=2, code=["."], command=command, **extra)
    return render_request(RenderRequest(overrides=overrides, ssh_secret="keys"), registry).result.objects


def _run_trainer(objects: list, tmp_path: Path, exit_code: int = 0) -> subprocess.CompletedProcess[str]:
    """Lay the volumes out as the kubelet would and run the trainer container's command."""
    _, container = trainer_pod(objects)
    assert {"name": "ktrain-code", "mountPath": SOURCE_PATH, "readOnly": True} in container["volumeMounts"]
    assert {"name": "ktrain-workdir", "mountPath": MOUNT_PATH} in container["volumeMounts"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    write_exe(bin_dir / "torchrun", TORCHRUN.format(python=sys.executable))
    write_exe(bin_dir / "mpirun", MPIRUN.format(python=sys.executable))
    write_exe(bin_dir / "python3", PYTHON.format(python=sys.executable))
    write_exe(bin_dir / "python", PYTHON.format(python=sys.executable))
    pod = tmp_path / "pod"
    env = {
        # the emptyDir: the code is copied there and runs from there
        "EXPECTED_CWD": str(pod / "volumes" / "volume-1-ktrain-workdir"),
        "EXIT_CODE": str(exit_code),
        "PIP_LOG": str(tmp_path / "pip.log"),
    }
    result, _ = run_container(objects, pod, bin_dir, env)
    return result


def test_torch_runs_the_local_code_on_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _render(tmp_path, monkeypatch, "torch-distributed", ["torchrun", "train.py", "--lr", "3e-4"])
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "hello from rank 0 ['--lr', '3e-4'] True",
        "hello from rank 1 ['--lr', '3e-4'] True",
    ]


def test_exit_code_of_the_training_command_comes_back_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = _render(tmp_path, monkeypatch, "torch-distributed", ["torchrun", "train.py"])
    assert _run_trainer(objects, tmp_path, exit_code=3).returncode == 3


def test_mpi_launcher_runs_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _render(
        tmp_path,
        monkeypatch,
        "deepspeed-distributed",
        ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python", "train.py"],
    )
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "hello from rank 1 [] True" in result.stdout
    # MPI workers see the same files at the same path (their command stays sshd).
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    node = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == "node")
    mounts = node["template"]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "ktrain-code", "mountPath": MOUNT_PATH, "readOnly": True} in mounts


def test_plain_runtime_with_pip_installs_then_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "plain"},
        "spec": {
            "mlPolicy": {"numNodes": 1},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                "spec": {
                                    "template": {"spec": {"containers": [{"name": "node", "image": "python:3.12"}]}}
                                },
                            },
                        }
                    ]
                }
            },
        },
    }
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump(runtime))
    objects = _render(
        tmp_path,
        monkeypatch,
        "plain",
        ["python", "train.py", "x"],
        runtime_files=[str(path)],
        pip=["numpy==2.1", "my pkg"],
        pip_index_urls=["https://pypi.example/simple", "https://extra.example/simple"],
    )
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello from rank ? ['x'] True"
    assert "ktrain: pip install numpy==2.1 my pkg" in result.stderr
    pip_call = (tmp_path / "pip.log").read_text().split()
    assert pip_call[:3] == ["-m", "pip", "install"]
    assert "--index-url" in pip_call and "https://extra.example/simple" in pip_call
    assert pip_call[-3:] == ["numpy==2.1", "my", "pkg"]  # one argument "my pkg", split here by the log's `echo`


def test_no_code_no_pip_leaves_the_command_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = JobOverrides(runtime="torch-distributed", name="job", command=["torchrun", "train.py"])
    objects = render_request(RenderRequest(overrides=overrides), RuntimeRegistry()).result.objects
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    container = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["torchrun", "train.py"]
    assert [o["kind"] for o in objects] == ["JobSet"]


WRITER = """\
import os, stat, sys
os.makedirs("data", exist_ok=True)                      # a dataset download
os.makedirs("checkpoints", exist_ok=True)
with open("checkpoints/ckpt.pt", "wb") as f:            # ./checkpoints
    f.write(b"weights")
with open("lib/notes.txt", "w") as f:                   # inside a directory that was sent
    f.write("written")
print(os.getcwd() == os.environ["EXPECTED_CWD"], os.access("run.sh", os.X_OK), sorted(os.listdir(".")))
"""


def test_the_command_runs_in_a_writable_copy_of_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #24 item 2: the kubelet mounts the ConfigMap volume read-only; the command runs in an
    emptyDir holding a copy (modes kept), where `os.makedirs("data")` and `./checkpoints` work."""
    project = tmp_path / "project"
    (project / "lib").mkdir(parents=True)
    (project / "train.py").write_text(WRITER)
    (project / "lib" / "util.py").write_text("")
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o755)
    monkeypatch.chdir(project)
    overrides = JobOverrides(runtime="torch-distributed", name="job", code=["."], command=["python", "train.py"])
    objects = render_request(RenderRequest(overrides=overrides), RuntimeRegistry()).result.objects
    pod, _ = trainer_pod(objects)
    assert {"name": "ktrain-workdir", "emptyDir": {}} in pod["volumes"]
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(" ", 2)[:2] == ["True", "True"]
    assert "'checkpoints', 'data', 'lib', 'run.sh', 'train.py'" in result.stdout
    workdir = tmp_path / "pod" / "volumes" / "volume-1-ktrain-workdir"
    assert (workdir / "checkpoints" / "ckpt.pt").read_bytes() == b"weights"
    source = tmp_path / "pod" / "volumes" / "volume-0-ktrain-code"
    assert sorted(p.name for p in source.iterdir()) == [
        "..2026_01_01_00_00_00.000000001",
        "..data",
        "lib",
        "run.sh",
        "train.py",
    ]
    assert not (source / "..data" / "lib" / "notes.txt").exists()  # the mount itself is not written to


def getting_started(lr: float) -> None:
    """The Kubeflow SDK's getting-started function does `FashionMNIST("./data", download=True)`."""
    import os

    root = os.path.join("./data", "FashionMNIST", "raw")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "train-images-idx3-ubyte"), "wb") as f:
        f.write(b"\0" * 16)
    print("downloaded", os.path.getsize(os.path.join(root, "train-images-idx3-ubyte")), lr)  # noqa: T201


def test_ktrain_train_s_function_can_write_into_its_working_directory(tmp_path: Path) -> None:
    from ktrain.python_api import train_request

    request = train_request(getting_started, runtime="torch-distributed", func_args={"lr": 0.1}, name="fn")
    result = _run_trainer(render_request(request, RuntimeRegistry()).result.objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["downloaded 16 0.1"]


def test_a_requirements_file_is_installed_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #24 item 6: `--requirements FILE` (or `--pip '-r FILE'`) installs what the project lists."""
    objects = _render(
        tmp_path,
        monkeypatch,
        "torch-distributed",
        ["torchrun", "train.py"],
        pip=["-r requirements.txt", "rich"],
        requirements=["helpers.py"],  # any file among those sent: pip reads it from the working directory
    )
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "ktrain: pip install -r helpers.py -r requirements.txt rich\n"
    pip_call = (tmp_path / "pip.log").read_text().split()
    assert pip_call[-5:] == ["-r", "helpers.py", "-r", "requirements.txt", "rich"]


def test_pip_without_code_installs_and_runs_where_the_image_says(tmp_path: Path) -> None:
    overrides = JobOverrides(
        runtime="torch-distributed", name="job", command=["python", "-c", "print(1)"], pip=["rich"]
    )
    objects = render_request(RenderRequest(overrides=overrides), RuntimeRegistry()).result.objects
    pod, container = trainer_pod(objects)
    assert "volumeMounts" not in container and "volumes" not in pod  # no code: nothing mounted
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write_exe(bin_dir / "python3", PYTHON.format(python=sys.executable))
    write_exe(bin_dir / "python", PYTHON.format(python=sys.executable))
    result, _ = run_container(objects, tmp_path / "pod", bin_dir, {"PIP_LOG": str(tmp_path / "pip.log")})
    assert (result.returncode, result.stdout, result.stderr) == (0, "1\n", "ktrain: pip install rich\n")
    assert (tmp_path / "pip.log").read_text().split()[-1] == "rich"
