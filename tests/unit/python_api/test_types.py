"""ktrain.python_api.types against the Kubeflow SDK 0.5's own classes (installed): the same names,
fields in the same order, the same defaults and reprs (but for the secrets, left out of ours), the
same enums and constants, the same checks when an initializer is built."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import re
from typing import Any

import kubeflow.common.constants as sdk_common_constants
import kubeflow.trainer as sdk
import kubeflow.trainer.constants.constants as sdk_constants
import kubeflow.trainer.types.types as sdk_types
import pytest

import ktrain.python_api.types as t

SECRETS = {"access_token", "secret_access_key"}
SDK_DATACLASSES = sorted(
    name
    for name, value in vars(sdk_types).items()
    if dataclasses.is_dataclass(value) and value.__module__ == sdk_types.__name__
)
SDK_ENUMS = sorted(
    name
    for name, value in vars(sdk_types).items()
    if isinstance(value, type) and issubclass(value, enum.Enum) and value.__module__ == sdk_types.__name__
)


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def _init_fields(klass: type) -> list[tuple[str, Any]]:
    return [(f.name, _default(f)) for f in dataclasses.fields(klass) if f.init]


def test_the_sdk_types_are_all_here() -> None:
    assert SDK_DATACLASSES and SDK_ENUMS
    missing = [name for name in [*SDK_DATACLASSES, *SDK_ENUMS] if not hasattr(t, name)]
    assert not missing


@pytest.mark.parametrize("name", SDK_DATACLASSES)
def test_fields_their_order_and_defaults_are_the_sdks(name: str) -> None:
    ours, theirs = _init_fields(getattr(t, name)), _init_fields(getattr(sdk_types, name))
    if name == "TrainJob":  # ktrain's trainer_status comes after every SDK field, default None
        assert ours[-1] == ("trainer_status", None)
        ours = ours[:-1]
    assert ours == theirs


@pytest.mark.parametrize("name", SDK_ENUMS)
def test_enum_members_and_values_are_the_sdks(name: str) -> None:
    ours, theirs = getattr(t, name), getattr(sdk_types, name)
    assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]


def test_constants_are_the_sdks() -> None:
    for name in (
        "UNKNOWN",
        "WORKSPACE_PATH",
        "DATASET_PATH",
        "MODEL_PATH",
        "DEFAULT_PIP_INDEX_URLS",
        "DEFAULT_TRAINING_RUNTIME",
        "INITIALIZER_DEFAULT_IGNORE_PATTERNS",
        "TRAINJOB_CREATED",
        "TRAINJOB_RUNNING",
        "TRAINJOB_COMPLETE",
        "TRAINJOB_FAILED",
    ):
        theirs = sdk_common_constants if name == "UNKNOWN" else sdk_constants
        assert getattr(t, name) == getattr(theirs, name), name


def test_mutable_defaults_are_fresh_per_instance() -> None:
    one, two = t.LoraConfig(), t.LoraConfig()
    one.lora_attn_modules.append("k_proj")
    assert two.lora_attn_modules == ["q_proj", "v_proj", "output_proj"]
    model = t.HuggingFaceModelInitializer(storage_uri="hf://org/model")
    assert model.ignore_patterns is not t.INITIALIZER_DEFAULT_IGNORE_PATTERNS


def _both(class_name: str, **kwargs: Any) -> tuple[Any, Any]:
    return getattr(t, class_name)(**kwargs), getattr(sdk_types, class_name)(**kwargs)


def _without_secrets(text: str) -> str:
    """The SDK's repr less its secret fields (ktrain leaves them out)."""
    return re.sub(r", (?:access_token|secret_access_key)=(?:None|'[^']*')", "", text)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("LoraConfig", {"lora_rank": 8, "lora_alpha": 16, "use_dora": True}),
        ("TorchTuneInstructDataset", {"split": "train[:10%]", "column_map": {"input": "q"}}),
        ("CustomTrainerContainer", {"image": "img:1", "num_nodes": 2, "env": {"A": "1"}}),
        ("HuggingFaceDatasetInitializer", {"storage_uri": "hf://org/data", "ignore_patterns": ["*.bin"]}),
        ("S3ModelInitializer", {"storage_uri": "s3://bucket/model", "endpoint": "http://minio:9000", "region": "eu"}),
        ("Step", {"name": "node-0", "status": "Running", "pod_name": "p-0", "device": "gpu", "device_count": "1"}),
    ],
)
def test_repr_is_the_sdks(name: str, kwargs: dict[str, Any]) -> None:
    ours, theirs = _both(name, **kwargs)
    assert repr(ours) == _without_secrets(repr(theirs))
    assert ours == getattr(t, name)(**kwargs)


@pytest.mark.parametrize("name", ["HuggingFaceDatasetInitializer", "HuggingFaceModelInitializer"])
def test_a_hugging_face_token_is_not_in_the_repr(name: str) -> None:
    ours, theirs = _both(name, storage_uri="hf://org/x", access_token="hf_SECRET")
    assert "hf_SECRET" in repr(theirs)  # the SDK shows it
    assert "hf_SECRET" not in repr(ours)
    assert repr(ours) == _without_secrets(repr(theirs))
    assert ours.access_token == "hf_SECRET"


