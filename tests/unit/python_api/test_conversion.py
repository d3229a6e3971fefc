"""ktrain's `TrainerClient().train` against the Kubeflow SDK's (0.5, the reference): the same arguments
must submit the same TrainJob.

The SDK runs for real with its Kubernetes backend, reading the bundled runtimes as the cluster's
ClusterTrainingRuntimes and its create call captured (no cluster). ktrain's side is what its
`TrainerClient().train` submits with `target="trainjob"`, rendered without a cluster
(`test_the_local_capture_is_what_reaches_the_cluster` holds that to a real submission to the
API-server double). The TrainJobs are compared field by field (runtime, nodes, resources, env, image,
torchtune command and args, initializers, the name's form); where ktrain differs on purpose (how the
function travels: docs/python-api.md, "What differs from the SDK") the two trainer commands are run
here, with a function that records the arguments it was called with, and must call it alike.
"""

from __future__ import annotations

import ast
import copy
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from conftest import SHARED
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kubeflow import trainer as sdk
from kubeflow.trainer import options as sdk_options
from kubeflow.trainer.backends.kubernetes.backend import KubernetesBackend
from kubernetes import client as k8s
from test_code_run import _run_trainer

import ktrain
import ktrain.options as opt
from ktrain import constants as c
from ktrain.errors import ArgumentTypeError, KtrainError, UsageError, ValidationFailedError
from ktrain.python_api.conversion import runtime_name

REPO = Path(__file__).resolve().parents[3]
NS = "team-a"
TUNE = "torchtune-llama3.2-1b"
SDK_NAME = re.compile(r"^[a-z][0-9a-f]{11}$")
RUNTIMES = {
    doc["metadata"]["name"]: doc
    for path in sorted((REPO / "runtimes").glob("*.yaml"))
    for doc in [yaml.safe_load(path.read_text())]
}
Obj = dict[str, Any]


# --- the SDK, its create call captured ------------------------------------------------------------


class _Answer:
    """What `async_req=True` returns: `.get(timeout)` gives the answer or raises."""

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error

    def get(self, timeout: float | None = None) -> Any:
        if self.error is not None:
            raise self.error
        return copy.deepcopy(self.value)


class CapturingCustomObjectsApi:
    """The cluster as the SDK's Kubernetes backend sees it: the bundled runtimes as its
    ClusterTrainingRuntimes, no namespaced ones; a create is recorded."""

    def __init__(self) -> None:
        self.created: list[Obj] = []

    def get_namespaced_custom_object(self, *args: Any, **kwargs: Any) -> _Answer:
        return _Answer(error=k8s.ApiException(status=404))

    def get_cluster_custom_object(self, group: str, version: str, plural: str, name: str, **kwargs: Any) -> _Answer:
        return _Answer(RUNTIMES[name])

    def create_namespaced_custom_object(
        self, group: str, version: str, namespace: str, plural: str, body: Obj, **kwargs: Any
    ) -> None:
        assert (group, version, namespace, plural) == ("trainer.kubeflow.org", "v1alpha1", NS, "trainjobs")
        self.created.append(body)


@pytest.fixture(scope="module")
def sdk_client() -> Iterator[tuple[Any, CapturingCustomObjectsApi]]:
    api = CapturingCustomObjectsApi()
    with mock.patch.object(KubernetesBackend, "verify_backend", lambda self: None):
        client = sdk.TrainerClient(sdk.KubernetesBackendConfig(namespace=NS, client_configuration=k8s.Configuration()))
    client.backend.custom_api = api
    yield client, api


def sdk_trainjob(sdk_client: tuple[Any, CapturingCustomObjectsApi], **train: Any) -> Obj:
    client, api = sdk_client
    name = client.train(**train)
    body = api.created.pop()
    assert body["metadata"]["name"] == name
    return body


# --- ktrain, rendered as TrainerClient().train would submit it -------------------------------------


class Captured:
    def __init__(self) -> None:
        self.trainjob: Obj = {}
        self.objects: list[Obj] = []


@pytest.fixture(scope="module")
def ktrain_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ktrain.TrainerClient, Captured]]:
    from ktrain.service.render import render_request
    from ktrain.service.submit import objects_for_target

    kubeconfig = tmp_path_factory.mktemp("kube") / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": NS}}],
                "current-context": "c",
            }
        )
    )
    client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=str(kubeconfig)))
    captured = Captured()

    def submit(request: Any, registry: Any, *, target: str = "jobset", depth: int = 0) -> str:
        assert target == "trainjob"
        request.default_namespace = NS  # the context's, as the real submit sets it
        outcome = render_request(request, registry)
        captured.trainjob = objects_for_target(outcome, request, target)[0]
        captured.objects = outcome.result.objects
        return str(outcome.job.name)

    client.backend.client._submit = submit  # type: ignore[attr-defined]
    yield client, captured


def ktrain_trainjob(ktrain_client: tuple[ktrain.TrainerClient, Captured], **train: Any) -> Obj:
    client, captured = ktrain_client
    name = client.train(**train)
    assert captured.trainjob["metadata"]["name"] == name
    return captured.trainjob


# --- comparing --------------------------------------------------------------------------------------


