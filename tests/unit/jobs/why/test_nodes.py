"""`ktrain.jobs.why.nodes`: the scheduler's fit error, and a pod against the nodes (taints and
tolerations, node selectors and required node affinity, the pod's resource ask) as kube-scheduler's
plugins judge them (component-helpers' taint/toleration and node-affinity rules).

The objects are tests/unit/jobs/why/objects.py's.
"""

from __future__ import annotations

from typing import Any

import pytest
from apiserver.scheduling import RECORDED

from ktrain.jobs.why.nodes import amount, matches_node, node_views, parse_fit_error, pod_ask
from ktrain.jobs.why.nodes import untolerated as why_untolerated

from .objects import JSON, _affinity, node, pod


@pytest.mark.parametrize(
    "message, nodes, reasons",
    [
        (RECORDED["gpu16"], 8, [(8, "Insufficient nvidia.com/gpu")]),
        (RECORDED["mem"], 8, [(8, "Insufficient memory")]),
        (RECORDED["selector-event"], 8, [(8, "node(s) didn't match Pod's node affinity/selector")]),
        (
            RECORDED["selector-condition"],
            8,
            [(3, "node(s) didn't match Pod's node affinity/selector"), (5, "node(s) had untolerated taint(s)")],
        ),
        # before 1.32 the taint was named, with a ", " inside the reason
        (
            "0/3 nodes are available: 1 node(s) had taint {a: b}, that the pod didn't tolerate, 2 Too many pods.",
            3,
            [(1, "node(s) had taint {a: b}, that the pod didn't tolerate"), (2, "Too many pods")],
        ),
        # a PreFilter rejection (coscheduling) carries no counts
        (
            "0/4 nodes are available: pre-filter pod p cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 3.",
            4,
            [
                (
                    None,
                    "pre-filter pod p cannot find enough sibling pods, current pods number: 2, minMember of group: 3",
                )
            ],
        ),
        ("0/3 nodes are unavailable: 3 Insufficient nvidia.com/gpu.", 3, [(3, "Insufficient nvidia.com/gpu")]),
    ],
)
def test_parse_fit_error_reads_the_histogram(message: str, nodes: int, reasons: list[Any]) -> None:
    fit = parse_fit_error(message)
    assert fit is not None
    assert (fit.nodes, fit.reasons) == (nodes, reasons)


@pytest.mark.parametrize(
    "message", ["", "pod has unbound immediate PersistentVolumeClaims", "0/x nodes are available: 1 a."]
)
def test_parse_fit_error_declines_other_texts(message: str) -> None:
    assert parse_fit_error(message) is None


@pytest.mark.parametrize(
    "toleration, taint, tolerated",
    [
        ({"operator": "Exists"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, True),
        ({"key": "a", "operator": "Exists"}, {"key": "a", "value": "b", "effect": "NoExecute"}, True),
        ({"key": "a", "value": "b"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, True),
        ({"key": "a", "value": "c"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, False),
        ({"key": "a", "operator": "Exists", "effect": "NoExecute"}, {"key": "a", "effect": "NoSchedule"}, False),
        ({"key": "b", "operator": "Exists"}, {"key": "a", "effect": "NoSchedule"}, False),
        ({"value": "b"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, False),  # no key: only Exists
        ({"key": "n", "operator": "Gt", "value": "3"}, {"key": "n", "value": "5", "effect": "NoSchedule"}, True),
        ({"key": "n", "operator": "Lt", "value": "3"}, {"key": "n", "value": "5", "effect": "NoSchedule"}, False),
    ],
)
def test_tolerations_follow_component_helpers(toleration: JSON, taint: JSON, tolerated: bool) -> None:
    view = node_views([node("n", taints=[taint])], None)[0]
    assert (why_untolerated(pod(0, spec={"tolerations": [toleration]}), view) == []) is tolerated


def test_prefer_no_schedule_taints_never_block() -> None:
    view = node_views([node("n", taints=[{"key": "a", "effect": "PreferNoSchedule"}])], None)[0]
    assert why_untolerated(pod(0), view) == []


@pytest.mark.parametrize(
    "spec, matches",
    [
        ({"nodeSelector": {"zone": "a"}}, True),
        ({"nodeSelector": {"zone": "b"}}, False),
        (_affinity({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}), True),
        (_affinity({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}), False),
        (_affinity({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}), True),
        (_affinity({"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["4"]}]}), True),
        (_affinity({"matchExpressions": [{"key": "size", "operator": "Lt", "values": ["4"]}]}), False),
        (_affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), True),
        (_affinity({}), False),  # an empty term selects nothing
        (_affinity({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {"matchExpressions": []}), False),
        (
            _affinity(
                {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
                {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
            ),
            True,
        ),  # terms are ORed
    ],
)
def test_node_selector_and_required_affinity(spec: JSON, matches: bool) -> None:
    view = node_views([node("n1", labels={"zone": "a", "size": "8"})], None)[0]
    assert matches_node(pod(0, spec=spec), view) is matches


def test_pod_ask_defaults_requests_from_limits_and_takes_init_peaks() -> None:
    spec = {
        "containers": [
            {
                "name": "a",
                "resources": {"limits": {"nvidia.com/gpu": "8", "memory": "2Gi"}, "requests": {"memory": "1Gi"}},
            },
            {"name": "b", "resources": {"requests": {"cpu": "500m"}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
    }
    ask = pod_ask({"spec": spec})
    assert {k: amount(k, v) for k, v in ask.items()} == {"nvidia.com/gpu": "8", "memory": "1Gi", "cpu": "4"}


@pytest.mark.parametrize(
    "resource, text, shown",
    [
        ("memory", "900Gi", "900Gi"),
        ("memory", "263921340Ki", "251.7Gi"),
        ("memory", "512Mi", "512Mi"),
        ("cpu", "2500m", "2500m"),
        ("cpu", "4", "4"),
        ("nvidia.com/gpu", "16", "16"),
    ],
)
def test_amounts_read_as_people_write_them(resource: str, text: str, shown: str) -> None:
    from ktrain.engine.quantity import Quantity

    assert amount(resource, Quantity.parse(text)) == shown
