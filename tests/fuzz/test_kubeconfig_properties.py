"""Mutated kubeconfigs through both transports (issue #37): whatever a field holds, connecting and
listing ends in a KtrainError or an answer, never an internal error; both transports end the same
way (or, forced onto the standard library, it refuses what only the kubernetes client does); no
message quotes the token. kubectl's verdict per field is in
tests/unit/cluster/test_kubeconfig_contract.py (a subprocess per case is too slow for this)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from apiserver import ApiServerDouble
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktrain.cluster import client as k
from ktrain.cluster import credentials as creds
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.errors import KtrainError
from ktrain.inputs.kubeconfig_rules import FIELDS

TOKEN = "fuzz-s3cr3t-token"
FIELD_NAMES = sorted({(body, field) for body, fields in FIELDS.items() for field in fields})
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(["", "jane", "%%%", "aGVsbG8=", "file:///x", "http://[::1", "socks5://127.0.0.1:9", "\n"]),
    st.lists(st.sampled_from(["dev", "", 5]), max_size=2),
    st.dictionaries(
        st.sampled_from(["k", "a/b"]),
        st.one_of(st.lists(st.text(max_size=3), max_size=2), st.text(max_size=3)),
        max_size=2,
    ),
)


@pytest.fixture(scope="module")
def double():
    with ApiServerDouble(token=TOKEN, tls=True) as srv:
        yield srv


def _outcome(path: Path) -> tuple[str, str]:
    creds._EXEC_CACHE.clear()
    try:
        k.list_objects(connect(ConnectionOptions(kubeconfig=str(path), request_timeout=5)), k.NAMESPACE)
    except KtrainError as exc:
        return type(exc).__name__, str(exc)
    return "ok", ""


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(FIELD_NAMES), values), min_size=1, max_size=3))
def test_a_mutated_kubeconfig_ends_the_same_on_both_transports(double, tmp_path_factory, changes) -> None:
    doc = double.kubeconfig()
    where = {
        "cluster": doc["clusters"][0]["cluster"],
        "user": doc["users"][0]["user"],
        "context": doc["contexts"][0]["context"],
    }
    for (body, field), value in changes:
        where[body][field] = value
    path = tmp_path_factory.mktemp("kc") / "config"
    path.write_text(yaml.safe_dump(doc))
    saved = os.environ.get("KTRAIN_KUBE_CLIENT")
    outcomes = {}
    try:
        for transport in ("stdlib", "kubernetes"):
            os.environ["KTRAIN_KUBE_CLIENT"] = transport
            outcomes[transport] = _outcome(path)
    finally:
        if saved is None:
            os.environ.pop("KTRAIN_KUBE_CLIENT", None)
        else:
            os.environ["KTRAIN_KUBE_CLIENT"] = saved
    assert all(TOKEN not in message for _, message in outcomes.values())
    stdlib, kube = outcomes["stdlib"], outcomes["kubernetes"]
    if stdlib != kube:  # only what the kubernetes client alone does: stdlib refuses it, with the reason
        assert stdlib[0] == "UsageError" and ("kubernetes client" in stdlib[1] or "http:// proxies" in stdlib[1]), (
            outcomes
        )
