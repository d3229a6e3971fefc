"""Fixtures of the cluster commands' CLI tests: an API-server double and its kubeconfig, and fast
polling for the commands that wait or follow (`usefixtures("fast_polling")`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster import reads


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "POLL_INTERVAL", 0.05)
