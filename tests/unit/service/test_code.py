"""How the Python API's function runs on a runtime (launcher_command), and --code's ConfigMaps."""

from __future__ import annotations

import pytest

from ktrain.errors import UsageError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.code import MPI_HOSTFILE, code_objects, launcher_command
from ktrain.service.requests import RenderRequest


def _runtime(name: str):  # type: ignore[no-untyped-def]
    return RuntimeRegistry().get(name).runtime


def test_a_torch_runtime_runs_the_function_with_torchrun() -> None:
    assert launcher_command(_runtime("torch-distributed"), "/app/f.py") == ["torchrun", "/app/f.py"]


def test_an_mpi_runtime_runs_it_with_mpirun_over_the_hostfile() -> None:
    runtime = _runtime("deepspeed-distributed")
    assert launcher_command(runtime, "f.py") == ["mpirun", "--hostfile", MPI_HOSTFILE, "python3", "f.py"]
    assert launcher_command(runtime, "f.py", single_process=True) == ["mpirun", "-np", "1", "python3", "f.py"]


def test_a_runtime_without_torch_or_mpi_runs_it_with_python() -> None:
    runtime = _runtime("jax-distributed")
    assert runtime.spec.ml_policy is None or runtime.spec.ml_policy.torch is None
    assert launcher_command(runtime, "f.py") == ["python3", "f.py"]


def test_a_function_cannot_run_on_a_torchtune_runtime() -> None:
    with pytest.raises(UsageError, match=r"a function cannot run on torchtune-llama3\.2-1b") as caught:
        launcher_command(_runtime("torchtune-llama3.2-1b"), "f.py")
    assert "TorchTuneConfig" in (caught.value.hint or "")


def test_without_code_there_are_no_code_config_maps() -> None:
    assert code_objects(RenderRequest(), "job", "team-a") == []


def test_code_ships_the_files_in_a_config_map_and_the_command_runs_from_the_copy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ktrain.service.render import render_request
    from ktrain.service.requests import JobOverrides

    (tmp_path / "train.py").write_text('print("hi")\n')
    request = RenderRequest(
        overrides=JobOverrides(
            runtime="torch-distributed", name="demo", nodes=2, code=[str(tmp_path)], command=["python", "train.py"]
        )
    )
    objects = render_request(request, RuntimeRegistry()).result.objects
    maps = code_objects(request, "demo", "team-a")
    assert [m["kind"] for m in maps] == ["ConfigMap"]
    assert maps[0]["metadata"]["name"].startswith("demo-code-")
    assert [k.split(".")[0] for k in maps[0]["data"]] == ["train"]
    assert [o["metadata"]["name"] for o in objects] == [maps[0]["metadata"]["name"], "demo"]
    container = objects[-1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["sh", "-c"]
    assert container["command"][-2:] == ["python", "train.py"]
    assert "/opt/ktrain/code" in container["command"]
