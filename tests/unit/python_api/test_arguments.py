"""Hostile arguments at every public function of the Python API: each call returns, or raises one of
ktrain's documented errors (`KtrainError` and its subclasses, docs/python-api.md "Errors"); never a
TypeError, AttributeError, ValueError, KeyError or RecursionError from deep inside. A wrong type is an
`ArgumentTypeError` whose message names the argument.

One argument at a time is hostile (Hypothesis picks which, and its value), the others valid. The
functions that reach a cluster reach the API-server double."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ktrain
from ktrain.errors import ArgumentTypeError, KtrainError
from ktrain.python_api import arguments
from ktrain.python_api.request import REQUEST_KEYWORDS, function_source
from ktrain.service.requests import JobOverrides
from ktrain.util.structs import fields, struct

REPO = Path(__file__).resolve().parents[3]
NS = "team-a"


def fn(lr, epochs=1):  # type: ignore[no-untyped-def]
    print(lr, epochs)  # noqa: T201 - runs in the pod


class Weird:
    """An object whose every attribute is there and wrong, and whose repr lies."""

    def __getattr__(self, name: str) -> Any:
        return object()

    def __repr__(self) -> str:
        return "{'a': 1}"


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**31, max_value=2**80),
    st.integers(max_value=-1),
    st.floats(),
    st.text(max_size=30),
    st.binary(max_size=10),
    st.sampled_from(["", "../x", "a\x00b", "x" * 5000, "$(rm -rf /)", "torch-distributed", "Bad_Name", "-1", "💥"]),
    st.sampled_from([math.nan, math.inf, -math.inf, 2**64, -(2**63), 10**5000, 1e308, -0.0]),
    st.sampled_from([object(), os, print, fn, Weird(), Path("missing"), type, Ellipsis, NotImplemented]),
)
containers = st.one_of(
    st.lists(scalars, max_size=3),
    st.tuples(scalars, scalars),
    st.sets(st.integers() | st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=8) | st.integers() | st.none(), scalars, max_size=3),
    st.just(_deep(200)),
    st.just(_deep(5000)),
)
sdk_values = st.one_of(
    st.builds(ktrain.CustomTrainer, func=scalars | st.just(fn), func_args=scalars | containers),
    st.builds(ktrain.CustomTrainer, func=st.just(fn), num_nodes=scalars, resources_per_node=scalars | containers),
    st.builds(ktrain.CustomTrainer, func=st.just(fn), env=scalars | containers, image=scalars),
    st.builds(ktrain.CustomTrainer, func=st.just(fn), packages_to_install=scalars | containers, pip_index_urls=scalars),
    st.builds(ktrain.CustomTrainerContainer, image=scalars, num_nodes=scalars),
    st.builds(
        ktrain.BuiltinTrainer,
        config=st.builds(ktrain.TorchTuneConfig, epochs=scalars, dtype=scalars, loss=scalars, batch_size=scalars)
        | scalars,
    ),
    st.builds(
        ktrain.BuiltinTrainer,
        config=st.builds(
            ktrain.TorchTuneConfig,
            peft_config=st.builds(
                ktrain.LoraConfig, lora_attn_modules=scalars | containers, lora_rank=scalars, lora_dropout=scalars
            )
            | scalars,
            dataset_preprocess_config=st.builds(
                ktrain.TorchTuneInstructDataset, source=scalars, split=scalars, column_map=scalars | containers
            )
            | scalars,
        ),
    ),
    st.builds(
        ktrain.Initializer,
        dataset=st.builds(ktrain.HuggingFaceDatasetInitializer, storage_uri=scalars, ignore_patterns=scalars) | scalars,
        model=st.builds(ktrain.HuggingFaceModelInitializer, storage_uri=scalars, access_token=scalars) | scalars,
    ),
    st.builds(ktrain.KubernetesBackendConfig, namespace=scalars, config_file=scalars, context=scalars),
    st.just(Weird()),
)
# Values of the right type and a wrong content: what the render and the API server's rules must catch.
words = st.one_of(st.text(max_size=12), st.sampled_from(["a=b", "KEY=VALUE:NoSchedule", "8Gi", "-1", "A.B", "x" * 300]))
plausible = st.one_of(
    words,
    st.integers(-3, 2**31 + 3),
    st.lists(words, max_size=3),
    st.dictionaries(words, words, max_size=3),
    st.dictionaries(words, st.integers(-3, 10) | st.floats(-1, 1e30), max_size=3),
    st.lists(st.dictionaries(st.sampled_from(["key", "operator", "value", "effect", "tolerationSeconds"]), words)),
)
hostile = st.one_of(scalars, containers, sdk_values, plausible)

# Arguments naming files and directories: ktrain reads what they name (`code` sends a directory
# tree), so a hostile value stays inside the test's empty working directory.
PATHS = {"job", "code", "patch_files", "values_files", "runtime_files", "runtimes_dirs", "kubeconfig", "config_file"}


def _stays_here(value: Any) -> bool:
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        return not (isinstance(text, str) and (text.startswith(("/", "~")) or ".." in text)) or "\n" in str(text)
    if isinstance(value, (list, tuple, set)):
        return all(_stays_here(item) for item in value)
    return True


def _check(call: Callable[[], Any], argument: str) -> None:
    try:
        result = call()
        if isinstance(result, Iterator):  # the log functions: their lines are read lazily
            for _ in zip(range(5), result, strict=False):
                pass
    except ArgumentTypeError as exc:
        assert argument in exc.message or "keyword argument" in exc.message, (argument, exc.message)
    except KtrainError:
        pass


@pytest.fixture(autouse=True)
def _empty_workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)


# --- offline: render, validate, train_request, function_source -------------------------------------

JOB_KEYWORDS = sorted([*arguments.job_keywords(), *arguments.EXTRA_KEYWORDS, *REQUEST_KEYWORDS])
BASE = {"runtime": "torch-distributed", "name": "x"}


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    function=st.sampled_from(["render", "validate", "train_request", "function_source"]),
    argument=st.sampled_from(["job", "func", "func_args", *JOB_KEYWORDS]),
    value=hostile,
)
def test_offline_functions_raise_only_ktrains_errors(function: str, argument: str, value: Any) -> None:
    assume(argument not in PATHS or _stays_here(value))
    if function == "function_source":
        assume(argument in ("func", "func_args"))
        args = {"func": fn, "func_args": {"lr": 1}, argument: value}
        _check(lambda: function_source(args["func"], args["func_args"]), argument)
        return
    if function == "train_request":
        assume(argument != "job")
        kwargs = {"func": fn, "func_args": {"lr": 1}, **BASE, argument: value}
        _check(lambda: ktrain.python_api.train_request(**kwargs), argument)
        return
    assume(argument not in ("func", "func_args"))
    kwargs = {**BASE, argument: value}
    _check(lambda: getattr(ktrain, function)(**kwargs), argument)


# --- the cluster: train, Client, TrainerClient ---------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ApiServerDouble() as srv:
        srv.add_namespace(NS)
        for name in ("torch-distributed", "torchtune-llama3.2-1b"):
            srv.put_object(yaml.safe_load((REPO / "runtimes" / f"{name}.yaml").read_text()))
        yield str(srv.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", namespace=NS))


CLIENT_CALLS: dict[str, tuple[str, ...]] = {
    "Client": ("kubeconfig", "context", "namespace", "request_timeout"),
    "Client.create": ("job", "runtime", "name", "num_nodes", "labels", "env"),
    "Client.list": ("selector",),
    "Client.get": ("name",),
    "Client.logs": ("name", "follow", "step", "node"),
    "Client.wait": ("name", "condition", "timeout"),
    "Client.delete": ("name",),
    "train": ("func", "runtime", "func_args", "kubeconfig", "context", "num_nodes", "kueue_queue", "priority_class"),
    "TrainerClient": ("backend_config", "target"),
    "TrainerClient.get_runtime": ("name",),
    "TrainerClient.train": ("runtime", "initializer", "trainer", "options", "name", "tolerations", "fine_tuning"),
    "TrainerClient.list_jobs": ("runtime",),
    "TrainerClient.get_job": ("name",),
    "TrainerClient.get_job_logs": ("name", "step", "follow"),
    "TrainerClient.wait_for_job_status": ("name", "status", "timeout", "polling_interval", "callbacks"),
    "TrainerClient.delete_job": ("name",),
    "TrainerClient.get_job_events": ("name",),
    "TrainerClient.get_runtime_packages": ("runtime",),
}
CALLS = [(function, argument) for function, names in CLIENT_CALLS.items() for argument in names]


def _cluster_call(kubeconfig: str, function: str, argument: str, value: Any) -> Callable[[], Any]:
    if function == "Client":
        kwargs = {"kubeconfig": kubeconfig, argument: value}
        return lambda: ktrain.Client(**kwargs).list()
    if function == "train":
        kwargs = {"func": fn, "runtime": "torch-distributed", "func_args": {"lr": 1}, "kubeconfig": kubeconfig}
        kwargs[argument] = value
        return lambda: ktrain.train(**kwargs)
    if function == "TrainerClient":
        config = ktrain.KubernetesBackendConfig(config_file=kubeconfig)
        kwargs = {"backend_config": config, argument: value}
        return lambda: ktrain.TrainerClient(**kwargs).list_runtimes()
    owner, method = function.split(".")
    if owner == "Client":
        target: Any = ktrain.Client(kubeconfig=kubeconfig)
        base: dict[str, Any] = {"create": {"runtime": "torch-distributed"}}.get(method, {"name": "missing"})
    else:
        target = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig))
        base = {"name": "missing"} if method not in ("train", "list_jobs", "get_runtime_packages") else {}
        if method == "train":
            base = {"trainer": ktrain.CustomTrainer(func=fn, func_args={"lr": 1})}
        if method == "wait_for_job_status":
            base = {"name": "missing", "timeout": 1, "polling_interval": 0.1}
        if method == "get_runtime_packages":  # a real runtime's probe job never ends here: a short wait
            wait = type(target).wait_for_job_status
            target.wait_for_job_status = lambda name: wait(target, name, timeout=0.3, polling_interval=0.1)
    if method in ("list", "list_jobs"):
        base = {}
    kwargs = {**base, argument: value}
    return lambda: getattr(target, method)(**kwargs)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=st.sampled_from(CALLS), value=hostile)
def test_cluster_functions_raise_only_ktrains_errors(cluster: str, call: tuple[str, str], value: Any) -> None:
    function, argument = call
    assume(argument not in PATHS or _stays_here(value))
    if argument in ("timeout", "polling_interval", "request_timeout") and isinstance(value, (int, float)):
        # nothing waits long on a job that never ends
        assume(isinstance(value, bool) or not value or value < 3 or (isinstance(value, float) and math.isnan(value)))
    _check(_cluster_call(cluster, function, argument, value), argument)


def test_the_reported_cases() -> None:
    """Issue #24's examples: a float ssh_secret, runtime=5, Client.get(2**64), a model that is an object."""
    for call, argument in (
        (lambda: ktrain.render(runtime="deepspeed-distributed", ssh_secret=1.5), "ssh_secret"),
        (lambda: ktrain.render(runtime=5), "runtime"),
        (lambda: ktrain.Client(kubeconfig=os.devnull).get(2**64), "name"),
        (lambda: ktrain.render(runtime="torchtune-llama3.2-1b", model=object()), "model"),
        (lambda: ktrain.render(kueue_queue="q"), "runtime"),
    ):
        with pytest.raises(KtrainError) as err:
            call()
        if isinstance(err.value, ArgumentTypeError):
            assert argument in err.value.message, err.value.message
    with pytest.raises(ArgumentTypeError, match="runtime must be a string, not int"):
        ktrain.render(runtime=5)
    with pytest.raises(ArgumentTypeError, match="name must be a string, not int") as err:
        ktrain.Client(kubeconfig=os.devnull).get(2**64)
    assert isinstance(err.value, TypeError)
    assert sys.getrecursionlimit() >= 1000  # a 5000-deep job dict is refused, not recursed into


# --- the job keywords, derived from JobOverrides ----------------------------------------------


def test_every_job_override_is_a_keyword_and_a_new_plain_one_needs_no_code(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    table = arguments.job_keywords()
    assert {field for field, _check in table.values()} == {f.name for f in fields(JobOverrides)}

    @struct
    class WithOneMore(JobOverrides):
        kueue_priority_class: str | None = None

    monkeypatch.setattr("ktrain.service.requests.JobOverrides", WithOneMore)
    assert arguments.job_overrides({"kueue_priority_class": "high"}, function="render").kueue_priority_class == "high"
    with pytest.raises(ArgumentTypeError, match="kueue_priority_class must be a string, not int"):
        arguments.job_overrides({"kueue_priority_class": 3}, function="render")


def test_an_unknown_keyword_is_a_type_error_with_the_close_names() -> None:
    with pytest.raises(ArgumentTypeError) as err:
        ktrain.render(runtime="torch-distributed", kueue_q="q")
    assert "render() got an unexpected keyword argument 'kueue_q'" in err.value.message
    assert "kueue_queue" in str(err.value.hint)
    assert isinstance(err.value, TypeError) and isinstance(err.value, KtrainError)
