"""`ktrain job run --local`: the rendered pods run here, as processes (issue #27).

Each test starts the real command in a subprocess (signals and process groups are part of
what is tested); the workloads are in tests/local_run/. The torch and MPI tests run only where
torch / `mpirun` are installed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKLOADS = Path(__file__).resolve().parents[1] / "local_run"
BIN = os.path.dirname(sys.executable)
HAS_TORCH = importlib.util.find_spec("torch") is not None and shutil.which("torchrun", path=BIN) is not None


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", os.defpath)  # python3/torchrun of this interpreter
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def ktrain(*args: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ktrain", "job", "run", "--local", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(**extra),
        stdin=subprocess.DEVNULL,
        cwd=WORKLOADS,  # --code keeps paths relative to here: the workloads land at the top of the code
    )


def _lines(out: str, pod: str) -> list[str]:
    return [line.split("] ", 1)[1].strip() for line in out.splitlines() if line.startswith(f"[{pod}]")]


def test_two_nodes_of_two_processes_see_four_distinct_ranks() -> None:
    code = ["--code", str(WORKLOADS / "rendezvous.py")]
    if HAS_TORCH:
        command = ["--", "torchrun", "rendezvous.py"]
    else:
        code += ["--code", str(WORKLOADS / "minirun.py")]
        command = ["--", "python3", "minirun.py", "rendezvous.py"]
    result = ktrain("--runtime", "torch-distributed", "--nodes", "2", "--nproc-per-node", "2", *code, *command)
    assert result.returncode == 0, result.stderr
    assert "ranks 0 1 2 3 worlds 4" in _lines(result.stdout, "node-0-0")
    assert "127.0.0.1 here" in result.stderr and "is not pulled" in result.stderr
    assert "\x1b[" not in result.stdout  # no colour when stdout is not a terminal


def test_two_local_runs_at_once_do_not_collide() -> None:
    args = ["--runtime", "torch-distributed", "--nodes", "2", "--nproc-per-node", "2"]
    args += ["--code", str(WORKLOADS / "rendezvous.py"), "--code", str(WORKLOADS / "minirun.py")]
    args += ["--", "python3", "minirun.py", "rendezvous.py"]
    argv = [sys.executable, "-m", "ktrain", "job", "run", "--local", *args]
    runs = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=WORKLOADS)
        for _ in "ab"
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert "ranks 0 1 2 3 worlds 4" in _lines(out, "node-0-0")


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_gloo_all_reduce_across_two_nodes_of_two() -> None:
    result = ktrain(
        "--runtime", "torch-distributed", "--nodes", "2", "--nproc-per-node", "2",
        "--code", str(WORKLOADS / "allreduce.py"), "--", "torchrun", "allreduce.py",
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout, "node-0-0") + _lines(result.stdout, "node-0-1")
    assert sorted(line for line in lines if line.startswith("rank ")) == [f"rank {r}/4 sum 6" for r in range(4)]


def test_a_failing_rank_fails_the_run_with_its_exit_code() -> None:
    script = 'echo "up $JOB_COMPLETION_INDEX"; if [ "$PET_NODE_RANK" = 1 ]; then exit 7; fi; sleep 60'
    started = time.monotonic()
    result = ktrain("--runtime", "torch-distributed", "--nodes", "3", "--", "sh", "-c", script)
    assert result.returncode == 7
    assert "error: pod node-0-1 (container node) exited with code 7" in result.stderr
    assert time.monotonic() - started < 30  # the other pods were stopped, not waited for
    assert "up 1" in _lines(result.stdout, "node-0-1")


def test_timeout_stops_the_run() -> None:
    result = ktrain("--runtime", "torch-distributed", "--timeout", "1s", "--", "sleep", "60")
    assert result.returncode == 124
    assert "timed out after 1s" in result.stderr


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_leaves_no_process_behind(sig: signal.Signals) -> None:
    script = 'sleep 300 & echo "up"; sleep 300; wait'
    run = subprocess.Popen(
        [sys.executable, "-m", "ktrain", "job", "run", "--local", "--runtime", "torch-distributed", "--nodes", "2",
         "--", "sh", "-c", script],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    assert run.stdout is not None
    seen = [run.stdout.readline(), run.stdout.readline()]
    assert all(line.endswith("up\n") for line in seen), seen
    # "up" is printed before each shell forks its second sleep: wait (bounded) until all have started
    deadline = time.monotonic() + 20
    pods = _descendants(run.pid)
    while len(pods) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
        pods = _descendants(run.pid)
    assert len(pods) >= 6  # two shells, each with two sleeps
    run.send_signal(sig)
    _out, err = run.communicate(timeout=30)
    assert run.returncode == 128 + sig
    assert f"interrupted ({sig.name})" in err
    assert not [pid for pid in pods if _alive(pid)]


V1_TFJOB = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf-local}
spec:
  tfReplicaSpecs:
    Chief: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: tf, command: [python3, SCRIPT]}]}}}
    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: tf, command: [python3, SCRIPT]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: tf, command: [python3, SCRIPT]}]}}}
"""


def test_a_converted_v1_tfjob_runs_with_a_tf_config_per_task(tmp_path: Path) -> None:
    job = tmp_path / "tfjob.yaml"
    job.write_text(V1_TFJOB.replace("SCRIPT", str(WORKLOADS / "tfcheck.py")))
    result = ktrain("-f", str(job))
    assert result.returncode == 0, result.stderr
    # the chief ends the run (success policy: chief); it met the PS and both workers at their own ports
    (line,) = _lines(result.stdout, "chief-0-0")
    assert re.fullmatch(r"chief 0 at 127\.0\.0\.1:\d+ reached 3 peers", line)
    assert "converted TFJob tf-local" in result.stderr