def _quantity(value: Any) -> Any:
    """4, 4.0 and "4" are the same Kubernetes quantity; "8Gi" stays as written."""
    try:
        return Decimal(str(value)).normalize()
    except ArithmeticError:
        return value


def _resources(trainer: Obj) -> Obj:
    resources = trainer.get("resourcesPerNode") or {}
    return {kind: {k: _quantity(v) for k, v in (resources.get(kind) or {}).items()} for kind in resources}


def assert_same_trainjob(sdk_job: Obj, ktrain_job: Obj, *, command: bool) -> None:
    assert SDK_NAME.match(sdk_job["metadata"]["name"]) and SDK_NAME.match(ktrain_job["metadata"]["name"])
    assert (sdk_job["apiVersion"], sdk_job["kind"]) == (ktrain_job["apiVersion"], ktrain_job["kind"])
    # ktrain also writes the CRD's default apiGroup
    assert sdk_job["spec"]["runtimeRef"] == {
        k: v for k, v in ktrain_job["spec"]["runtimeRef"].items() if k != "apiGroup"
    }
    ours, theirs = ktrain_job["spec"].get("trainer") or {}, sdk_job["spec"].get("trainer") or {}
    for field in ("numNodes", "image", "env"):
        assert ours.get(field) == theirs.get(field), field
    assert _resources(ours) == _resources(theirs)
    if command:
        assert (ours.get("command"), ours.get("args") or []) == (theirs.get("command"), theirs.get("args") or [])
    ours_init, theirs_init = ktrain_job["spec"].get("initializer") or {}, sdk_job["spec"].get("initializer") or {}
    assert ours_init.keys() == theirs_init.keys()
    for part, source in theirs_init.items():
        assert ours_init[part]["storageUri"] == source["storageUri"], part
        assert ours_init[part].get("env", []) == source.get("env") or [], part  # the SDK sends `env: []` for none


def both(sdk_client: Any, ktrain_client: Any, **train: Any) -> tuple[Obj | BaseException, Obj | BaseException]:
    """Both TrainJobs, or the error each raised (the SDK: ValueError for bad input)."""
    results: list[Obj | BaseException] = []
    for make in (sdk_trainjob, ktrain_trainjob):
        client = sdk_client if make is sdk_trainjob else ktrain_client
        arguments = train if make is ktrain_trainjob else _as_sdk(train)
        try:
            results.append(make(client, **arguments))
        except (ValueError, KtrainError) as exc:
            results.append(exc)
    return results[0], results[1]


def _as_sdk(value: Any) -> Any:
    """The same argument built from the SDK's classes (ktrain's mirror them field for field)."""
    import dataclasses
    import enum

    if isinstance(value, dict):
        return {k: _as_sdk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_sdk(v) for v in value]
    if isinstance(value, enum.Enum):
        return getattr(sdk, type(value).__name__)(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        klass = getattr(sdk, type(value).__name__, None) or getattr(sdk_options, type(value).__name__)
        return klass(**{f.name: _as_sdk(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init})
    return value


# --- CustomTrainer ---------------------------------------------------------------------------------


def record_call(lr, epochs=1, **rest):  # type: ignore[no-untyped-def]
    print(repr({"lr": lr, "epochs": epochs, **rest}))  # noqa: T201 - runs in the pod


RESOURCE_NAMES = [
    "cpu",
    "CPU",
    "memory",
    "gpu",
    "GPU",
    "nvidia.com/gpu",
    "mig-1g.5gb",
    "example.com/Custom-NPU",
    "storage",
]
resource_values = st.one_of(st.integers(1, 64), st.sampled_from(["500m", "8Gi", "2", "0.5"]))
names = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True)
plain_text = st.text(st.characters(codec="ascii", exclude_characters="\x00"), max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    runtime=st.sampled_from(["torch-distributed", "xgboost-distributed", "jax-distributed"]),
    num_nodes=st.one_of(st.none(), st.integers(1, 8)),
    resources=st.one_of(st.none(), st.dictionaries(st.sampled_from(RESOURCE_NAMES), resource_values, max_size=4)),
    env=st.one_of(st.none(), st.dictionaries(names, plain_text, max_size=3)),
    image=st.one_of(st.none(), st.sampled_from(["my/trainer:1", "registry.local:5000/t@sha256:" + "a" * 64])),
)
def test_custom_trainer_submits_the_sdks_trainjob(
    sdk_client: Any, ktrain_client: Any, runtime: str, num_nodes: Any, resources: Any, env: Any, image: Any
) -> None:
    trainer = ktrain.CustomTrainer(
        func=record_call, func_args={"lr": 0.1}, num_nodes=num_nodes, resources_per_node=resources, env=env, image=image
    )
    theirs, ours = both(sdk_client, ktrain_client, runtime=runtime, trainer=trainer)
    if isinstance(theirs, BaseException):  # e.g. whole GPUs and a MIG slice together
        assert isinstance(ours, UsageError) and isinstance(ours, ValueError), (theirs, ours)
        return
    assert not isinstance(ours, BaseException), ours
    assert_same_trainjob(theirs, ours, command=False)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    num_nodes=st.one_of(st.none(), st.integers(1, 4)),
    resources=st.one_of(st.none(), st.fixed_dictionaries({"cpu": st.integers(1, 8)})),
    env=st.one_of(st.none(), st.dictionaries(names, plain_text, max_size=2)),
)
def test_custom_trainer_container_submits_the_sdks_trainjob(
    sdk_client: Any, ktrain_client: Any, num_nodes: Any, resources: Any, env: Any
) -> None:
    trainer = ktrain.CustomTrainerContainer(
        image="my/trainer:2", num_nodes=num_nodes, resources_per_node=resources, env=env
    )
    theirs, ours = both(sdk_client, ktrain_client, runtime="torch-distributed", trainer=trainer)
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException), (theirs, ours)
    assert_same_trainjob(theirs, ours, command=True)
    assert "command" not in ours["spec"]["trainer"]  # the image's own command, as the SDK leaves it


