"""`ktrain.TrainerClient` against the API-server double: the Kubeflow SDK's methods and return types,
ktrain's submission underneath (rendered first, rolled back on failure), every call a new job."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble, owner_reference
from cli.jobs_double import pod

import ktrain
from ktrain import constants as c
from ktrain.errors import (
    ArgumentTypeError,
    JobFailedError,
    KtrainError,
    NotFoundError,
    RuntimeNotFoundError,
    UsageError,
    WaitTimeoutError,
)
from ktrain.python_api.trainer_client import print_packages

REPO = Path(__file__).resolve().parents[3]
NS = "team-a"
Obj = dict[str, Any]
SDK_NAME = re.compile(r"^[a-z][0-9a-f]{11}$")
FAILED = {
    "type": "Failed",
    "status": "True",
    "reason": "x",
    "message": "y",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        double.add_namespace(NS)
        for name in ("torch-distributed", "deepspeed-distributed", "torchtune-llama3.2-1b"):
            double.put_object(yaml.safe_load((REPO / "runtimes" / f"{name}.yaml").read_text()))
        yield double


@pytest.fixture
def client(srv: ApiServerDouble, tmp_path: Path) -> ktrain.TrainerClient:
    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    return ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=str(path)))


def train_fn(lr, epochs=1):  # type: ignore[no-untyped-def]
    print("lr", lr, "epochs", epochs)  # noqa: T201 - runs in the pod


def test_runtimes_are_the_clusters_with_the_sdk_fields(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    names = [r.name for r in client.list_runtimes()]
    assert sorted(names) == ["deepspeed-distributed", "torch-distributed", "torchtune-llama3.2-1b"]
    torch = client.get_runtime("torch-distributed")
    assert (torch.kind, torch.trainer.trainer_type, torch.trainer.framework) == (
        ktrain.RuntimeKind.CLUSTER_TRAINING_RUNTIME,
        ktrain.TrainerType.CUSTOM_TRAINER,
        "torch",
    )
    assert torch.trainer.image.startswith("pytorch/pytorch:") and torch.trainer.num_nodes == 1
    assert torch.trainer.command == ("torchrun",)
    assert client.get_runtime("deepspeed-distributed").trainer.command[0] == "mpirun"
    tune = client.get_runtime("torchtune-llama3.2-1b")
    assert tune.trainer.trainer_type == ktrain.TrainerType.BUILTIN_TRAINER and tune.trainer.command == ("tune", "run")
    # `nvidia.com/gpu: 2`, a number: the SDK reads it as a float and prints it so
    assert (tune.trainer.device, tune.trainer.device_count) == ("gpu", "2.0")
    # A namespaced TrainingRuntime of the same name comes first, as in the SDK.
    mine = yaml.safe_load((REPO / "runtimes" / "torch-distributed.yaml").read_text())
    mine["kind"] = "TrainingRuntime"
    mine["metadata"]["namespace"] = NS
    srv.put_object(mine)
    assert client.get_runtime("torch-distributed").kind == ktrain.RuntimeKind.TRAINING_RUNTIME
    with pytest.raises(RuntimeNotFoundError) as err:
        client.get_runtime("nope")
    assert isinstance(err.value, RuntimeError)  # the SDK raises RuntimeError


def test_train_submits_a_trainjob_with_its_code_and_every_call_is_a_new_job(
    srv: ApiServerDouble, client: ktrain.TrainerClient
) -> None:
    trainer = ktrain.CustomTrainer(func=train_fn, func_args={"lr": 0.1}, num_nodes=2)
    first = client.train(runtime="torch-distributed", trainer=trainer)
    second = client.train(runtime=client.get_runtime("torch-distributed"), trainer=trainer)
    assert first != second and SDK_NAME.match(first) and SDK_NAME.match(second)
    trainjob = srv.get_object("trainjobs", first, NS)
    assert trainjob["spec"]["runtimeRef"] == {
        "name": "torch-distributed",
        "kind": "ClusterTrainingRuntime",
        "apiGroup": "trainer.kubeflow.org",
    }
    assert trainjob["spec"]["trainer"]["numNodes"] == 2
    assert srv.get_object("jobsets", first, NS) is None  # the Trainer controller's to make
    maps = [m for m in srv.objects("configmaps", NS) if m["metadata"]["name"].startswith(f"{first}-code-")]
    assert len(maps) == 1 and maps[0]["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    assert "train_fn(**{'lr': 0.1})" in next(iter(maps[0]["data"].values()))
    named = client.train(trainer=trainer, name="mine")  # runtime=None: torch-distributed, as the SDK
    assert named == "mine"
    with pytest.raises(KtrainError, match="already exists"):
        client.train(trainer=trainer, name="mine")


def test_a_runtime_the_cluster_lacks_is_a_warning_as_in_the_cli(
    srv: ApiServerDouble, client: ktrain.TrainerClient
) -> None:
    trainer = ktrain.CustomTrainer(func=train_fn, func_args={"lr": 1})
    with pytest.warns(ktrain.KtrainWarning, match="runtime xgboost-distributed is not on the cluster") as caught:
        name = client.train(runtime="xgboost-distributed", trainer=trainer)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert srv.get_object("trainjobs", name, NS) is not None


def test_train_with_target_jobset_needs_no_controller(srv: ApiServerDouble, tmp_path: Path) -> None:
    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=str(path)), target="jobset")
    name = client.train(runtime="torch-distributed", trainer=ktrain.CustomTrainer(func=train_fn, func_args={"lr": 1}))
    assert srv.get_object("jobsets", name, NS) is not None and srv.get_object("trainjobs", name, NS) is None
    assert "xgboost-distributed" in [r.name for r in client.list_runtimes()]  # the bundled ones too


def test_train_is_rendered_first_so_mistakes_stop_before_the_cluster(
    srv: ApiServerDouble, client: ktrain.TrainerClient
) -> None:
    tune = ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=1))
    with pytest.raises(UsageError, match="need a torchtune runtime") as err:
        client.train(runtime="torch-distributed", trainer=tune)
    assert isinstance(err.value, ValueError)  # the SDK raises ValueError here
    with pytest.raises(UsageError, match="torchtune runtime runs its own recipe"):
        client.train(runtime="torchtune-llama3.2-1b", trainer=ktrain.CustomTrainer(func=train_fn, func_args={"lr": 1}))
    with pytest.raises(UsageError, match="func_args do not fit"):
        client.train(trainer=ktrain.CustomTrainer(func=train_fn, func_args={"rate": 1}))
    with pytest.raises(ArgumentTypeError, match=r"options\[0\] must be one of ActiveDeadlineSeconds, .* not object"):
        client.train(trainer=ktrain.CustomTrainer(func=train_fn), options=[object()])
    with pytest.raises(UsageError, match="num_nodes= is given twice"):
        client.train(trainer=ktrain.CustomTrainer(func=train_fn, num_nodes=2), num_nodes=3)
    assert srv.objects("trainjobs", NS) == [] and srv.objects("configmaps", NS) == []


def test_train_takes_ktrains_job_options_as_keywords(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    name = client.train(
        trainer=ktrain.CustomTrainer(func=train_fn, func_args={"lr": 1}),
        labels={"team": "a"},
        kueue_queue="team-q",
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
    )
    trainjob = srv.get_object("trainjobs", name, NS)
    assert trainjob["metadata"]["labels"] == {"team": "a", "kueue.x-k8s.io/queue-name": "team-q"}
    flags = next(p for p in trainjob["spec"]["runtimePatches"] if p["manager"] == "ktrain.io/cli-flags")
    assert "tolerations" in str(flags)


def _seed(srv: ApiServerDouble, client: ktrain.TrainerClient) -> tuple[str, dict[str, Any]]:
    """A TrainJob as `train` submits it, and its JobSet as the Trainer controller would make it."""
    name = client.train(trainer=ktrain.CustomTrainer(func=train_fn, func_args={"lr": 1}, num_nodes=2))
    jobset = ktrain.render(runtime="torch-distributed", name=name, namespace=NS, num_nodes=2)[0]
    jobset["metadata"]["ownerReferences"] = [owner_reference(srv.get_object("trainjobs", name, NS))]
    return name, srv.put_object(jobset)


def test_get_job_and_list_jobs_in_the_sdks_words(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    name, jobset = _seed(srv, client)
    job = client.get_job(name)
    assert (job.name, job.status, job.num_nodes, job.steps) == (name, "Created", 2, [])
    assert job.runtime.name == "torch-distributed" and job.creation_timestamp.year >= 2024
    pod(srv, jobset, rank=0)
    pod(srv, jobset, rank=1, phase="Pending")
    assert client.get_job(name).status == "Created"
    pod(srv, jobset, rank=1, phase="Running", suffix="x2")  # the newest pod of a rank is its step
    job = client.get_job(name)
    assert job.status == "Running"
    assert [(s.name, s.status) for s in job.steps] == [("node-0", "Running"), ("node-1", "Running")]
    srv.set_status("trainjobs", name, {"conditions": [FAILED]}, namespace=NS)
    assert client.get_job(name).status == "Failed"
    other, _ = _seed(srv, client)
    assert sorted(j.name for j in client.list_jobs()) == sorted([name, other])
    assert client.list_jobs(runtime=client.get_runtime("deepspeed-distributed")) == []
    with pytest.raises(NotFoundError) as err:
        client.get_job("gone")
    assert isinstance(err.value, RuntimeError)


def test_mpi_steps_count_the_launcher_as_node_0(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    from ktrain.jobs.plan import record_runtime

    objects = ktrain.render(runtime="deepspeed-distributed", name="mpi", namespace=NS, num_nodes=2, ssh_secret="k")
    # as `ktrain job create` submits it: the JobSet says which runtime it came from
    jobset = srv.put_object(next(o for o in record_runtime(objects, "deepspeed-distributed") if o["kind"] == "JobSet"))
    pod(srv, jobset, rjob="launcher", rank=0)
    pod(srv, jobset, rjob="node", rank=0)
    pod(srv, jobset, rjob="node", rank=1)
    steps = [s.name for s in client.get_job("mpi").steps]
    assert steps == ["node-0", "node-1", "node-2"]
    launcher = pod(srv, jobset, rjob="launcher", rank=0, suffix="x9")
    srv.append_log(launcher["metadata"]["name"], "from the launcher\n", namespace=NS)
    assert list(client.get_job_logs("mpi", step="node-0")) == ["from the launcher"]


def test_logs_of_a_step(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    name, jobset = _seed(srv, client)
    assert list(client.get_job_logs(name)) == []  # no pod yet: no lines, as the SDK
    first = pod(srv, jobset, rank=0)
    second = pod(srv, jobset, rank=1)
    srv.append_log(first["metadata"]["name"], "rank 0\n", namespace=NS)
    srv.append_log(second["metadata"]["name"], "rank 1\nbye\n", namespace=NS)
    assert list(client.get_job_logs(name)) == ["rank 0"]
    assert list(client.get_job_logs(name, step="node-1")) == ["rank 1", "bye"]
    with pytest.raises(UsageError, match="step must be node-N"):
        list(client.get_job_logs(name, step="worker-1"))  # checked when the step exists, as here
    assert list(client.get_job_logs(name, step="dataset-initializer")) == []


def test_wait_for_job_status(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    name, jobset = _seed(srv, client)
    seen: list[str] = []
    with pytest.raises(WaitTimeoutError) as timeout:
        client.wait_for_job_status(name, timeout=0.3, polling_interval=0.1, callbacks=[lambda j: seen.append(j.status)])
    assert isinstance(timeout.value, TimeoutError) and seen and set(seen) == {"Created"}
    pod(srv, jobset, rank=0)
    pod(srv, jobset, rank=1)
    assert client.wait_for_job_status(name, {"Running"}, timeout=5, polling_interval=0.1).status == "Running"
    srv.set_status("trainjobs", name, {"conditions": [FAILED]}, namespace=NS)
    with pytest.raises(JobFailedError, match=f"TrainJob {name} is Failed") as err:
        client.wait_for_job_status(name, timeout=5, polling_interval=0.1)
    assert isinstance(err.value, RuntimeError)
    assert client.wait_for_job_status(name, {"Failed", "Complete"}, timeout=5, polling_interval=0.1).status == "Failed"
    for bad, message in (
        ({"status": {"Done"}}, "must be a non-empty subset"),
        ({"status": "Complete"}, "status must be a set of statuses"),
        ({"timeout": 1, "polling_interval": 2}, "polling_interval must be less than timeout"),
        ({"timeout": -1}, "timeout must be a finite number > 0"),
        ({"callbacks": [1]}, r"callbacks\[0\] must be a function"),
    ):
        with pytest.raises(UsageError, match=message):
            client.wait_for_job_status(name, **bad)


def test_delete_job(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    name, _jobset = _seed(srv, client)
    client.delete_job(name)
    assert srv.get_object("trainjobs", name, NS) is None and srv.get_object("jobsets", name, NS) is None
    assert not [m for m in srv.objects("configmaps", NS) if m["metadata"]["name"].startswith(name)]
    with pytest.raises(NotFoundError):
        client.delete_job(name)


def test_backend_config(srv: ApiServerDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert ktrain.TrainerClient().namespace == NS  # the context's, as the SDK
    assert ktrain.TrainerClient(ktrain.KubernetesBackendConfig(namespace="other")).namespace == "other"

    class SlurmBackendConfig:  # no backend of the SDK's (its local ones: tests/unit/python_api/test_local_backend.py)
        pass

    with pytest.raises(ArgumentTypeError, match="backend_config must be a KubernetesBackendConfig, Local"):
        ktrain.TrainerClient(SlurmBackendConfig())
    with pytest.raises(UsageError, match="client_configuration"):
        ktrain.TrainerClient(ktrain.KubernetesBackendConfig(client_configuration=object()))
    with pytest.raises(UsageError, match="target must be one of jobset, trainjob"):
        ktrain.TrainerClient(target="pods")


def test_the_sdks_own_values_are_read_alike(srv: ApiServerDouble, tmp_path: Path) -> None:
    """A notebook that changed only some imports: the SDK's config and trainer objects work too."""
    from kubeflow.trainer import CustomTrainer, KubernetesBackendConfig

    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    client = ktrain.TrainerClient(KubernetesBackendConfig(config_file=str(path)))
    name = client.train(trainer=CustomTrainer(func=train_fn, func_args={"lr": 2}, num_nodes=3))
    assert srv.get_object("trainjobs", name, NS)["spec"]["trainer"]["numNodes"] == 3
    assert c.TRAINJOB_KIND == "TrainJob"


