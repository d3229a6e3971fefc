"""Fixtures of the ktrain.cluster tests: the double in HTTPS mode with a token, and a fresh exec
credential cache for every test (a plugin's token is cached per process)."""

from __future__ import annotations

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster import credentials as creds

from .kubeconfigs import TOKEN


@pytest.fixture
def tls_srv():
    with ApiServerDouble(token=TOKEN, tls=True) as double:
        yield double


@pytest.fixture(autouse=True)
def _fresh_exec_cache():
    creds._EXEC_CACHE.clear()
    yield
    creds._EXEC_CACHE.clear()
