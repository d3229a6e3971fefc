"""The same `CustomTrainer` function through the Kubeflow SDK's local process backend
(`kubeflow.trainer.TrainerClient(backend_config=LocalProcessBackendConfig())`, SDK 0.5) and
through ktrain's (`ktrain.TrainerClient` with the same config): both really run it, and the
function records what it saw.

The SDK's backend makes a virtual environment per job (`python -m venv --without-pip`, then
`ensurepip`, which needs no network) and knows one runtime, torch-distributed, whose launcher is
`torchrun` from that environment (it pip-installs torch only with `packages_to_install`). Without
torch here the SDK is given that runtime with another framework, for which it runs `python`; ktrain
runs the function under a runtime whose launcher is python (xgboost-distributed), since it runs
the runtime's own launcher. Where they differ, by design:

- The call: the SDK's local process backend calls `func(func_args)` (one positional dict;
  kubeflow/trainer/backends/localprocess/utils.py), its Kubernetes and container backends
  `func(**func_args)`; ktrain calls `func(**func_args)` everywhere.
- The environment: the SDK's starts the job with only `CustomTrainer.env` (plus what bash and the
  venv's activate add: PATH, VIRTUAL_ENV, PWD, ...); ktrain gives the pod's environment as on the
  cluster, over this process's (the runtime's variables: DMLC_TASK_ID etc. for xgboost, RANK /
  WORLD_SIZE / PET_* under torchrun).
- Steps: the SDK names its one step `train`; ktrain's are the cluster's (`node-0`, ...).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import ktrain


def _record(params: dict[str, object] | None = None, **kwargs: object) -> None:
    import json
    import os
    import sys

    args = params if params is not None else kwargs
    seen = {
        "positional": params is not None,
        "args": args,
        "module": __name__,
        "flag": os.environ.get("MY_FLAG"),
        "script": os.path.basename(sys.argv[0]),
        "env": sorted(os.environ),
    }
    with open(str(args["out"]), "w") as fh:
        json.dump(seen, fh)


@pytest.fixture
def python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # Both find `python`/`python3` on PATH: this interpreter's.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def _sdk_run(out: Path) -> dict[str, object]:
    from kubeflow.trainer import CustomTrainer, LocalProcessBackendConfig, TrainerClient

    if shutil.which("python") is None and shutil.which("python3") is None:
        pytest.skip("the SDK's local backend needs a python on PATH")
    client = TrainerClient(backend_config=LocalProcessBackendConfig())
    runtime = client.get_runtime("torch-distributed")
    runtime.trainer.framework = "python"  # not torch: its launcher is the venv's python, not torchrun
    trainer = CustomTrainer(func=_record, func_args={"out": str(out), "lr": 0.1}, env={"MY_FLAG": "on"})
    name = client.train(runtime=runtime, trainer=trainer)
    job = client.wait_for_job_status(name, status={"Complete", "Failed"}, timeout=300, polling_interval=1)
    if job.status != "Complete":
        logs = "\n".join(client.get_job_logs(name))
        if "ensurepip" in logs or "No module named" in logs:
            pytest.skip(f"the SDK's local backend cannot make its environment here: {logs[-300:]}")
        pytest.fail(f"the SDK's local run failed: {logs[-2000:]}")
    assert [s.name for s in job.steps] == ["train"]
    result: dict[str, object] = json.loads(out.read_text())
    return result


def _ktrain_run(out: Path) -> dict[str, object]:
    from kubeflow.trainer import CustomTrainer, LocalProcessBackendConfig

    client = ktrain.TrainerClient(backend_config=LocalProcessBackendConfig())
    trainer = CustomTrainer(func=_record, func_args={"out": str(out), "lr": 0.1}, env={"MY_FLAG": "on"})
    name = client.train(runtime="xgboost-distributed", trainer=trainer)
    job = client.wait_for_job_status(name, timeout=120, polling_interval=0.2)
    assert [s.name for s in job.steps] == ["node-0"]
    client.delete_job(name)
    result: dict[str, object] = json.loads(out.read_text())
    return result


@pytest.mark.usefixtures("python_first")
def test_the_same_function_sees_the_same_arguments_and_env(tmp_path: Path) -> None:
    sdk = _sdk_run(tmp_path / "sdk.json")
    mine = _ktrain_run(tmp_path / "ktrain.json")
    # What both give the function.
    assert sdk["args"] == {"out": str(tmp_path / "sdk.json"), "lr": 0.1}
    assert mine["args"] == {"out": str(tmp_path / "ktrain.json"), "lr": 0.1}
    assert sdk["module"] == mine["module"] == "__main__"  # run as a script, the call at its end
    assert sdk["flag"] == mine["flag"] == "on"  # CustomTrainer.env
    # Where they differ on purpose (the module docstring).
    assert sdk["positional"] is True and mine["positional"] is False
    sdk_env, my_env = set(sdk["env"]), set(mine["env"])  # type: ignore[call-overload]
    assert {"MY_FLAG", "VIRTUAL_ENV"} <= sdk_env and not {"DMLC_TASK_ID", "HOME"} & sdk_env
    assert {"MY_FLAG", "DMLC_TASK_ID", "DMLC_NUM_WORKER", "JOB_COMPLETION_INDEX"} <= my_env