def test_the_packages_probe_prints_python_pip_and_gpus_as_the_sdks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`get_runtime_packages` runs `print_packages` in the image: the Python version, `pip list`, and
    `nvidia-smi` only where there is one (the SDK's function's lines, word for word)."""
    import sys

    monkeypatch.setenv("PATH", str(tmp_path))  # neither pip nor nvidia-smi
    print_packages()
    assert (
        capsys.readouterr().out == f"Python: {sys.version}\nUnable to get installed packages: pip command not found\n"
    )
    for tool, says in (("pip", "numpy 2.0.0"), ("nvidia-smi", "GPU 0: H100")):
        (tmp_path / tool).write_text(f"#!/bin/sh\necho '{says}'\n")
        (tmp_path / tool).chmod(0o755)
    print_packages()
    assert capsys.readouterr().out == (
        f"Python: {sys.version}\nnumpy 2.0.0\n\nAvailable GPUs on the single training node\nGPU 0: H100\n\n"
    )


def test_every_method_of_the_sdks_client_with_its_parameters() -> None:
    import dataclasses
    import inspect

    from kubeflow import trainer as sdk

    theirs = {n: m for n, m in vars(sdk.TrainerClient).items() if callable(m) and not n.startswith("_")}
    assert {"get_job_events", "get_runtime_packages"} <= set(theirs)
    for name, method in theirs.items():
        ours = inspect.signature(getattr(ktrain.TrainerClient, name)).parameters
        assert list(inspect.signature(method).parameters) == [p for p in ours if p != "job_options"], name
    assert [f.name for f in dataclasses.fields(ktrain.Event)] == [f.name for f in dataclasses.fields(sdk.Event)]


# --- get_runtime_packages ---------------------------------------------------------------------------


def _finish(srv: ApiServerDouble, output: str, *, failed: bool = False) -> None:
    """The Trainer controller and the pod: the submitted job's one node runs, prints, and ends."""
    (trainjob,) = srv.objects("trainjobs", NS)
    name = trainjob["metadata"]["name"]
    jobset = ktrain.render(runtime=trainjob["spec"]["runtimeRef"]["name"], name=name, namespace=NS, ssh_secret="k")
    jobset = srv.put_object(next(o for o in jobset if o["kind"] == "JobSet"))
    rjob = "launcher" if "launcher" in [r["name"] for r in jobset["spec"]["replicatedJobs"]] else "node"
    node = pod(srv, jobset, rjob=rjob, rank=0)
    srv.append_log(node["metadata"]["name"], output, namespace=NS)
    condition = "Failed" if failed else "Complete"
    stamp = "2025-01-01T00:00:00Z"
    srv.set_status(
        "trainjobs",
        name,
        {
            "conditions": [
                {"type": condition, "status": "True", "reason": "x", "message": "y", "lastTransitionTime": stamp}
            ]
        },
        namespace=NS,
    )