@pytest.mark.parametrize("name", ["S3DatasetInitializer", "S3ModelInitializer"])
def test_an_s3_secret_key_is_not_in_the_repr(name: str) -> None:
    ours, theirs = _both(name, storage_uri="s3://b/k", access_key_id="AKIA", secret_access_key="S3CRET")
    assert "S3CRET" in repr(theirs)
    assert "S3CRET" not in repr(ours)
    assert repr(ours) == _without_secrets(repr(theirs))


def test_a_trainjob_prints_as_the_sdks_and_its_trainer_status_only_when_reported() -> None:
    when = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    kwargs: dict[str, Any] = {"name": "j", "steps": [], "num_nodes": 2, "creation_timestamp": when, "status": "Running"}
    ours = t.TrainJob(runtime=_runtime(t), **kwargs)
    theirs = sdk_types.TrainJob(runtime=_runtime(sdk_types), **kwargs)
    assert repr(ours) == repr(theirs)
    ours.trainer_status = t.TrainerStatus()
    assert repr(ours).startswith(repr(theirs)[:-1] + ", trainer_status=TrainerStatus(")


def _runtime(module: Any) -> Any:
    trainer = module.RuntimeTrainer(
        trainer_type=module.TrainerType.CUSTOM_TRAINER,
        framework="torch",
        image="pytorch/pytorch:2.7.1",
        num_nodes=1,
        device="cpu",
        device_count="1",
    )
    return module.Runtime(name="torch-distributed", trainer=trainer, kind=module.RuntimeKind.CLUSTER_TRAINING_RUNTIME)


@pytest.mark.parametrize("name", ["S3DatasetInitializer", "S3ModelInitializer"])
@pytest.mark.parametrize("uri", ["hf://org/x", "S3://bucket/x", "bucket/x"])
def test_an_s3_initializer_refuses_another_scheme_as_the_sdk_does(name: str, uri: str) -> None:
    with pytest.raises(ValueError, match="storage_uri must start with 's3://'") as theirs:
        getattr(sdk_types, name)(storage_uri=uri)
    # ktrain quotes the value (shown(), as for a value that is not text); the SDK prints it bare
    with pytest.raises(ValueError, match=re.escape(f"storage_uri must start with 's3://', got {uri!r}")):
        getattr(t, name)(storage_uri=uri)
    assert str(theirs.value).endswith(f"got {uri}")


@pytest.mark.parametrize(
    ("uri", "nodes"),
    [
        ("cache://schema/table", 1),
        ("cache://schema/table", 0),
        ("s3://schema/table", 2),
        ("cache://table", 2),
        ("cache://a/b/c", 2),
    ],
)
def test_the_data_cache_checks_are_the_sdks(uri: str, nodes: int) -> None:
    with pytest.raises(ValueError) as theirs:
        sdk_types.DataCacheInitializer(storage_uri=uri, metadata_loc="s3://m.json", num_data_nodes=nodes)
    with pytest.raises(ValueError) as ours:
        t.DataCacheInitializer(storage_uri=uri, metadata_loc="s3://m.json", num_data_nodes=nodes)
    assert str(ours.value) == str(theirs.value)


def test_a_good_data_cache_is_built_as_the_sdks() -> None:
    kwargs: dict[str, Any] = {"storage_uri": "cache://s/t", "metadata_loc": "s3://m.json", "num_data_nodes": 3}
    ours, theirs = _both("DataCacheInitializer", **kwargs)
    assert repr(ours) == repr(theirs)


def test_a_template_reads_as_the_keyword_arguments_of_train() -> None:
    trainer = t.CustomTrainer(func=print)
    template = t.TrainJobTemplate(trainer=trainer, runtime="torch-distributed")
    assert dict(**template) == {"trainer": trainer, "runtime": "torch-distributed", "initializer": None}


@pytest.mark.parametrize(
    ("name", "theirs"),
    [
        ("KubernetesBackendConfig", sdk.KubernetesBackendConfig),
        ("LocalProcessBackendConfig", sdk.LocalProcessBackendConfig),
        ("ContainerBackendConfig", sdk.ContainerBackendConfig),
        ("TrainingRuntimeSource", sdk.TrainingRuntimeSource),
    ],
)
def test_backend_configs_have_the_sdks_fields_and_defaults(name: str, theirs: Any) -> None:
    sdk_fields = [(f, info.get_default(call_default_factory=True)) for f, info in theirs.model_fields.items()]
    ours = _init_fields(getattr(t, name))
    assert [f for f, _ in ours] == [f for f, _ in sdk_fields]
    for (field_name, mine), (_, default) in zip(ours, sdk_fields, strict=True):
        if field_name == "runtime_source":
            assert mine.sources == default.sources
        else:
            assert mine == default, field_name
