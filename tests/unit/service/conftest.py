"""The service use cases' tests call them against the API-server double (the `kube` fixture,
tests/conftest.py: context namespace `team-a`), with jobs seeded as tests/cli/jobs_double.py does."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect


@pytest.fixture
def cluster(kube: Any) -> Any:
    """A connection to the double, as `ktrain --kubeconfig <kube.kubeconfig>` makes it."""
    return connect(ConnectionOptions(kubeconfig=kube.kubeconfig))