def _submitted(srv: ApiServerDouble) -> list[Obj]:
    """The TrainJobs applied (not dry runs)."""
    import json

    return [
        json.loads(r.body)
        for r in srv.requests
        if r.verb == "apply" and r.resource == "trainjobs.trainer.kubeflow.org" and not r.query.get("dryRun")
    ]


def _trainjob_of(srv: ApiServerDouble) -> Obj:
    (applied,) = _submitted(srv)
    return applied


def test_runtime_packages_run_the_sdks_probe_on_one_node_and_delete_it(
    srv: ApiServerDouble,
    client: ktrain.TrainerClient,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ktrain.python_api import trainer_client

    waited: list[str] = []

    def wait(self: ktrain.TrainerClient, name: str, *args: Any, **kwargs: Any) -> Any:
        waited.append(name)
        _finish(srv, "Python: 3.11.9\nPackage Version\ntorch 2.7.1\n")
        return original(self, name, timeout=5, polling_interval=0.1)

    original = trainer_client.TrainerClient.wait_for_job_status
    monkeypatch.setattr(trainer_client.TrainerClient, "wait_for_job_status", wait)
    assert client.get_runtime_packages(client.get_runtime("torch-distributed")) is None
    assert capsys.readouterr().out == "Python: 3.11.9\nPackage Version\ntorch 2.7.1\n"
    trainjob = _trainjob_of(srv)
    assert waited == [trainjob["metadata"]["name"]]
    spec = trainjob["spec"]
    assert spec["runtimeRef"]["name"] == "torch-distributed"
    assert spec["trainer"]["numNodes"] == 1
    assert spec["trainer"]["resourcesPerNode"] == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}
    assert spec["trainer"]["command"][-2:] == ["torchrun", "ktrain_train.py"]  # after ktrain's code wrapper
    code = next(r.body for r in srv.requests if r.verb == "apply" and r.resource == "configmaps")
    assert b"def print_packages" in code and b"sys.version" in code and b"nvidia-smi" in code
    assert srv.objects("trainjobs", NS) == []  # deleted afterwards