def test_every_call_is_a_new_job_named_as_the_sdk_names_it(sdk_client: Any, ktrain_client: Any) -> None:
    trainer = ktrain.CustomTrainer(func=record_call, func_args={"lr": 0.1})
    for make, client in ((sdk_trainjob, sdk_client), (ktrain_trainjob, ktrain_client)):
        arguments = {"trainer": trainer if make is ktrain_trainjob else _as_sdk(trainer)}
        first, second = make(client, **arguments), make(client, **arguments)
        assert first["metadata"]["name"] != second["metadata"]["name"]
        assert SDK_NAME.match(first["metadata"]["name"]) and SDK_NAME.match(second["metadata"]["name"])


# --- what the function's call means: both trainer commands, run --------------------------------------

STUBS = {
    # torchrun and mpirun run the program once; `python -m pip` is recorded, not run.
    "torchrun": "#!{python}\nimport os, sys\nargs = [a for a in sys.argv[1:] if not a.startswith('--')]\n"
    "os.execv(sys.executable, [sys.executable, *args])\n",
    "python": '#!/bin/sh\nif [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> "$PIP_LOG"; exit 0; fi\n'
    'exec {python} "$@"\n',
}


def run_sdk_command(trainjob: Obj, workdir: Path) -> subprocess.CompletedProcess[str]:
    """The SDK's trainer command as its pod runs it (`bash -c` the script, which writes the function
    to a file and runs it with torchrun), in `workdir`."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, text in STUBS.items():
        path = bin_dir / name
        path.write_text(text.format(python=sys.executable))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "PIP_LOG": str(workdir / "pip.log"), "HOME": str(workdir)}
    command = trainjob["spec"]["trainer"]["command"]
    return subprocess.run(command, env=env, cwd=workdir, capture_output=True, text=True, timeout=60, check=False)


def calls(result: subprocess.CompletedProcess[str]) -> list[Any]:
    assert result.returncode == 0, result.stderr
    return [ast.literal_eval(line) for line in result.stdout.splitlines() if line.startswith("{")]


keys = st.text(st.characters(codec="ascii", exclude_characters="$`\\\x00"), max_size=5)
literals = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(st.characters(exclude_characters="$`\\\x00", exclude_categories=("Cs",)), max_size=10),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(keys, inner, max_size=3),
    ),
    max_leaves=8,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lr=literals, extra=st.dictionaries(st.sampled_from(["epochs", "batch", "name"]), literals, max_size=2))
def test_the_function_is_called_with_the_same_arguments(
    sdk_client: Any, ktrain_client: Any, tmp_path_factory: pytest.TempPathFactory, lr: Any, extra: Any
) -> None:
    func_args = {"lr": lr, **extra}
    trainer = ktrain.CustomTrainer(func=record_call, func_args=func_args, packages_to_install=["numpy"])
    theirs, ours = both(sdk_client, ktrain_client, runtime="torch-distributed", trainer=trainer)
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException), (theirs, ours)
    _client, captured = ktrain_client
    sdk_run = run_sdk_command(theirs, tmp_path_factory.mktemp("sdk"))
    ktrain_run = _run_trainer(captured.objects, tmp_path_factory.mktemp("ktrain"))
    assert calls(sdk_run) == calls(ktrain_run) == [{"epochs": 1, **func_args}]


def test_dollars_backquotes_and_backslashes_reach_the_function_unchanged(
    sdk_client: Any, ktrain_client: Any, tmp_path: Path
) -> None:
    """The one difference in meaning: the SDK's heredoc is unquoted, so bash expands `$HOME`, runs
    backquotes and eats backslashes in the function's arguments (and source); ktrain sends the
    bytes as written (docs/python-api.md)."""
    func_args = {"lr": "$HOME `echo hi` \\n"}
    trainer = ktrain.CustomTrainer(func=record_call, func_args=func_args)
    theirs, ours = both(sdk_client, ktrain_client, runtime="torch-distributed", trainer=trainer)
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException)
    _client, captured = ktrain_client
    assert calls(_run_trainer(captured.objects, tmp_path / "ktrain")) == [{"epochs": 1, **func_args}]
    assert calls(run_sdk_command(theirs, tmp_path / "sdk")) != [{"epochs": 1, **func_args}]


def test_func_args_the_pod_could_not_read_are_refused_up_front(
    sdk_client: Any, ktrain_client: Any, tmp_path: Path
) -> None:
    """The SDK writes repr() into the script and the pod fails (NameError on `nan`); ktrain says so."""
    trainer = ktrain.CustomTrainer(func=record_call, func_args={"lr": float("nan")})
    theirs, ours = both(sdk_client, ktrain_client, runtime="torch-distributed", trainer=trainer)
    assert not isinstance(theirs, BaseException)
    failed = run_sdk_command(theirs, tmp_path)
    assert failed.returncode != 0 and "NameError: name 'nan' is not defined" in failed.stderr
    assert isinstance(ours, UsageError) and "only Python literals travel" in ours.message


# --- BuiltinTrainer (torchtune) and initializers -------------------------------------------------------

MODULES = ["q_proj", "k_proj", "v_proj", "output_proj"]
lora = st.builds(
    ktrain.LoraConfig,
    apply_lora_to_mlp=st.one_of(st.none(), st.booleans()),
    apply_lora_to_output=st.one_of(st.none(), st.booleans()),
    lora_attn_modules=st.lists(st.sampled_from(MODULES), min_size=1, max_size=4, unique=True),
    lora_rank=st.one_of(st.none(), st.integers(1, 64)),
    lora_alpha=st.one_of(st.none(), st.integers(1, 128)),
    lora_dropout=st.one_of(st.none(), st.floats(0, 0.99), st.just(0)),
    quantize_base=st.one_of(st.none(), st.booleans()),
    use_dora=st.one_of(st.none(), st.booleans()),
)
instruct = st.builds(
    ktrain.TorchTuneInstructDataset,
    source=st.one_of(st.none(), st.sampled_from(list(ktrain.DataFormat))),
    split=st.one_of(st.none(), st.sampled_from(["train", "train[:10%]", ""])),
    train_on_input=st.one_of(st.none(), st.booleans()),
    new_system_prompt=st.one_of(st.none(), st.sampled_from(["be brief", "You are a helpful assistant."])),
    column_map=st.one_of(st.none(), st.just({"input": "question", "output": "answer"})),
)
tune_config = st.builds(
    ktrain.TorchTuneConfig,
    dtype=st.one_of(st.none(), st.sampled_from(list(ktrain.DataType))),
    batch_size=st.one_of(st.none(), st.integers(1, 64)),
    epochs=st.one_of(st.none(), st.integers(1, 10)),
    loss=st.one_of(st.none(), st.just(ktrain.Loss.CEWithChunkedOutputLoss)),
    num_nodes=st.one_of(st.none(), st.just(1)),
    peft_config=st.one_of(st.none(), lora),
    dataset_preprocess_config=st.one_of(st.none(), instruct),
    resources_per_node=st.one_of(st.none(), st.just({"gpu": 1}), st.just({"gpu": 2, "memory": "64Gi"})),
)
s3_fields = {
    "ignore_patterns": st.one_of(st.none(), st.just(["*.bin", "*.pt"])),
    "endpoint": st.one_of(st.none(), st.just("https://minio.local:9000")),
    "access_key_id": st.one_of(st.none(), st.just("AKIA")),
    "secret_access_key": st.one_of(st.none(), st.just("s3cr3t")),
    "region": st.one_of(st.none(), st.just("eu-west-1")),
    "role_arn": st.one_of(st.none(), st.just("arn:aws:iam::1:role/r")),
}
models = st.one_of(
    st.builds(
        ktrain.HuggingFaceModelInitializer,
        storage_uri=st.just("hf://meta-llama/Llama-3.2-1B-Instruct"),
        ignore_patterns=st.one_of(st.none(), st.just(["*.safetensors"])),
        access_token=st.one_of(st.none(), st.just("hf_token")),
    ),
    st.builds(ktrain.HuggingFaceModelInitializer, storage_uri=st.just("hf://meta-llama/Llama-3.2-1B-Instruct")),
    st.builds(ktrain.S3ModelInitializer, storage_uri=st.just("s3://models/llama"), **s3_fields),
)
datasets = st.builds(ktrain.S3DatasetInitializer, storage_uri=st.just("s3://data/alpaca"), **s3_fields)
initializers = st.one_of(
    st.none(), st.builds(ktrain.Initializer, dataset=st.one_of(st.none(), datasets), model=st.one_of(st.none(), models))
)


def _quantized(config: ktrain.TorchTuneConfig) -> bool:
    return config.peft_config is not None and bool(config.peft_config.quantize_base)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=tune_config, initializer=initializers)
def test_builtin_trainer_submits_the_sdks_trainjob(
    sdk_client: Any, ktrain_client: Any, config: ktrain.TorchTuneConfig, initializer: Any
) -> None:
    # The Trainer's torchtune rule (ktrain checks it as the controller does; the SDK does not):
    # QLoRA on this model runs on one GPU.
    assume(not _quantized(config) or config.resources_per_node == {"gpu": 1})
    theirs, ours = both(
        sdk_client, ktrain_client, runtime=TUNE, trainer=ktrain.BuiltinTrainer(config=config), initializer=initializer
    )
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException), (theirs, ours)
    assert_same_trainjob(theirs, ours, command=True)


@pytest.mark.parametrize("uri", ["hf://tatsu-lab/alpaca", "hf://tatsu-lab/alpaca/data", "hf://t/a/train.json"])
def test_a_hugging_face_dataset_is_found_where_the_sdk_says(sdk_client: Any, ktrain_client: Any, uri: str) -> None:
    initializer = ktrain.Initializer(dataset=ktrain.HuggingFaceDatasetInitializer(storage_uri=uri))
    trainer = ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=1))
    theirs, ours = both(sdk_client, ktrain_client, runtime=TUNE, trainer=trainer, initializer=initializer)
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException), (theirs, ours)
    assert_same_trainjob(theirs, ours, command=True)


def test_a_hugging_face_uri_without_its_scheme_gets_it(sdk_client: Any, ktrain_client: Any) -> None:
    """The initializer reads only hf:// and s3:// URIs: the SDK sends a bare name as given (and
    computes the dataset path as if it had the prefix); ktrain adds the prefix."""
    initializer = ktrain.Initializer(model=ktrain.HuggingFaceModelInitializer(storage_uri="meta-llama/Llama-3.2-1B"))
    trainer = ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=1))
    theirs, ours = both(sdk_client, ktrain_client, runtime=TUNE, trainer=trainer, initializer=initializer)
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException)
    assert theirs["spec"]["initializer"]["model"]["storageUri"] == "meta-llama/Llama-3.2-1B"
    assert ours["spec"]["initializer"]["model"]["storageUri"] == "hf://meta-llama/Llama-3.2-1B"


def test_torchtune_values_the_sdk_passes_on_and_ktrain_refuses(sdk_client: Any, ktrain_client: Any) -> None:
    for config, message in (
        (ktrain.TorchTuneConfig(epochs=0), "epochs must be between 1"),
        (ktrain.TorchTuneConfig(batch_size=-1), "batch_size must be between 1"),
        (ktrain.TorchTuneConfig(peft_config=ktrain.LoraConfig(lora_attn_modules=[])), "at least one attention module"),
        (ktrain.TorchTuneConfig(peft_config=ktrain.LoraConfig(lora_attn_modules=["up_proj"])), "unknown module"),
        (ktrain.TorchTuneConfig(peft_config=ktrain.LoraConfig(lora_rank=0)), "lora_rank must be between 1"),
    ):
        theirs, ours = both(sdk_client, ktrain_client, runtime=TUNE, trainer=ktrain.BuiltinTrainer(config=config))
        assert not isinstance(theirs, BaseException), theirs
        assert isinstance(ours, UsageError) and message in ours.message, ours


def test_trainers_on_the_wrong_runtime_are_refused_by_both(sdk_client: Any, ktrain_client: Any) -> None:
    for runtime, trainer in (
        (TUNE, ktrain.CustomTrainer(func=record_call, func_args={"lr": 1})),
        ("torch-distributed", ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=1))),
    ):
        theirs, ours = both(sdk_client, ktrain_client, runtime=runtime, trainer=trainer)
        assert isinstance(theirs, ValueError), theirs
        assert isinstance(ours, UsageError) and isinstance(ours, ValueError), ours


# --- the capture above is what a submission sends --------------------------------------------------------


@pytest.mark.double
def test_the_local_capture_is_what_reaches_the_cluster(ktrain_client: Any, tmp_path: Path) -> None:
    from apiserver import ApiServerDouble

    arguments = {
        "runtime": TUNE,
        "trainer": ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=2, peft_config=ktrain.LoraConfig())),
        "initializer": ktrain.Initializer(model=ktrain.HuggingFaceModelInitializer(storage_uri="hf://m/n")),
        "name": "same",
        "options": [opt.Labels({"team": "ml"}), opt.ActiveDeadlineSeconds(600), RUNTIME_PATCHES["placement"]],
    }
    local = ktrain_trainjob(ktrain_client, **arguments)
    with ApiServerDouble() as srv:
        srv.add_namespace(NS)
        srv.put_object(copy.deepcopy(RUNTIMES[TUNE]))
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
        client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=str(kubeconfig)))
        assert client.train(**arguments) == "same"
        stored = srv.get_object("trainjobs", "same", NS)
    assert stored["spec"] == local["spec"]
    assert {k: v for k, v in stored["metadata"].items() if k in local["metadata"]} == local["metadata"]


# --- options=[...]: the SDK's training options ------------------------------------------------------------

# What ktrain adds to every TrainJob of its own (docs/python-api.md): its bookkeeping annotations
# (`ktrain.io/nodes`), runtime patches under its own managers (`ktrain.io/...`: the function's code),
# the CRD's defaults (managedBy, suspend, runtimeRef.apiGroup) and the namespace.
KTRAIN_PREFIX = "ktrain.io/"


def _normalized(job: Obj) -> Obj:
    """A TrainJob without what ktrain adds of its own, for comparing whole TrainJobs."""
    job = copy.deepcopy(job)
    meta, spec = job["metadata"], job["spec"]
    meta.pop("namespace", None)
    if SDK_NAME.match(meta["name"]):
        meta["name"] = "<generated>"
    annotations = {k: v for k, v in (meta.pop("annotations", None) or {}).items() if not k.startswith(KTRAIN_PREFIX)}
    if annotations:
        meta["annotations"] = annotations
    if not meta.get("labels"):
        meta.pop("labels", None)
    spec.pop("managedBy", None)
    assert spec.pop("suspend", False) is False
    spec["runtimeRef"].pop("apiGroup", None)
    patches = [p for p in spec.pop("runtimePatches", None) or [] if not p["manager"].startswith(KTRAIN_PREFIX)]
    if patches:
        spec["runtimePatches"] = patches
    trainer = spec.get("trainer") or {}
    if not trainer.get("args", True):
        del trainer["args"]  # an empty list, as no arguments
    if "trainer" in spec and not trainer:
        del spec["trainer"]
    return job


def assert_same_with_options(theirs: Obj | BaseException, ours: Obj | BaseException) -> None:
    assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException), (theirs, ours)
    assert _normalized(ours) == _normalized(theirs)


def _pod_patch(spec: Any, *, job: str = "node", metadata: Obj | None = None) -> opt.RuntimePatch:
    return opt.RuntimePatch(
        training_runtime_spec=opt.TrainingRuntimeSpecPatch(
            template=opt.JobSetTemplatePatch(
                spec=opt.JobSetSpecPatch(
                    replicated_jobs=[
                        opt.ReplicatedJobPatch(
                            name=job,
                            template=opt.JobTemplatePatch(
                                spec=opt.JobSpecPatch(template=opt.PodTemplatePatch(metadata=metadata, spec=spec))
                            ),
                        )
                    ]
                )
            )
        )
    )


# RuntimePatch shapes: the JobSet's metadata, a pod's placement, a volume and its mount, the pod's
# metadata and security, and empty parts the SDK leaves out.
RUNTIME_PATCHES = {
    "jobset-metadata": opt.RuntimePatch(
        training_runtime_spec=opt.TrainingRuntimeSpecPatch(
            template=opt.JobSetTemplatePatch(metadata={"labels": {"app": "training"}, "annotations": {"a": "b"}})
        )
    ),
    "placement": _pod_patch(
        opt.PodSpecPatch(
            node_selector={"node-type": "gpu-a100"},
            tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
        )
    ),
    "volume": _pod_patch(
        opt.PodSpecPatch(
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "user-pvc"}}],
            containers=[opt.ContainerPatch(name="node", volume_mounts=[{"name": "data", "mountPath": "/data"}])],
        )
    ),
    "pod-metadata-and-security": _pod_patch(
        opt.PodSpecPatch(
            service_account_name="trainer",
            security_context={"runAsUser": 1000, "fsGroup": 2000},
            image_pull_secrets=[{"name": "regcred"}],
        ),
        metadata={"labels": {"team": "ml"}},
    ),
    "empty-parts": opt.RuntimePatch(
        training_runtime_spec=opt.TrainingRuntimeSpecPatch(
            template=opt.JobSetTemplatePatch(spec=opt.JobSetSpecPatch(replicated_jobs=[]))
        )
    ),
    "manager-only": opt.RuntimePatch(),
}
CONTAINER = ktrain.CustomTrainerContainer(image="my/trainer:2")

EACH_OPTION = {
    "Name": opt.Name("my-job"),
    "Labels": opt.Labels({"team": "ml", "example.com/tier": "gold"}),
    "Annotations": opt.Annotations({"description": "a test job", "example.com/owner": "me"}),
    "TrainerCommand": opt.TrainerCommand(["python", "train.py"]),
    "TrainerArgs": opt.TrainerArgs(["--epochs", "10"]),
    "ActiveDeadlineSeconds": opt.ActiveDeadlineSeconds(3600),
    **{f"RuntimePatch-{shape}": patch for shape, patch in RUNTIME_PATCHES.items()},
}


@pytest.mark.parametrize("trainer", [CONTAINER, None], ids=["container", "no-trainer"])
@pytest.mark.parametrize("option", list(EACH_OPTION.values()), ids=list(EACH_OPTION))
def test_each_option_submits_the_sdks_trainjob(sdk_client: Any, ktrain_client: Any, option: Any, trainer: Any) -> None:
    theirs, ours = both(sdk_client, ktrain_client, runtime="torch-distributed", trainer=trainer, options=[option])
    assert_same_with_options(theirs, ours)
    # The SDK's own option object, given to ktrain, is read alike.
    assert _normalized(ktrain_trainjob(ktrain_client, trainer=trainer, options=[_as_sdk(option)])) == _normalized(ours)


def test_options_with_a_function_and_with_torchtune(sdk_client: Any, ktrain_client: Any) -> None:
    """The options that go with every trainer: beside ktrain's own code patch, and torchtune's command."""
    options = [opt.Name("fn-job"), opt.Labels({"a": "b"}), opt.ActiveDeadlineSeconds(60), RUNTIME_PATCHES["placement"]]
    for runtime, trainer in (
        ("torch-distributed", ktrain.CustomTrainer(func=record_call, func_args={"lr": 0.1})),
        (TUNE, ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=1))),
    ):
        theirs, ours = both(sdk_client, ktrain_client, runtime=runtime, trainer=trainer, options=options)
        assert not isinstance(theirs, BaseException) and not isinstance(ours, BaseException), (theirs, ours)
        assert_same_trainjob(
            {**theirs, "metadata": {"name": "a00000000000"}},
            {**ours, "metadata": {"name": "a00000000000"}},
            command=runtime == TUNE,
        )
        mine, sdks = _normalized(ours), _normalized(theirs)
        assert mine["metadata"] == sdks["metadata"] == {"name": "fn-job", "labels": {"a": "b"}}
        for field in ("activeDeadlineSeconds", "runtimePatches"):
            assert mine["spec"][field] == sdks["spec"][field], field


label_keys = st.from_regex(r"(example\.com/)?[a-z][a-z0-9.-]{0,10}[a-z0-9]", fullmatch=True)
label_values = st.from_regex(r"([a-z0-9]([a-z0-9_.-]{0,10}[a-z0-9])?)?", fullmatch=True)
words = st.text(st.characters(codec="ascii", categories=("L", "N", "P", "S", "Zs")), max_size=10)
option_values = {
    "Name": st.builds(opt.Name, st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)),
    "Labels": st.builds(opt.Labels, st.dictionaries(label_keys, label_values, max_size=3)),
    "Annotations": st.builds(opt.Annotations, st.dictionaries(label_keys, words, max_size=3)),
    "TrainerCommand": st.builds(opt.TrainerCommand, st.lists(words, min_size=1, max_size=4)),
    "TrainerArgs": st.builds(opt.TrainerArgs, st.lists(words, max_size=4)),
    "ActiveDeadlineSeconds": st.builds(opt.ActiveDeadlineSeconds, st.integers(1, 10**9)),
    "RuntimePatch": st.sampled_from(list(RUNTIME_PATCHES.values())),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    chosen=st.lists(st.sampled_from(sorted(option_values)), unique=True, max_size=len(option_values)).flatmap(
        lambda kinds: st.tuples(*(option_values[k] for k in kinds))
    ),
    container=st.booleans(),
    sdk_objects=st.booleans(),
)
def test_any_combination_of_options_submits_the_sdks_trainjob(
    sdk_client: Any, ktrain_client: Any, chosen: tuple[Any, ...], container: bool, sdk_objects: bool
) -> None:
    options = list(chosen)
    trainer = CONTAINER if container else None
    theirs = sdk_trainjob(sdk_client, runtime="torch-distributed", trainer=_as_sdk(trainer), options=_as_sdk(options))
    # ktrain takes its own option classes and the SDK's alike
    ours = ktrain_trainjob(
        ktrain_client,
        runtime="torch-distributed",
        trainer=trainer,
        options=_as_sdk(options) if sdk_objects else options,
    )
    assert_same_with_options(theirs, ours)


# --- options: what both refuse, and what ktrain refuses besides ------------------------------------------------


@pytest.mark.parametrize("option", [opt.TrainerCommand(["python", "x.py"]), opt.TrainerArgs(["--x"])])
def test_trainer_command_and_args_with_another_trainer_are_refused_by_both(
    sdk_client: Any, ktrain_client: Any, option: Any
) -> None:
    for runtime, trainer in (
        ("torch-distributed", ktrain.CustomTrainer(func=record_call, func_args={"lr": 1})),
        (TUNE, ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig(epochs=1))),
    ):
        theirs, ours = both(sdk_client, ktrain_client, runtime=runtime, trainer=trainer, options=[option])
        assert isinstance(theirs, ValueError) and isinstance(ours, UsageError), (theirs, ours)
        assert str(theirs) == ours.message  # the SDK's words
        theirs_too = both(sdk_client, ktrain_client, runtime=runtime, trainer=trainer, options=[_as_sdk(option)])[1]
        assert isinstance(theirs_too, UsageError) and theirs_too.message == ours.message


def test_what_ktrain_refuses_and_the_sdk_lets_through(sdk_client: Any, ktrain_client: Any) -> None:
    """The SDK keeps the last of two Names or Labels and sends two RuntimePatches of one manager (the
    API server refuses them); ktrain refuses an option given twice, or given also as a keyword, and
    a patch the Trainer's webhook refuses (env of the trainer container), naming it."""
    cases: list[tuple[Obj, type[Exception], str]] = [
        ({"options": [opt.Name("a"), opt.Name("b")]}, UsageError, "options: Name is given twice"),
        ({"options": [opt.RuntimePatch(), opt.RuntimePatch()]}, UsageError, "options: RuntimePatch is given twice"),
        (
            {"options": [opt.Name("a")], "name": "b"},
            UsageError,
            r"name is given twice: by options \(Name\) and by name=",
        ),
        ({"options": [opt.Labels({"a": "b"})], "labels": {"c": "d"}}, UsageError, r"labels is given twice"),
        ({"options": [opt.Annotations({})], "annotations": {"c": "d"}}, UsageError, r"annotations is given twice"),
        ({"options": [opt.TrainerCommand(["x"])], "command": ["y"]}, UsageError, r"by options \(TrainerCommand\)"),
        ({"options": opt.Name("a")}, ArgumentTypeError, "options must be a list of options"),
        ({"options": [{"name": "a"}]}, ArgumentTypeError, r"options\[0\] must be one of .* not dict"),
        ({"options": [opt.Labels({"a": 1})]}, ArgumentTypeError, r"options\[0\] \(Labels\).labels\['a'\]"),
        ({"options": [opt.TrainerArgs("--x")]}, ArgumentTypeError, r"options\[0\] \(TrainerArgs\).args must be a list"),
        ({"options": [sdk_options.ActiveDeadlineSeconds(5)]}, None, ""),  # accepted: a control case
    ]
    bad_env = _pod_patch(
        opt.PodSpecPatch(containers=[opt.ContainerPatch(name="node", env=[{"name": "A", "value": "1"}])])
    )
    for arguments, error, message in cases:
        if error is None:
            ktrain_trainjob(ktrain_client, trainer=CONTAINER, **arguments)
            continue
        with pytest.raises(error, match=message):
            ktrain_trainjob(ktrain_client, trainer=CONTAINER, **arguments)
    theirs, ours = both(sdk_client, ktrain_client, trainer=CONTAINER, options=[bad_env])
    assert not isinstance(theirs, BaseException)
    assert isinstance(ours, KtrainError) and "must not have envs" in str(ours)


