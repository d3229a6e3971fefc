"""ktrain.python_api.kubernetes_backend: `TrainerClient`'s cluster backend, built straight from a
KubernetesBackendConfig against the API-server double: what it refuses when built, that it sends
nothing until a call needs it, which runtime wins a name, and its errors."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble

import ktrain
from ktrain.errors import JobFailedError, RuntimeNotFoundError, UsageError
from ktrain.python_api.kubernetes_backend import KubernetesBackend

REPO = Path(__file__).resolve().parents[3]
NS = "team-a"


def _runtime(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / "runtimes" / f"{name}.yaml").read_text())
    return loaded


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        double.add_namespace(NS)
        double.put_object(_runtime("torch-distributed"))
        yield double


@pytest.fixture
def config(srv: ApiServerDouble, tmp_path: Path) -> ktrain.KubernetesBackendConfig:
    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    return ktrain.KubernetesBackendConfig(config_file=str(path))


def test_a_client_configuration_is_refused_with_what_to_give_instead(config: ktrain.KubernetesBackendConfig) -> None:
    config.client_configuration = object()
    with pytest.raises(UsageError, match="client_configuration: ktrain connects as kubectl does") as err:
        KubernetesBackend(config, "trainjob")
    assert "config_file=" in str(err.value.hint)


@pytest.mark.parametrize("target", ["local", "TrainJob", ""])
def test_an_unknown_target_is_refused(config: ktrain.KubernetesBackendConfig, target: str) -> None:
    with pytest.raises(UsageError, match="target must be one of jobset, trainjob"):
        KubernetesBackend(config, target)


def test_building_it_reads_the_kubeconfig_and_sends_nothing(
    srv: ApiServerDouble, config: ktrain.KubernetesBackendConfig
) -> None:
    srv.requests.clear()
    backend = KubernetesBackend(config, "trainjob")
    assert backend.target == "trainjob"
    assert backend.namespace == NS  # the kubeconfig context's
    assert srv.requests == []


def test_the_configs_namespace_wins_over_the_contexts(config: ktrain.KubernetesBackendConfig) -> None:
    config.namespace = "other"
    assert KubernetesBackend(config, "trainjob").namespace == "other"


def test_a_missing_kubeconfig_fails_when_built(tmp_path: Path) -> None:
    config = ktrain.KubernetesBackendConfig(config_file=str(tmp_path / "absent"))
    with pytest.raises(ktrain.errors.KtrainError):
        KubernetesBackend(config, "trainjob")


def test_a_namespaced_runtime_wins_over_the_cluster_runtime_of_its_name(
    srv: ApiServerDouble, config: ktrain.KubernetesBackendConfig
) -> None:
    namespaced = copy.deepcopy(_runtime("torch-distributed"))
    namespaced["kind"] = "TrainingRuntime"
    namespaced["metadata"]["namespace"] = NS
    srv.put_object(namespaced)
    entries = KubernetesBackend(config, "trainjob").runtime_entries()
    chosen = {e.runtime.name: e.runtime.kind for e in entries}
    assert chosen == {"torch-distributed": "TrainingRuntime"}


def test_target_jobset_also_offers_ktrains_own_runtimes(config: ktrain.KubernetesBackendConfig) -> None:
    cluster = {e.runtime.name for e in KubernetesBackend(config, "trainjob").runtime_entries()}
    jobset = [e.runtime.name for e in KubernetesBackend(config, "jobset").runtime_entries()]
    assert cluster == {"torch-distributed"}
    assert len(jobset) == len(set(jobset))  # one entry per name
    assert {"torch-distributed", "deepspeed-distributed"} <= set(jobset)


def test_its_errors_name_the_namespace_and_the_job(config: ktrain.KubernetesBackendConfig) -> None:
    backend = KubernetesBackend(config, "trainjob")
    missing = backend.runtime_missing("nope")
    assert isinstance(missing, RuntimeNotFoundError)
    assert "runtime 'nope' not found in namespace team-a or the cluster" in str(missing)
    failed = backend.failure("j1")
    assert isinstance(failed, JobFailedError)
    assert str(failed) == "TrainJob j1 is Failed"


def test_no_jobs_is_an_empty_list(config: ktrain.KubernetesBackendConfig) -> None:
    assert KubernetesBackend(config, "trainjob").list_jobs(None) == []