def test_runtime_packages_on_mpi_run_one_rank(
    srv: ApiServerDouble, client: ktrain.TrainerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ktrain.python_api import trainer_client

    def wait(self: ktrain.TrainerClient, name: str, *args: Any, **kwargs: Any) -> Any:
        _finish(srv, "Python: 3.10\n")
        return original(self, name, timeout=5, polling_interval=0.1)

    original = trainer_client.TrainerClient.wait_for_job_status
    monkeypatch.setattr(trainer_client.TrainerClient, "wait_for_job_status", wait)
    client.get_runtime_packages("deepspeed-distributed")
    spec = _trainjob_of(srv)["spec"]
    assert spec["trainer"]["numNodes"] == 1
    # ktrain's code wrapper (which first copies the code to the hosts), then the function's command:
    # one rank, on the launcher, as the SDK's `mpirun -np 1` (no hostfile).
    assert spec["trainer"]["command"][-5:] == ["mpirun", "-np", "1", "python3", "ktrain_train.py"]
    assert srv.objects("trainjobs", NS) == []


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param("failed", id="the job fails"),
        pytest.param("timeout", id="the wait gives up"),
    ],
)
def test_runtime_packages_delete_the_job_when_waiting_fails(
    srv: ApiServerDouble, client: ktrain.TrainerClient, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    from ktrain.python_api import trainer_client

    def wait(self: ktrain.TrainerClient, name: str, *args: Any, **kwargs: Any) -> Any:
        if failure == "failed":
            _finish(srv, "Traceback\n", failed=True)
            return original(self, name, timeout=5, polling_interval=0.1)
        return original(self, name, timeout=0.3, polling_interval=0.1)

    original = trainer_client.TrainerClient.wait_for_job_status
    monkeypatch.setattr(trainer_client.TrainerClient, "wait_for_job_status", wait)
    raised = WaitTimeoutError if failure == "timeout" else JobFailedError
    with pytest.raises(raised):
        client.get_runtime_packages("torch-distributed")
    assert len(_submitted(srv)) == 1 and srv.objects("trainjobs", NS) == []
    assert not [m for m in srv.objects("configmaps", NS) if m["metadata"]["name"].endswith("-code")]


def test_runtime_packages_refuse_a_builtin_trainer_and_submit_nothing(
    srv: ApiServerDouble, client: ktrain.TrainerClient
) -> None:
    with pytest.raises(UsageError, match=r"^Cannot get Runtime packages for BuiltinTrainer$") as err:
        client.get_runtime_packages(client.get_runtime("torchtune-llama3.2-1b"))
    assert isinstance(err.value, ValueError)  # the SDK's ValueError
    with pytest.raises(NotFoundError):
        client.get_runtime_packages("nope")
    assert _submitted(srv) == []


def test_a_failed_delete_is_a_warning_and_the_first_error_stands(
    srv: ApiServerDouble, client: ktrain.TrainerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ktrain.python_api import trainer_client

    def wait(self: ktrain.TrainerClient, name: str, *args: Any, **kwargs: Any) -> Any:
        srv.forbid("delete", "trainjobs", namespace=NS)
        return original(self, name, timeout=0.3, polling_interval=0.1)

    original = trainer_client.TrainerClient.wait_for_job_status
    monkeypatch.setattr(trainer_client.TrainerClient, "wait_for_job_status", wait)
    with (
        pytest.warns(ktrain.KtrainWarning, match="could not delete job .* made by get_runtime_packages"),
        pytest.raises(WaitTimeoutError),  # the wait's error, not the delete's
    ):
        client.get_runtime_packages("torch-distributed")
    assert len(srv.objects("trainjobs", NS)) == 1


def test_runtime_packages_on_a_local_backend_run_the_probe_here(capsys: pytest.CaptureFixture[str]) -> None:
    """The SDK's container backend runs the probe in the runtime's image; ktrain's local backends run
    the same one-node job as on a cluster: here, on this machine's Python (for processes)."""
    import shutil

    local = ktrain.TrainerClient(ktrain.LocalProcessBackendConfig())
    local.get_runtime_packages("xgboost-distributed")  # a runtime whose launcher is python3
    out = capsys.readouterr().out
    assert out.startswith("Python: 3.")
    assert ("Package" in out) == (shutil.which("pip") is not None)  # `pip list`'s header (the pods get our PATH)
    assert local.list_jobs() == []  # deleted afterwards
    with pytest.raises(UsageError, match="BuiltinTrainer"):
        local.get_runtime_packages("torchtune-llama3.2-1b")