def test_local_backends_take_only_name_as_the_sdks(tmp_path: Path) -> None:
    """The SDK's local process backend applies each option, and all but Name refuse it."""
    from kubeflow.trainer.backends.localprocess.types import LocalProcessBackendConfig

    sdk_local = sdk.TrainerClient(LocalProcessBackendConfig())
    ours = ktrain.TrainerClient(ktrain.LocalProcessBackendConfig())
    trainer = ktrain.CustomTrainer(func=record_call, func_args={"lr": 1})
    for option in (opt.Labels({"a": "b"}), opt.ActiveDeadlineSeconds(5), opt.RuntimePatch()):
        with pytest.raises(ValueError) as theirs:
            sdk_local.train(
                runtime=sdk_local.get_runtime("torch-distributed"), trainer=_as_sdk(trainer), options=[_as_sdk(option)]
            )
        with pytest.raises(UsageError) as mine:
            ours.train(trainer=trainer, options=[option])
        assert mine.value.message == str(theirs.value)
    # Name is taken there, as the job's name (nothing else of the job changes)
    from ktrain.python_api.conversion import option_parts

    assert option_parts([opt.Name("mine")], trainer, backend="LocalProcessBackend") == ({"name": "mine"}, {})


def test_a_runtime_is_given_by_its_name_or_as_a_runtime_of_either_sdk() -> None:
    assert runtime_name(None) == "torch-distributed"  # the SDK's DEFAULT_TRAINING_RUNTIME
    assert runtime_name("mine") == "mine"
    mine = ktrain.Runtime(name="r1", trainer=None, kind=ktrain.RuntimeKind.CLUSTER_TRAINING_RUNTIME)  # type: ignore[arg-type]
    theirs = sdk.Runtime(name="r2", trainer=None, kind=sdk.RuntimeKind.CLUSTER_TRAINING_RUNTIME)  # type: ignore[arg-type]
    assert (runtime_name(mine), runtime_name(theirs)) == ("r1", "r2")  # e.g. from list_runtimes()
    with pytest.raises(ArgumentTypeError, match=r"^runtime must be a runtime name or a Runtime, not int$"):
        runtime_name(3)


