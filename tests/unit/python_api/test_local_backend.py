"""`ktrain.TrainerClient` with the Kubeflow SDK's local backend configs: the job's pods run on this
machine in the background (ktrain.local), and the SDK's methods follow them. The pods are real
processes; tests/cli/test_job_run_container.py runs the container backend with a real engine, and
tests/test_sdk_local_differential.py compares with the SDK's own local process backend."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ktrain
from ktrain.errors import JobFailedError, NotFoundError, RuntimeNotFoundError, UsageError
from ktrain.python_api.local_backend import run_options


@pytest.fixture(autouse=True)
def _python3_of_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def _client() -> ktrain.TrainerClient:
    return ktrain.TrainerClient(backend_config=ktrain.LocalProcessBackendConfig())


def _wait_then_say(go: str, word: str) -> None:
    import os
    import time

    while not os.path.exists(go):
        time.sleep(0.05)
    print(f"rank {os.environ['DMLC_TASK_ID']} says {word}", flush=True)  # noqa: T201 (the pod's log)


def _fail_on_rank_one() -> None:
    import os
    import time

    if os.environ["DMLC_TASK_ID"] == "1":
        raise SystemExit(3)
    time.sleep(30)


def _sleep_forever(pids: str) -> None:
    import os
    import time

    with open(f"{pids}/{os.getpid()}", "w"):
        pass
    time.sleep(300)


def _count(n: int) -> None:
    import time

    for i in range(n):
        print(f"line {i}", flush=True)  # noqa: T201 (the pod's log)
        time.sleep(0.05)


def _trainer(func: object, nodes: int = 2, **args: object) -> ktrain.CustomTrainer:
    return ktrain.CustomTrainer(func=func, func_args=args or None, num_nodes=nodes)  # type: ignore[arg-type]


def test_train_returns_at_once_and_the_sdk_methods_follow_the_job(tmp_path: Path) -> None:
    client = _client()
    go = tmp_path / "go"
    name = client.train(runtime="xgboost-distributed", trainer=_trainer(_wait_then_say, go=str(go), word="hi"))
    job = client.get_job(name)
    assert job.name == name and job.num_nodes == 2 and job.runtime.name == "xgboost-distributed"
    assert job.status in ("Created", "Running")  # the pods wait for `go`: the call did not
    assert [s.name for s in job.steps] == ["node-0", "node-1"]
    assert [j.name for j in client.list_jobs()] == [name]
    assert client.list_jobs(runtime="torch-distributed") == []
    go.touch()
    done = client.wait_for_job_status(name, timeout=60, polling_interval=0.1)
    assert done.status == "Complete"
    assert [(s.name, s.status, s.pod_name) for s in done.steps] == [
        ("node-0", "Succeeded", "node-0-0"),
        ("node-1", "Succeeded", "node-0-1"),
    ]
    assert list(client.get_job_logs(name)) == ["rank 0 says hi"]  # node-0, as on the cluster
    assert list(client.get_job_logs(name, step="node-1")) == ["rank 1 says hi"]
    assert list(client.get_job_logs(name, step="node-7")) == []  # no such pod: no lines
    client.delete_job(name)
    assert client.list_jobs() == []
    with pytest.raises(NotFoundError, match=f"no local job named {name}"):
        client.get_job(name)


def test_a_failed_job_says_which_pod_failed_and_how() -> None:
    client = _client()
    name = client.train(runtime="xgboost-distributed", trainer=_trainer(_fail_on_rank_one))
    with pytest.raises(JobFailedError, match=r"pod node-0-1 \(container node\) exited with code 3"):
        client.wait_for_job_status(name, timeout=60, polling_interval=0.1)
    job = client.wait_for_job_status(name, status={"Failed"}, timeout=60, polling_interval=0.1)
    steps = {s.name: s.status for s in job.steps}
    assert steps["node-1"] == "Failed" and steps["node-0"] in ("Running", "Succeeded", "Failed")
    client.delete_job(name)


def test_delete_job_stops_its_pods(tmp_path: Path) -> None:
    client = _client()
    name = client.train(runtime="xgboost-distributed", trainer=_trainer(_sleep_forever, pids=str(tmp_path)))
    deadline = time.monotonic() + 30
    while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p.name) for p in tmp_path.iterdir()]
    assert len(pids) == 2
    client.delete_job(name)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert client.list_jobs() == []


def test_follow_streams_a_steps_lines_until_it_ends() -> None:
    client = _client()
    name = client.train(runtime="xgboost-distributed", trainer=_trainer(_count, nodes=1, n=20))
    # each line with its newline, as the SDK streams them (the notebooks print them with end="")
    assert list(client.get_job_logs(name, follow=True)) == [f"line {i}\n" for i in range(20)]
    assert client.get_job(name).steps[0].status == "Succeeded"
    client.delete_job(name)


def test_what_cannot_run_is_refused_by_train(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the run's directory is made
    client = _client()
    with pytest.raises(UsageError, match="runs `no-such-program-here`, which is not found on this machine"):
        client.train(runtime="xgboost-distributed", command=["no-such-program-here"])
    assert client.list_jobs() == []
    assert list(tmp_path.iterdir()) == []  # nothing left behind
    name = client.train(runtime="xgboost-distributed", trainer=_trainer(_count, nodes=1, n=1), name="mine")
    with pytest.raises(UsageError, match="a local job named mine exists already"):
        client.train(runtime="xgboost-distributed", trainer=_trainer(_count, nodes=1, n=1), name="mine")
    client.wait_for_job_status(name, timeout=60, polling_interval=0.1)
    client.delete_job(name)


def test_runtimes_are_ktrains_own() -> None:
    client = _client()
    names = [r.name for r in client.list_runtimes()]
    assert "torch-distributed" in names and "xgboost-distributed" in names
    runtime = client.get_runtime("torch-distributed")
    assert runtime.trainer.framework == "torch"
    with pytest.raises(RuntimeNotFoundError):
        client.get_runtime("nope")
    assert client.namespace == "default"


def test_cleanup_venv_false_keeps_the_runs_directory(capfd: pytest.CaptureFixture[str]) -> None:
    client = ktrain.TrainerClient(backend_config=ktrain.LocalProcessBackendConfig(cleanup_venv=False))
    name = client.train(runtime="xgboost-distributed", trainer=_trainer(_count, nodes=1, n=1))
    client.wait_for_job_status(name, timeout=60, polling_interval=0.1)
    client.delete_job(name)
    kept = [line for line in capfd.readouterr().err.splitlines() if "the run's files are kept in" in line]
    assert len(kept) == 1
    directory = kept[0].rsplit(" ", 1)[1]
    assert os.path.isdir(directory)
    import shutil

    shutil.rmtree(directory)


def test_the_sdks_own_config_objects_are_read_alike() -> None:
    from kubeflow.trainer import ContainerBackendConfig, CustomTrainer, LocalProcessBackendConfig

    client = ktrain.TrainerClient(backend_config=LocalProcessBackendConfig())
    name = client.train(runtime="xgboost-distributed", trainer=CustomTrainer(func=_count, func_args={"n": 2}))
    assert client.wait_for_job_status(name, timeout=60, polling_interval=0.1).status == "Complete"
    assert list(client.get_job_logs(name)) == ["line 0", "line 1"]
    client.delete_job(name)

    from kubeflow.trainer.backends.container.types import TrainingRuntimeSource

    elsewhere = ContainerBackendConfig(runtime_source=TrainingRuntimeSource(sources=["file:///runtimes"]))
    with pytest.raises(UsageError, match="runtime_source: ktrain runs the runtimes it renders with"):
        ktrain.TrainerClient(backend_config=elsewhere)
    with pytest.raises(UsageError, match="dataset_initializer_image"):
        ktrain.TrainerClient(backend_config=ContainerBackendConfig(dataset_initializer_image="mine:1"))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (ktrain.ContainerBackendConfig(container_runtime="lxc"), "container_runtime must be docker or podman"),
        (ktrain.ContainerBackendConfig(pull_policy="Sometimes"), "pull_policy must be one of IfNotPresent"),
        (ktrain.LocalProcessBackendConfig(cleanup_venv="yes"), "cleanup_venv must be True or False"),  # type: ignore[arg-type]
    ],
)
def test_bad_backend_configs_are_refused(config: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ktrain.TrainerClient(backend_config=config)
    with pytest.raises(UsageError, match="target= is for a cluster"):
        ktrain.TrainerClient(backend_config=ktrain.LocalProcessBackendConfig(), target="jobset")


def test_the_pages_example_runs_as_shown(tmp_path: Path) -> None:
    """docs/python-api.md, "On this machine": the example prints what its comment says."""
    import re
    import subprocess

    text = (Path(__file__).resolve().parents[3] / "docs" / "python-api.md").read_text()
    section = text[text.index("### On this machine") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block
    code = block.group(1)
    shown = re.search(r"# (\[.*\])$", code, re.M)
    assert shown
    (tmp_path / "example.py").write_text(code)
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == shown.group(1)


def test_the_local_backends_log_iterators_have_the_sdks_shapes() -> None:
    """Followed: each line with its newline (the SDK's local backends stream text; the notebooks print
    it with end=""). Finished: lines without newlines (process backend), one string holding the
    whole log (container backend: the engine's log, as the SDK's adapters yield it)."""
    import threading
    import types

    from ktrain.python_api.local_backend import LocalBackend

    class Job:
        def __init__(self) -> None:
            self.changed = threading.Condition()
            self.lines = {"pod-0": ["one", "two"]}
            # not an MPI runtime: node-0 is the node of rank 0
            self.runtime = types.SimpleNamespace(trainer=types.SimpleNamespace(command=["torchrun"]))

        def steps(self) -> dict[str, tuple[str, str]]:
            return {"node-0": ("pod-0", "Succeeded")}

        def follow(self, pod: str) -> Iterator[str]:
            return iter(self.lines[pod])

    shapes = {}
    for kind in ("LocalProcessBackendConfig", "ContainerBackendConfig"):
        backend = LocalBackend.__new__(LocalBackend)
        backend.kind, backend.jobs = kind, {"j": Job()}  # type: ignore[dict-item]
        shapes[kind] = (
            list(backend.get_job_logs("j", "node-0", True)),
            list(backend.get_job_logs("j", "node-0", False)),
        )
    assert shapes["LocalProcessBackendConfig"] == (["one\n", "two\n"], ["one", "two"])
    assert shapes["ContainerBackendConfig"] == (["one\n", "two\n"], ["one\ntwo\n"])


def test_backend_configs_become_the_options_of_job_run_local() -> None:
    """What each config field means for the run, ktrain's config or the SDK's, read alike."""
    from kubeflow.trainer import ContainerBackendConfig as SdkContainer
    from kubeflow.trainer import LocalProcessBackendConfig as SdkProcess

    process = "LocalProcessBackendConfig"
    assert run_options(ktrain.LocalProcessBackendConfig(), process).keep is False  # cleanup_venv=True
    assert run_options(ktrain.LocalProcessBackendConfig(cleanup_venv=False), process).keep is True  # --keep
    assert run_options(SdkProcess(cleanup_venv=False), process).keep is True
    default = run_options(ktrain.ContainerBackendConfig(), "ContainerBackendConfig")
    assert (default.container, default.pull, default.remove, default.container_host) == ("auto", "missing", True, None)
    sdk = run_options(
        SdkContainer(
            container_runtime="podman", pull_policy="Always", auto_remove=False, container_host="unix:///p.sock"
        ),
        "ContainerBackendConfig",
    )
    assert (sdk.container, sdk.pull, sdk.remove, sdk.container_host) == ("podman", "always", False, "unix:///p.sock")
    assert run_options(ktrain.ContainerBackendConfig(pull_policy="Never"), "ContainerBackendConfig").pull == "never"
