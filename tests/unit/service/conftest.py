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


def rendered(name: str = "demo", runtime: str = "torch-distributed", nodes: int = 2, **overrides: Any) -> list[Any]:
    """The objects `ktrain job render` makes for a bundled runtime in namespace team-a (what
    `job create` submits)."""
    from ktrain.cli.common import registry_from
    from ktrain.service.render import render_request
    from ktrain.service.requests import JobOverrides, RenderRequest

    request = RenderRequest(
        overrides=JobOverrides(runtime=runtime, name=name, nodes=nodes, namespace="team-a", **overrides)
    )
    return list(render_request(request, registry_from(None, None)).result.objects)
