"""The Kubeflow SDK's module paths and names under ktrain (docs/python-api.md, "The SDK's modules"):
every public module of the installed `kubeflow.trainer`, found by walking its package (a new SDK
release shows up here), has a row in the doc's table; where the row names a ktrain module, that
module has every public name of the SDK's but the ones the row lists as not provided, and those are
indeed absent (the row must change when one arrives). Also what `from ktrain import *` binds
(that `import ktrain` stays lazy: tests/unit/test_ktrain.py), and the SDK's constants and helpers these modules hold."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import kubeflow.trainer as sdk
import pytest

import ktrain

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "python-api.md"
ROW = re.compile(r"^\| `(kubeflow\.trainer[\w.]*)` \| (?:`(ktrain[\w.]*)`|—) \|[ ]?(.*?) ?\|$", re.M)


def sdk_modules() -> list[str]:
    """The SDK's public modules: every package and module under kubeflow/trainer (namespace
    packages such as backends/container included), not its tests."""
    root = Path(sdk.__file__).parent
    out = {"kubeflow.trainer"}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if path.stem.endswith("_test") or "test" in rel.parts[:-1] or rel.parts[0] == "test":
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for depth in range(1, len(parts) + 1):  # the packages on the way, with or without __init__
            out.add(".".join(["kubeflow.trainer", *parts[:depth]]))
    return sorted(out)


def public_names(module_name: str) -> set[str]:
    """What a module offers: its `__all__`, else what it defines (classes, functions, constants)."""
    module = importlib.import_module(module_name)
    if hasattr(module, "__all__"):
        return set(module.__all__)
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value) or name == "TYPE_CHECKING":
            continue
        if getattr(value, "__module__", None) == module_name or (name.isupper() and not callable(value)):
            names.add(name)
    return names


def doc_rows() -> dict[str, tuple[str | None, set[str]]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### The SDK's modules") :]
    rows = {}
    for module, mine, missing in ROW.findall(section):
        rows[module] = (mine or None, set(re.findall(r"`(\w+)`", missing)) if mine else set())
    return rows


def test_every_sdk_module_has_its_row_and_every_row_an_sdk_module() -> None:
    modules = sdk_modules()
    assert "kubeflow.trainer.backends.container.types" in modules  # a namespace package's module counts
    rows = doc_rows()
    assert sorted(rows) == modules


@pytest.mark.parametrize("module", sorted(m for m, (mine, _) in doc_rows().items() if mine))
def test_a_ktrain_module_has_the_sdk_modules_names(module: str) -> None:
    mine, not_provided = doc_rows()[module]
    assert mine is not None
    ours = importlib.import_module(mine)
    theirs = public_names(module)
    assert not_provided <= theirs, f"the doc lists as not provided what the SDK has not: {not_provided - theirs}"
    missing = {name for name in theirs - not_provided if not hasattr(ours, name)}
    assert not missing, f"{mine} lacks the SDK's {sorted(missing)} (or docs/python-api.md should list them)"
    arrived = {name for name in not_provided if hasattr(ours, name)}
    assert not arrived, f"{mine} now has {sorted(arrived)}: take them out of the doc's not-provided column"


def test_star_import_binds_the_sdks_names_and_spares_a_notebooks_train() -> None:
    def train() -> str:  # a notebook's own function, defined before the star import
        return "mine"

    namespace: dict[str, object] = {"train": train}
    exec("from ktrain import *", namespace)  # noqa: S102
    not_provided = doc_rows()["kubeflow.trainer"][1]
    assert set(sdk.__all__) - not_provided <= set(namespace)
    assert namespace["train"] is train
    assert namespace["TrainerClient"] is ktrain.TrainerClient and namespace["Client"] is ktrain.Client
    sdk_namespace: dict[str, object] = {}
    exec("from kubeflow.trainer import *", sdk_namespace)  # noqa: S102
    assert set(namespace) - {"train", "__builtins__"} == set(sdk_namespace) - {"__builtins__"} - not_provided | {
        "Client",
        "KtrainWarning",
    }


def test_the_module_paths_are_the_same_objects() -> None:
    from ktrain.backends.container.types import ContainerBackendConfig, TrainingRuntimeSource
    from ktrain.backends.kubernetes.utils import get_tpu_num_nodes
    from ktrain.backends.localprocess.types import LocalProcessBackendConfig
    from ktrain.options.kubernetes import RuntimePatch, TrainingRuntimeSpecPatch
    from ktrain.types.types import DataCacheInitializer, Runtime, TrainJobTemplate

    assert (ContainerBackendConfig, TrainingRuntimeSource, LocalProcessBackendConfig) == (
        ktrain.ContainerBackendConfig,
        ktrain.TrainingRuntimeSource,
        ktrain.LocalProcessBackendConfig,
    )
    assert (RuntimePatch, TrainingRuntimeSpecPatch) == (
        ktrain.options.RuntimePatch,
        ktrain.options.TrainingRuntimeSpecPatch,
    )
    assert (DataCacheInitializer, Runtime, TrainJobTemplate, get_tpu_num_nodes) == (
        ktrain.DataCacheInitializer,
        ktrain.Runtime,
        ktrain.TrainJobTemplate,
        ktrain.get_tpu_num_nodes,
    )
    assert ktrain.ContainerBackendConfig().runtime_source == TrainingRuntimeSource(["github://kubeflow/trainer"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [((1, "2x2"), 1), ((2, "2x4"), 4), ((3, "4x4", 8), 6), ((1, "2x2x2"), 2), ((2, "1x1"), 2), ((1, "2X4"), 2)],
)
def test_get_tpu_num_nodes_is_the_sdks(args: tuple[object, ...], expected: int) -> None:
    from kubeflow.trainer import get_tpu_num_nodes as theirs

    assert ktrain.get_tpu_num_nodes(*args) == theirs(*args) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args", [(0, "2x2"), (1, ""), (1, "2x"), (1, "2x2x2x2"), (1, "0x2"), (1, "2x3"), (1, "2x2", 0), (1, "axb")]
)
def test_get_tpu_num_nodes_refuses_what_the_sdk_refuses_with_its_message(args: tuple[object, ...]) -> None:
    from kubeflow.trainer import get_tpu_num_nodes as theirs

    with pytest.raises(ValueError) as sdk_error:
        theirs(*args)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as ktrain_error:
        ktrain.get_tpu_num_nodes(*args)  # type: ignore[arg-type]
    assert str(ktrain_error.value) == str(sdk_error.value)


def test_data_cache_initializer_checks_as_the_sdks() -> None:
    from kubeflow.trainer import DataCacheInitializer as Theirs

    good = {"storage_uri": "cache://schema/table", "metadata_loc": "s3://b/m.json", "num_data_nodes": 4}
    assert ktrain.DataCacheInitializer(**good).num_data_nodes == Theirs(**good).num_data_nodes == 4
    for bad in ({"num_data_nodes": 1}, {"storage_uri": "s3://x/y"}, {"storage_uri": "cache://one"}):
        with pytest.raises(ValueError) as sdk_error:
            Theirs(**{**good, **bad})
        with pytest.raises(ValueError) as ktrain_error:
            ktrain.DataCacheInitializer(**{**good, **bad})
        assert str(ktrain_error.value) == str(sdk_error.value)


def test_train_job_template_reads_as_the_train_calls_keywords() -> None:
    trainer = ktrain.CustomTrainer(func=print)
    template = ktrain.TrainJobTemplate(trainer=trainer, runtime="torch-distributed")
    assert dict(**template) == {"trainer": trainer, "runtime": "torch-distributed", "initializer": None}