def test_the_bundled_tensorflow_runtime_computes_tf_config_in_the_pod() -> None:
    result = ktrain(
        "--runtime", "tensorflow-distributed", "--nodes", "3", "--set",
        f"trainer.args=[python3, {WORKLOADS / 'tfcheck.py'}]",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for i in range(3):
        (line,) = _lines(result.stdout, f"node-0-{i}")
        assert re.fullmatch(rf"worker {i} at 127\.0\.0\.1:\d+ reached 2 peers", line)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed (Debian: openmpi-bin)")
def test_an_mpi_job_runs_every_rank_here() -> None:
    # one write per rank: mpirun forwards every rank's output through the launcher's one stream
    program = (
        "import os; e = os.environ; "
        "os.write(1, f\"rank {e['OMPI_COMM_WORLD_RANK']} of {e['OMPI_COMM_WORLD_SIZE']}\\n\".encode())"
    )
    result = ktrain("--runtime", "deepspeed-distributed", "--nodes", "2", "--nproc-per-node", "2",
                    "--", "mpirun", "python3", "-c", program)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(_lines(result.stdout, "launcher-0-0")) == [f"rank {r} of 4" for r in range(4)]
    assert "localhost slots=4" in result.stderr
    assert "node: not started" in result.stderr


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed (Debian: openmpi-bin)")
def test_mpi_ranks_write_into_their_copy_of_the_code() -> None:
    """--code on MPI: the launcher's wrapper copies the code to every host through Open MPI's own
    mpirun (`--map-by ppr:1:node`) before the command; every rank runs in a writable copy."""
    result = ktrain("--runtime", "deepspeed-distributed", "--nodes", "2",
                    "--code", str(WORKLOADS / "mpi_writer.py"), "--", "mpirun", "python3", "mpi_writer.py")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = sorted(_lines(result.stdout, "launcher-0-0"))
    assert [line.split(" wrote ")[0] for line in lines] == ["rank 0", "rank 1"]
    assert all("'checkpoints', 'mpi_writer.py'" in line for line in lines)


def test_mpi_without_mpirun_says_so(tmp_path: Path) -> None:
    (tmp_path / "python3").symlink_to(sys.executable)  # a PATH with python but no MPI
    result = ktrain("--runtime", "deepspeed-distributed", "--nodes", "2", "--", "mpirun", "python3", "x.py",
                    PATH=str(tmp_path))  # fmt: skip
    assert result.returncode == 2
    assert "runs `mpirun`, which is not found on this machine" in result.stderr
    assert "apt-get install openmpi-bin" in result.stderr


def test_pip_installs_into_a_cached_venv(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, "ktrainlocalprobe", "VALUE = 42\n")
    cache = tmp_path / "cache"
    args = ["--runtime", "torch-distributed", "--pip", str(wheel), "--", "python3", "-c"]
    args += ["import ktrainlocalprobe, sys; print(ktrainlocalprobe.VALUE, sys.prefix)"]
    first = ktrain(*args, KTRAIN_CACHE_DIR=str(cache), timeout=300)
    assert first.returncode == 0, first.stderr
    lines = _lines(first.stdout, "node-0-0")  # the --pip wrapper's own line, then the program's
    assert lines[0] == f"ktrain: pip install {wheel}"
    line = lines[-1]
    value, prefix = line.split()
    assert value == "42" and prefix.startswith(str(cache / "venvs"))
    assert "making a virtual environment" in first.stderr
    again = ktrain(*args, KTRAIN_CACHE_DIR=str(cache), timeout=300)
    assert again.returncode == 0, again.stderr
    assert "making a virtual environment" not in again.stderr  # cached by package set
    assert _lines(again.stdout, "node-0-0")[-1] == line


def _wheel(where: Path, name: str, source: str) -> Path:
    """A minimal pure-Python wheel, built by hand (no build backend needed offline)."""
    import base64
    import hashlib
    import zipfile

    path = where / f"{name}-1.0-py3-none-any.whl"
    files = {
        f"{name}/__init__.py": source,
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{name}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    with zipfile.ZipFile(path, "w") as zf:
        for arc, text in files.items():
            data = text.encode()
            zf.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arc},sha256={digest},{len(data)}")
        record.append(f"{name}-1.0.dist-info/RECORD,,")
        zf.writestr(f"{name}-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def test_without_local_it_says_what_to_use() -> None:
    result = subprocess.run([sys.executable, "-m", "ktrain", "job", "run", "--runtime", "torch-distributed"],
                            capture_output=True, text=True, env=_env(), timeout=60)  # fmt: skip
    assert result.returncode == 2
    assert "add --local" in result.stderr and "ktrain job create --follow" in result.stderr


def test_a_program_that_is_not_here_is_named_before_anything_starts() -> None:
    result = ktrain("--runtime", "torch-distributed", "--", "no-such-trainer-xyz", "x")
    assert result.returncode == 2
    assert "pod node-0-0 (container node) runs `no-such-trainer-xyz`, which is not found" in result.stderr
    assert result.stdout == ""


def test_the_bundled_paddle_runtime_meets_its_master() -> None:
    # rank 0 names the master by its own pod IP, the others by its host name: both must be one port
    result = ktrain(
        "--runtime", "paddle-distributed", "--nodes", "3", "--set",
        f"trainer.args=[python3, {WORKLOADS / 'paddlecheck.py'}]",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (line,) = _lines(result.stdout, "node-0-0")
    assert re.fullmatch(r"master at 127\.0\.0\.1:\d+ met 2 nodes", line)