# --- the data-cache initializer (issue #36) ---------------------------------------------------


def test_a_data_cache_initializer_sends_the_sdks_env() -> None:
    from kubeflow.trainer import DataCacheInitializer as Theirs
    from kubeflow.trainer.backends.kubernetes.utils import get_dataset_initializer

    from ktrain.python_api.conversion import initializer_parts

    fields = {"storage_uri": "cache://s/t", "metadata_loc": "s3://b/m.json", "num_data_nodes": 4, "iam_role": "r"}
    sdk = get_dataset_initializer(Theirs(**fields)).to_dict()
    keywords, spec = initializer_parts(ktrain.Initializer(dataset=ktrain.DataCacheInitializer(**fields)))
    assert keywords == {"dataset": sdk["storageUri"]}
    assert spec["dataset"]["env"] == sdk["env"]


@pytest.mark.shared
def test_upstreams_data_cache_runtime_refuses_it_with_the_webhooks_message() -> None:
    from conftest import need_shared

    need_shared()
    runtime = SHARED / "reference" / "upstream" / "trainer" / "runtimes" / "torch_distributed_with_cache.yaml"
    cache = ktrain.DataCacheInitializer(storage_uri="cache://s/t", metadata_loc="s3://b/m.json", num_data_nodes=4)
    with pytest.raises(ValidationFailedError) as err:
        _train_offline(cache, runtime)
    assert (
        "spec.runtimeRef: must have volumeMount with name - initializer in container dataset-initializer "
        "of the dataset-initializer job"
    ) in str(err.value)


def _train_offline(cache: Any, runtime: Path) -> None:
    """What `TrainerClient().train` renders before it submits (no cluster)."""
    from ktrain.python_api import conversion
    from ktrain.python_api.request import prepare
    from ktrain.service.render import render_request

    keywords, spec = conversion.initializer_parts(ktrain.Initializer(dataset=cache))
    job = {"apiVersion": c.TRAINER_API_VERSION, "kind": c.TRAINJOB_KIND, "spec": {"initializer": spec}}
    options = {"runtime": "torch-distributed-with-cache", "runtime_files": [str(runtime)], **keywords}
    request, registry = prepare(job, options, function="train")
    render_request(request, registry)
