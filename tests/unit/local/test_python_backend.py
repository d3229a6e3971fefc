"""`ktrain.train(..., backend="local")`: the function runs in the job's pods, on this machine."""

from __future__ import annotations

import os
import sys

import pytest

import ktrain
from ktrain.errors import UsageError
from ktrain.local.runner import LocalRunError


def _report(word: str) -> None:
    import os

    os.write(1, f"task {os.environ['DMLC_TASK_ID']} of {os.environ['DMLC_NUM_WORKER']} says {word}\n".encode())


def _fail() -> None:
    import os

    raise SystemExit(3 if os.environ["DMLC_TASK_ID"] == "1" else 0)


@pytest.fixture(autouse=True)
def _python3_of_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def test_train_local_runs_the_function_on_every_pod(capfd: pytest.CaptureFixture[str]) -> None:
    name = ktrain.train(_report, runtime="xgboost-distributed", num_nodes=2, func_args={"word": "hi"}, backend="local")
    out, err = capfd.readouterr()
    # each call is a new job, named as the Kubeflow SDK names one: a letter and 11 hex digits
    assert len(name) == 12 and name[0].isalpha() and all(ch in "0123456789abcdef" for ch in name[1:]), name
    assert sorted(out.splitlines()) == ["[node-0-0] task 0 of 2 says hi", "[node-0-1] task 1 of 2 says hi"]
    assert "127.0.0.1" in err


def test_train_local_failure_raises_with_the_pods_exit_code(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(LocalRunError, match=r"pod node-0-1 .* exited with code 3") as exc:
        ktrain.train(_fail, runtime="xgboost-distributed", num_nodes=2, backend="local")
    assert exc.value.exit_code == 3


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(UsageError, match="backend must be one of cluster, local"):
        ktrain.train(_fail, runtime="xgboost-distributed", backend="laptop")


def test_container_needs_the_local_backend_and_a_known_engine() -> None:
    with pytest.raises(UsageError, match='container= runs the pods here: give backend="local" too'):
        ktrain.train(_fail, runtime="xgboost-distributed", container="podman")
    with pytest.raises(UsageError, match="container must be one of podman, docker"):
        ktrain.train(_fail, runtime="xgboost-distributed", backend="local", container="lxc")
