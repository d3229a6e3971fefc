"""End-to-end fixtures: a real cluster named by KTRAIN_E2E_KUBECONFIG, and a temporary namespace.

The suite needs only an API server with the JobSet, both PodGroup and the Trainer CRDs; no
controller has to run (so it checks what the API server stores, not pods running)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

ENV = "KTRAIN_E2E_KUBECONFIG"


@dataclass
class E2E:
    kubeconfig: str
    namespace: str
    api: Any  # kubernetes.client.ApiClient, for checks independent of ktrain's own client

    def args(self) -> list[str]:
        return ["--kubeconfig", self.kubeconfig, "-n", self.namespace]


@pytest.fixture(scope="session")
def e2e_kubeconfig() -> str:
    path = os.environ.get(ENV)
    if not path:
        pytest.skip(f"{ENV} is not set: no cluster for the end-to-end suite")
    if not os.path.isfile(path):
        pytest.fail(f"{ENV}={path} is not a file")
    return path


@pytest.fixture(scope="session")
def e2e(e2e_kubeconfig: str) -> Iterator[E2E]:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=e2e_kubeconfig)
    core = client.CoreV1Api(api)
    namespace = f"ktrain-e2e-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        yield E2E(e2e_kubeconfig, namespace, api)
    finally:
        # Without a namespace controller the namespace stays Terminating; that is the cluster's business.
        core.delete_namespace(namespace)
        api.close()
