"""Pod host names and ports rewritten for one machine (ktrain.local.netmap)."""

from __future__ import annotations

import itertools
import json

import pytest

from ktrain.local.netmap import NetMap, Rewriter


def _rewriter() -> Rewriter:
    netmap = NetMap(jobset="demo", rjobs=["node", "launcher"], subdomain="demo", namespace="team-a")
    netmap.hosts |= {"demo-node-0-0", "demo-node-0-1", "demo-launcher-0-0"}
    ports = itertools.count(40000)
    return Rewriter(netmap, lambda: next(ports))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("demo-node-0-0.demo", "127.0.0.1"),
        ("demo-node-0-0", "127.0.0.1"),
        ("demo-node-0-0.demo.team-a.svc", "127.0.0.1"),
        ("demo-node-0-0.demo.team-a.svc.cluster.local:29500", "127.0.0.1:40000"),
        ("tcp://demo-node-0-1.demo:29500/x", "tcp://127.0.0.1:40000/x"),
        ("demo-node-0-0.demo:29500,demo-node-0-1.demo:29500", "127.0.0.1:40000,127.0.0.1:40001"),
        # not pod names: another JobSet, a pod that does not exist, a longer domain, a prefix
        ("other-node-0-0.demo", "other-node-0-0.demo"),
        ("demo-node-0-7.demo", "demo-node-0-7.demo"),
        ("demo-node-0-0.demo.example.com", "demo-node-0-0.demo.example.com"),
        ("xdemo-node-0-0.demo", "xdemo-node-0-0.demo"),
        ("demo-node-0-00", "demo-node-0-00"),
        # the JobSet name alone is not a host (wrappers build host names from it)
        ("demo", "demo"),
    ],
)
def test_rewrite(text: str, expected: str) -> None:
    assert _rewriter().rewrite(text) == expected


def test_the_same_pod_and_port_get_the_same_local_port_everywhere() -> None:
    r = _rewriter()
    a = r.rewrite("demo-node-0-0.demo:29500")
    b = r.rewrite("x=demo-node-0-0:29500")
    c = r.rewrite("demo-node-0-0.demo:2222")
    assert a == "127.0.0.1:40000" and b == "x=127.0.0.1:40000" and c == "127.0.0.1:40001"


def test_port_variables_follow_their_address_variable() -> None:
    env = {
        "MASTER_ADDR": "demo-node-0-0.demo",
        "MASTER_PORT": "23456",
        "PET_MASTER_ADDR": "demo-node-0-0.demo",
        "PET_MASTER_PORT": "29500",
        "DMLC_TRACKER_URI": "demo-node-0-1.demo",
        "DMLC_TRACKER_PORT": "29500",
        "OTHER_PORT": "1234",  # no address beside it: left alone
        "NUM": "29500",
    }
    out = _rewriter().rewrite_env(env)
    assert out["MASTER_ADDR"] == out["PET_MASTER_ADDR"] == out["DMLC_TRACKER_URI"] == "127.0.0.1"
    ports = {out["MASTER_PORT"], out["PET_MASTER_PORT"], out["DMLC_TRACKER_PORT"]}
    assert len(ports) == 3 and all(int(p) >= 40000 for p in ports)
    assert out["OTHER_PORT"] == "1234" and out["NUM"] == "29500"


def test_json_values_and_url_port_pairs() -> None:
    mx = {"cluster": {"scheduler": [{"url": "demo-node-0-0.demo", "port": 9091}]}, "task": {"type": "worker"}}
    out = json.loads(_rewriter().rewrite_json(json.dumps(mx)))
    assert out["cluster"]["scheduler"] == [{"url": "127.0.0.1", "port": 40000}]
    assert out["task"] == {"type": "worker"}
    assert _rewriter().rewrite_json('{"not json"') == '{"not json"'


def test_launcher_options_get_the_local_port() -> None:
    args = ["torchrun", "--master_addr", "demo-node-0-0.demo", "--master_port=29500", "--rdzv-endpoint"]
    args += ["demo-node-0-1.demo:29400", "train.py", "--port", "8080"]
    r = _rewriter()
    out = r.rewrite_args(args)
    master, rdzv = r.netmap.ports["demo-node-0-0:29500"], r.netmap.ports["demo-node-0-1:29400"]
    assert master != rdzv
    assert out == [
        "torchrun",
        "--master_addr",
        "127.0.0.1",
        f"--master_port={master}",
        "--rdzv-endpoint",
        f"127.0.0.1:{rdzv}",
        "train.py",
        "--port",
        "8080",
    ]


def test_the_shim_applies_the_same_map_without_new_ports() -> None:
    r = _rewriter()
    r.rewrite("demo-node-0-0.demo:2222")
    again = Rewriter(NetMap.from_json(r.netmap.to_json()))
    assert again.rewrite("demo-node-0-0.demo:2222 demo-node-0-1.demo:2222") == "127.0.0.1:40000 127.0.0.1:2222"


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(
    ["demo-node-0-0", "demo-node-0-1", "demo-launcher-0-0", "demo-node-0-9", ".demo", ".team-a.svc", ":29500",
     ":2222", ":", "-", ".", "x", "demo", " ", ",", '"', "1", "/"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_rewriting_is_total_idempotent_and_leaves_no_pod_name(text: str) -> None:
    r = _rewriter()
    once = r.rewrite(text)
    assert r.rewrite(once) == once
    assert r.host_of(once) is None
    assert r.rewrite_json(text) is not None  # never raises on what is not JSON


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.integers(0, 70000) | _PIECES, lambda inner: st.lists(inner, max_size=3)
       | st.dictionaries(st.sampled_from(["url", "port", "host"]), inner, max_size=3), max_leaves=10))  # fmt: skip
def test_json_rewriting_keeps_json_and_shapes(value: object) -> None:
    text = json.dumps(value)
    out = json.loads(_rewriter().rewrite_json(text))
    assert type(out) is type(value)
    assert "demo-node-0-0" not in json.dumps(out) and "demo-launcher-0-0" not in json.dumps(out)


def test_a_pods_own_ip_with_its_own_port_is_that_pods_local_port() -> None:
    r = _rewriter()
    own = r.port("demo-node-0-0", 36543)
    other = r.port("demo-node-0-1", 36543)
    r.self_host = "demo-node-0-0"
    assert r.rewrite("127.0.0.1:36543") == f"127.0.0.1:{own}"
    assert r.rewrite(f"127.0.0.1:{own}") == f"127.0.0.1:{own}"  # already local: left alone
    assert r.rewrite("127.0.0.1:9999") == "127.0.0.1:9999"  # not one of its ports
    assert r.rewrite("demo-node-0-1:36543") == f"127.0.0.1:{other}"
