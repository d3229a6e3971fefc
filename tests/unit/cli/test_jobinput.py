"""ktrain.cli.jobinput: the job options every job command shares (`JobInput`) and what they become,
a `service.JobOverrides` in a `service.RenderRequest`, with a clear error for each malformed flag."""

from __future__ import annotations

import pytest

from ktrain.cli.jobinput import JobInput
from ktrain.errors import UsageError
from ktrain.service.requests import JobOverrides, RenderRequest


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KTRAIN_GPU_TYPE_LABEL", "KTRAIN_FEATURE_GATES", "KTRAIN_STATUS_SERVER", "KTRAIN_RUNTIMES_PATH"):
        monkeypatch.delenv(name, raising=False)


def test_no_flags_override_nothing() -> None:
    assert JobInput().overrides() == JobOverrides()
    request = JobInput().render_request()
    assert isinstance(request, RenderRequest)
    assert (request.file, request.ssh_secret, request.allow_extensions, request.status_server) == (
        None,
        None,
        False,
        None,
    )
    assert request.feature_gates == {}


def test_the_flags_land_in_their_overrides() -> None:
    given = JobInput(
        command=["torchrun", "train.py", "--lr", "3e-4"],
        runtime="torch-distributed",
        runtime_kind="ClusterTrainingRuntime",
        name="j",
        namespace="team-a",
        nodes=4,
        nproc_per_node=8,
        image="img:1",
        env=["LR=1e-4", "EMPTY=", "URL=a=b"],
        cpu="4",
        memory="16Gi",
        resource=["nvidia.com/gpu=8"],
        label=["team=a"],
        annotation=["note=x"],
        patch=["p.yaml"],
        values=["v.yaml"],
        sets=["trainer.numNodes=2"],
        suspend=True,
        pip=["numpy"],
    )
    overrides = given.overrides()
    assert overrides.command == ["torchrun", "train.py", "--lr", "3e-4"]
    assert (overrides.runtime, overrides.runtime_kind, overrides.name, overrides.namespace) == (
        "torch-distributed",
        "ClusterTrainingRuntime",
        "j",
        "team-a",
    )
    assert (overrides.nodes, overrides.nproc_per_node, overrides.image) == (4, 8, "img:1")
    # env keeps its order and repeats; a value may be empty or hold "="
    assert overrides.env == [("LR", "1e-4"), ("EMPTY", ""), ("URL", "a=b")]
    assert overrides.requests == {"cpu": "4", "memory": "16Gi"}
    assert overrides.limits == {"nvidia.com/gpu": "8"}
    assert (overrides.labels, overrides.annotations) == ({"team": "a"}, {"note": "x"})
    assert (overrides.patch_files, overrides.values_files, overrides.sets) == (
        ["p.yaml"],
        ["v.yaml"],
        ["trainer.numNodes=2"],
    )
    assert overrides.suspend is True
    assert overrides.pip == ["numpy"]


@pytest.mark.parametrize(
    ("flag", "field", "value"),
    [
        ("--env", "env", "NOEQUALS"),
        ("--env", "env", "=value"),
        ("--resource", "resource", "nvidia.com/gpu"),
        ("--label", "label", "team"),
        ("--annotation", "annotation", "=x"),
    ],
)
def test_a_pair_without_a_key_is_refused_naming_its_flag(flag: str, field: str, value: str) -> None:
    with pytest.raises(UsageError, match=f"^{flag} expects KEY=VALUE, got {value!r}$"):
        JobInput(**{field: [value]}).overrides()


def test_fine_tuning_flags_make_a_fine_tuning_and_none_makes_none() -> None:
    assert JobInput().overrides().fine_tuning is None
    tuning = JobInput(epochs=2, batch_size=8, dtype="bf16", lora="default", dataset_source="json").overrides()
    fine_tuning = tuning.fine_tuning
    assert (fine_tuning.epochs, fine_tuning.batch_size, fine_tuning.dtype) == (2, 8, "bf16")
    assert fine_tuning.dataset_source == "json"
    assert fine_tuning.peft is not None
    assert JobInput(system_prompt="Be brief.").overrides().fine_tuning.system_prompt == "Be brief."


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"dtype": "fp16"}, "--dtype must be bf16 or fp32, got 'fp16'"),
        (
            {"dataset_source": "yaml"},
            "--dataset-source must be one of json, csv, parquet, arrow, text, xml, got 'yaml'",
        ),
        ({"lora": "default", "qlora": "default"}, "give one of --lora, --qlora and --dora"),
        ({"lora": "default", "dora": "rank=8"}, "give one of --lora, --qlora and --dora"),
    ],
)
def test_bad_fine_tuning_flags_are_refused(given: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as err:
        JobInput(**given).overrides()  # type: ignore[arg-type]
    assert str(err.value) == message


def test_placement_and_failure_flags_are_parsed() -> None:
    overrides = JobInput(
        node_selector=["pool=gpu"],
        toleration=["gpu=true:NoSchedule"],
        elastic="2:4",
        ttl="1h",
        restart_on_preemption=True,
    ).overrides()
    assert overrides.node_selector == {"pool": "gpu"}
    assert overrides.tolerations == [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
    assert overrides.elastic == (2, 4)
    assert overrides.ttl_seconds == 3600
    assert overrides.restart_on_preemption is True


def test_a_bad_elastic_range_is_refused() -> None:
    with pytest.raises(UsageError, match="--elastic: '4' is not MIN:MAX"):
        JobInput(elastic="4").overrides()


def test_the_gpu_type_label_defaults_to_the_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KTRAIN_GPU_TYPE_LABEL", "example.com/gpu")
    assert JobInput().overrides().gpu_type_label == "example.com/gpu"
    assert JobInput(gpu_type_label="mine/gpu").overrides().gpu_type_label == "mine/gpu"


def test_the_render_request_carries_the_file_and_merges_the_gates_flag_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KTRAIN_FEATURE_GATES", "TrainJobStatus=true")
    monkeypatch.setenv("KTRAIN_STATUS_SERVER", "svc.ns:10443")
    request = JobInput(filename="job.yaml", ssh_secret="keys", allow_extensions=True).render_request()
    assert (request.file, request.ssh_secret, request.allow_extensions) == ("job.yaml", "keys", True)
    assert request.feature_gates == {"TrainJobStatus": True}
    assert request.status_server == "svc.ns:10443"
    flagged = JobInput(feature_gates="TrainJobStatus=false", status_server="other.ns:1").render_request()
    assert (flagged.feature_gates, flagged.status_server) == ({"TrainJobStatus": False}, "other.ns:1")


def test_the_connection_is_the_kubectl_flags_and_contacts_nothing() -> None:
    options = JobInput(kubeconfig="/k/config", context="ctx", namespace="team-a").connection(request_timeout=5.0)
    assert (options.kubeconfig, options.context, options.namespace, options.request_timeout) == (
        "/k/config",
        "ctx",
        "team-a",
        5.0,
    )
