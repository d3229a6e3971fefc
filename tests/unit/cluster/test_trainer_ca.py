"""`ktrain.cluster.trainer_ca`: the controller's CA for `<job>-tls-config`, read as the controller
reads it (Secret kubeflow-trainer-webhook-cert, key ca.crt), and what is said when it cannot be."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.cluster.trainer_ca import read_status_ca
from ktrain.service.requests import RenderRequest
from ktrain.service.trainer_ca import fill_status_ca

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[ApiServerDouble, Any]]:
    with ApiServerDouble() as srv:
        srv.add_namespace("kubeflow-system")
        yield srv, connect(ConnectionOptions(kubeconfig=str(srv.write_kubeconfig(tmp_path / "kubeconfig"))))


def _secret(srv: ApiServerDouble, data: dict[str, str]) -> None:
    meta = {"name": "kubeflow-trainer-webhook-cert", "namespace": "kubeflow-system"}
    srv.put_object({"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": data})


def test_the_ca_is_the_secrets_ca_crt(cluster: tuple[ApiServerDouble, Any]) -> None:
    srv, kube = cluster
    _secret(srv, {"ca.crt": base64.b64encode(PEM.encode()).decode(), "tls.key": "c2VjcmV0"})
    assert read_status_ca(kube, "kubeflow-system") == (PEM, None)
    request = RenderRequest(feature_gates={"TrainJobStatus": True})
    assert fill_status_ca(kube, request) is None and request.status_ca == PEM


def test_a_missing_secret_or_key_is_said(cluster: tuple[ApiServerDouble, Any]) -> None:
    srv, kube = cluster
    ca, why = read_status_ca(kube, "kubeflow-system")
    assert ca is None and why is not None and "does not exist" in why
    _secret(srv, {"other": "eA=="})
    assert read_status_ca(kube, "kubeflow-system") == (
        None,
        "Secret kubeflow-system/kubeflow-trainer-webhook-cert has no ca.crt",
    )


def test_without_the_gate_nothing_is_read(cluster: tuple[ApiServerDouble, Any]) -> None:
    srv, kube = cluster
    srv.clear_requests()
    request = RenderRequest(feature_gates={"TrainJobStatus": False})
    assert fill_status_ca(kube, request) is None and request.status_ca is None
    assert srv.requests_for(resource="secrets") == []
