"""The runtime a TrainJob names: resolve_runtime as the TrainJob webhook looks it up, and the
runtime's own rules (check_runtime, the MPI extension hint)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ktrain import constants as c
from ktrain.errors import RuntimeNotFoundError, UsageError, ValidationFailedError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.runtimes import check_runtime, is_runtime_path, is_torchtune_runtime, resolve_runtime


def _job(name: str, kind: str | None = None) -> dict:
    ref: dict = {"name": name}
    if kind:
        ref["kind"] = kind
    return {"spec": {"runtimeRef": ref}}


def test_the_runtime_named_in_the_job_is_found_as_a_cluster_training_runtime() -> None:
    entry = resolve_runtime(RuntimeRegistry(), _job("torch-distributed"), None)
    assert entry.runtime.name == "torch-distributed"
    assert entry.runtime.kind == c.CLUSTER_TRAINING_RUNTIME_KIND


def test_the_runtime_flag_wins_over_the_job_file() -> None:
    entry = resolve_runtime(RuntimeRegistry(), _job("torch-distributed"), "jax-distributed")
    assert entry.runtime.name == "jax-distributed"


def test_no_runtime_at_all_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no runtime given: pass --runtime NAME"):
        resolve_runtime(RuntimeRegistry(), {"spec": {}}, None)


def test_a_name_longer_than_the_crd_allows_is_refused() -> None:
    with pytest.raises(Exception, match="--runtime: Too long: may not be more than 253 bytes"):
        resolve_runtime(RuntimeRegistry(), {}, "r" * 254)


def test_an_unknown_runtime_is_reported_as_the_webhook_does() -> None:
    with pytest.raises(RuntimeNotFoundError, match="nope") as caught:
        resolve_runtime(RuntimeRegistry(), _job("nope"), None)
    assert "ClusterTrainingRuntime" in caught.value.message


def test_a_namespaced_kind_does_not_find_a_cluster_runtime() -> None:
    with pytest.raises(RuntimeNotFoundError) as caught:
        resolve_runtime(RuntimeRegistry(), _job("torch-distributed", c.TRAINING_RUNTIME_KIND), None)
    assert "set spec.runtimeRef.kind: ClusterTrainingRuntime" in (caught.value.hint or "")


def test_torchtune_runtimes_are_told_apart_by_their_framework_label() -> None:
    registry = RuntimeRegistry()
    assert is_torchtune_runtime(registry.get("torchtune-llama3.2-1b").runtime)
    assert not is_torchtune_runtime(registry.get("torch-distributed").runtime)


def test_every_bundled_runtime_passes_its_own_rules() -> None:
    registry = RuntimeRegistry()
    for name in registry.names():
        check_runtime(registry.get(name), allow_extensions=False)


def test_an_intel_mpi_runtime_is_refused_with_the_extension_hint(tmp_path: Path) -> None:
    runtime = yaml.safe_load(Path(RuntimeRegistry().get("deepspeed-distributed").path).read_text())
    runtime["metadata"]["name"] = "intel-mpi"
    runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "Intel"
    path = tmp_path / "intel.yaml"
    path.write_text(yaml.safe_dump(runtime))
    entry = RuntimeRegistry(files=[str(path)]).get("intel-mpi")
    with pytest.raises(ValidationFailedError, match='Unsupported value: "Intel"') as caught:
        check_runtime(entry, allow_extensions=False)
    assert "add --allow-extensions" in (caught.value.hint or "")
    check_runtime(entry, allow_extensions=True)


@pytest.mark.parametrize(
    ("path", "expected"),
    [("spec.template.spec.replicatedJobs", True), ("spec.mlPolicy.numNodes", True), ("spec.trainer.image", False)],
)
def test_runtime_paths_are_those_a_trainjob_does_not_have(path: str, expected: bool) -> None:
    assert is_runtime_path(path) is expected
