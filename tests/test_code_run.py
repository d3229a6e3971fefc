"""Run what we generate: the code ConfigMaps are laid out as the pod's projected volume would show
them, and the rendered trainer command runs with the local `sh` and `python` — the launcher
(torchrun, mpirun) replaced by a stub that runs the program once per rank with the rank's env.
The user's code must run, see its arguments, and its exit code must come back unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.authoring.code_launch import SOURCE_PATH
from ktrain.errors import UsageError
from ktrain.inputs.code_bundle import MOUNT_PATH
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest
from tests.pod_run import lay_out_volumes, run_container, trainer_pod, write_exe

REPO = Path(__file__).resolve().parents[1]

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
import json, os, subprocess, sys
argv = sys.argv[1:]
while argv and argv[0].startswith("-"):
    argv = argv[2:] if argv[0] in ("--hostfile", "-np", "--map-by") else argv[1:]
if "ppr:1:node" in sys.argv:  # once per host: run here (the launcher's host), recorded for the workers'
    with open(os.environ["FANOUT_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({{"options": sys.argv[1 : len(sys.argv) - len(argv)], "program": argv}}) + "\\n")
    sys.exit(subprocess.call(argv))
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
    allow_extensions = extra.pop("allow_extensions", False)
    overrides = JobOverrides(runtime=runtime, name="job", nodes=2, code=["."], command=command, **extra)
    request = RenderRequest(overrides=overrides, ssh_secret="keys", allow_extensions=allow_extensions)
    return render_request(request, registry).result.objects


def _run_trainer(
    objects: list, tmp_path: Path, exit_code: int = 0, mounts: dict[str, Path] | None = None
) -> subprocess.CompletedProcess[str]:
    """Lay the volumes out as the kubelet would and run the trainer container's command (`mounts`,
    when given, gets where each mount path was laid out)."""
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
        "FANOUT_LOG": str(tmp_path / "fanout.jsonl"),
    }
    result, laid_out = run_container(objects, pod, bin_dir, env)
    if mounts is not None:
        mounts.update(laid_out)
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
    # MPI workers get the same pair of volumes (their command stays sshd; the launcher fills theirs).
    _, worker = trainer_pod(objects, "node")
    assert worker["command"] == ["/usr/sbin/sshd"]
    assert {"name": "ktrain-code", "mountPath": SOURCE_PATH, "readOnly": True} in worker["volumeMounts"]
    assert {"name": "ktrain-workdir", "mountPath": MOUNT_PATH} in worker["volumeMounts"]


def test_mpi_workers_get_a_writable_copy_of_the_code_and_the_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers run sshd, not the wrapper: before the command, the launcher's wrapper runs the
    node script once on every host of the hostfile through Open MPI (`--map-by ppr:1:node`). Here
    the launcher runs; then the program mpirun was given runs again in a worker's volumes, as
    Open MPI starts it there (in the launcher's working directory)."""
    objects = _render(
        tmp_path,
        monkeypatch,
        "deepspeed-distributed",
        ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python", "train.py"],
        pip=["numpy", "my pkg$(touch PWNED)"],
    )
    launcher: dict[str, Path] = {}
    result = _run_trainer(objects, tmp_path, mounts=launcher)
    assert result.returncode == 0, result.stderr
    assert "hello from rank 1 [] True" in result.stdout
    # Here, then through the fan-out on the launcher's host (runLauncherAsNode: it is in the hostfile).
    assert result.stderr.count("ktrain: pip install numpy my pkg$(touch PWNED)\n") == 2
    (fan_out,) = [json.loads(line) for line in (tmp_path / "fanout.jsonl").read_text().splitlines()]
    assert fan_out["options"] == ["--hostfile", "/etc/mpi/hostfile", "--map-by", "ppr:1:node"]
    mount_path_of = {str(directory): path for path, directory in launcher.items()}
    worker = tmp_path / "worker"
    worker_dirs = lay_out_volumes(objects, worker / "volumes", rjob="node")
    program = [str(worker_dirs[mount_path_of[w]]) if w in mount_path_of else w for w in fan_out["program"]]
    assert program[:2] == ["sh", "-c"] and program[3:] == [
        "ktrain-node",
        str(worker_dirs[SOURCE_PATH]),
        str(worker_dirs[MOUNT_PATH]),
        "2",
        "numpy",
        "my pkg$(touch PWNED)",
    ]
    bin_dir = tmp_path / "bin"  # the python stubs of the launcher's run: pip is recorded
    ran = subprocess.run(
        program,
        cwd=worker_dirs[MOUNT_PATH],
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "PIP_LOG": str(worker / "pip.log")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    copied = worker_dirs[MOUNT_PATH]  # the emptyDir, not the read-only ConfigMap volume
    assert sorted(p.name for p in copied.iterdir()) == ["helpers.py", "requirements.txt", "train.py"]
    assert (copied / "train.py").read_text() == TRAIN
    assert (worker / "pip.log").read_text().split()[-4:] == ["numpy", "my", "pkg$(touch", "PWNED)"]  # `echo` splits
    assert not list(tmp_path.rglob("PWNED"))


def test_a_failed_fan_out_stops_before_the_command_with_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If mpirun cannot reach the hosts (sshd not up, no mpirun in the image), the command does
    not start on hosts without the code: the wrapper says so and exits with mpirun's code."""
    objects = _render(tmp_path, monkeypatch, "deepspeed-distributed", ["mpirun", "python", "train.py"], pip=["numpy"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write_exe(bin_dir / "python3", PYTHON.format(python=sys.executable))
    write_exe(bin_dir / "mpirun", "#!/bin/sh\necho 'ran' >> \"$MPIRUN_LOG\"\nexit 7\n")
    env = {"PIP_LOG": str(tmp_path / "pip.log"), "MPIRUN_LOG": str(tmp_path / "mpirun.log")}
    result, _ = run_container(objects, tmp_path / "pod", bin_dir, env)
    assert result.returncode == 7
    assert result.stderr.endswith(
        "ktrain: preparing the MPI hosts (the code, the packages) through mpirun failed (exit 7)\n"
    )
    assert (tmp_path / "mpirun.log").read_text() == "ran\n"  # the fan-out only: the command never ran


def test_ktrain_train_on_mpi_installs_the_packages_on_every_host(tmp_path: Path) -> None:
    """The Kubeflow SDK installs `packages_to_install` in every MPI rank's `bash -c`; ktrain's
    launcher installs them once per host through the fan-out, then runs the function."""
    from ktrain.python_api import train_request

    request = train_request(
        getting_started,
        runtime="deepspeed-distributed",
        func_args={"lr": 0.1},
        name="fn",
        packages_to_install=["numpy"],
    )
    request.ssh_secret = "keys"
    objects = render_request(request, RuntimeRegistry()).result.objects
    result = _run_trainer(objects, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["downloaded 16 0.1", "downloaded 16 0.1"]  # two ranks (the stub's)
    assert result.stderr.count("ktrain: pip install numpy\n") == 2  # here and through the fan-out
    (fan_out,) = [json.loads(line) for line in (tmp_path / "fanout.jsonl").read_text().splitlines()]
    assert fan_out["program"][-2:] == ["1", "numpy"]


def test_pip_on_a_non_open_mpi_runtime_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only Open MPI's mpirun is known to run a program once per host; elsewhere --pip would
    install on the launcher only, so it is refused before anything is submitted."""
    runtime = yaml.safe_load((REPO / "runtimes" / "deepspeed-distributed.yaml").read_text())
    runtime["metadata"]["name"] = "ds-intel"
    runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "Intel"
    path = tmp_path / "intel.yaml"
    path.write_text(yaml.safe_dump(runtime))
    refused = "--pip on an Intel runtime would install on the launcher only"  # Intel: a ktrain extension
    with pytest.raises(UsageError, match=refused):
        _render(
            tmp_path,
            monkeypatch,
            "ds-intel",
            ["mpirun", "python", "train.py"],
            runtime_files=[str(path)],
            pip=["numpy"],
            allow_extensions=True,
        )


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
