"""ktrain.python_api.backends: the one interface (`TrainerBackend`, the SDK's `RuntimeBackend`) that
a `TrainerClient` runs on, and that the cluster and the local backends both implement in full."""

from __future__ import annotations

import inspect

import pytest

import ktrain
from ktrain.errors import RuntimeNotFoundError
from ktrain.python_api.backends import TrainerBackend
from ktrain.python_api.kubernetes_backend import KubernetesBackend
from ktrain.python_api.local_backend import LocalBackend

INTERFACE = {
    "namespace",
    "runtime_entries",
    "runtime_missing",
    "submit",
    "list_jobs",
    "get_job",
    "get_job_logs",
    "get_job_events",
    "failure",
    "delete_job",
}


def test_the_interface_is_what_a_trainer_client_calls() -> None:
    assert set(TrainerBackend.__abstractmethods__) == INTERFACE
    with pytest.raises(TypeError):
        TrainerBackend()  # type: ignore[abstract]


@pytest.mark.parametrize("backend", [KubernetesBackend, LocalBackend])
def test_each_backend_implements_the_whole_interface_with_its_parameters(backend: type[TrainerBackend]) -> None:
    assert not backend.__abstractmethods__
    for name in sorted(INTERFACE - {"namespace"}):
        mine, declared = getattr(backend, name), getattr(TrainerBackend, name)
        assert mine is not declared, name
        assert list(inspect.signature(mine).parameters) == list(inspect.signature(declared).parameters), name
    assert isinstance(backend.namespace, property)


def test_a_backend_that_leaves_a_method_out_cannot_be_made() -> None:
    class Partial(TrainerBackend):
        target = "local"

        @property
        def namespace(self) -> str:
            return "default"

    with pytest.raises(TypeError, match="runtime_entries"):
        Partial()  # type: ignore[abstract]


def test_a_local_backend_names_the_sdk_backend_its_options_check() -> None:
    local = LocalBackend(
        ktrain.LocalProcessBackendConfig(), "LocalProcessBackendConfig"
    )  # the SDK class: LocalProcessBackend
    assert (local.target, local.option_backend, local.namespace) == ("local", "LocalProcessBackend", "default")
    assert KubernetesBackend.option_backend is None  # the options' default backend: Kubernetes
    assert isinstance(local.runtime_missing("nope"), RuntimeNotFoundError)
