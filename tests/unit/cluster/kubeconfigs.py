"""Kubeconfigs for the tests of ktrain.cluster against the double in HTTPS mode (`tls_srv`,
tests/unit/cluster/conftest.py): the token it accepts, and a kubeconfig written and used."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from ktrain.cluster import client as k
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect

TOKEN = "tls-s3cr3t-token"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def auth_of(request: Any) -> str | None:
    """The Authorization header of a recorded request (the Python client spells it in lower case)."""
    return next((v for name, v in request.headers.items() if name.lower() == "authorization"), None)


def namespaces(kubeconfig: Path, **options: Any) -> list[str]:
    cluster = connect(ConnectionOptions(kubeconfig=str(kubeconfig), **options))
    return sorted(o["metadata"]["name"] for o in k.list_objects(cluster, k.NAMESPACE))
