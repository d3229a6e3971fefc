"""`ktrain.jobs.why.scheduling`: a pod the scheduler refused, decoded against the pod's ask and the
nodes: too large for every node, nodes too busy, no matching node, cordoned nodes, no nodes at all.

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest
from apiserver.scheduling import RECORDED

from ktrain import constants as c
from ktrain.jobs.why.nodes import NODE_PODS, NODES
from ktrain.jobs.why.scheduling import (
    INSUFFICIENT,
    NO_MATCHING_NODE,
    NO_NODES,
    NODES_CORDONED,
    TOO_LARGE,
    UNSCHEDULABLE,
)

from .objects import FORBIDDEN, GPU16, NODES8, _affinity, check_verdict, facts, jobset, node, pod, refused

CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "too-large",
        lambda: facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {NODES: NODES8},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; the largest node has 8 (8 nodes)",
        [NODES],
    ),
    (
        "too-large-mixed-nodes",
        lambda: facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {NODES: [node("a", gpus=8), node("b", gpus=4), node("c", gpus=0)]},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; the largest node has 8 (1 of 3 nodes)",
        [NODES],
    ),
    (
        "no-gpus-at-all",
        lambda: facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {NODES: [{"metadata": {"name": "cpu"}, "status": {"allocatable": {"cpu": "8", "pods": "110"}}}]},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; no node has any nvidia.com/gpu (1 node)",
        [NODES],
    ),
    (
        "busy-gpus",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    limits={"nvidia.com/gpu": "4"},
                    conditions=refused("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."),
                )
            ],
        ),
        {
            NODES: [node("a"), node("b")],
            NODE_PODS: [
                {
                    "spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "6"}}}]},
                    "status": {"phase": "Running"},
                },
                {
                    "spec": {"nodeName": "b", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "7"}}}]},
                    "status": {"phase": "Running"},
                },
            ],
        },
        INSUFFICIENT,
        "each pod asks 4 nvidia.com/gpu; the most free on any node is 2 (a); nodes have up to 8, "
        "other pods hold the rest",
        [NODES, NODE_PODS],
    ),
    (
        "each-node-short-of-something-else",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    requests={"cpu": "20", "nvidia.com/gpu": "4"},
                    conditions=refused("0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu."),
                )
            ],
        ),
        {
            NODES: [node("a"), node("b")],
            NODE_PODS: [
                {
                    "spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"cpu": "30"}}}]},
                    "status": {"phase": "Running"},
                },
                {
                    "spec": {"nodeName": "b", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "8"}}}]},
                    "status": {"phase": "Running"},
                },
            ],
        },
        INSUFFICIENT,
        "each pod asks 20 cpu; the most free on any node is 32 (b)",  # cpu first on a tie: the scheduler's order
        [NODES, NODE_PODS],
    ),
    (
        "selector",
        lambda: facts(
            jobset(),
            [pod(0, spec={"nodeSelector": {"gpu-type": "a100"}}, conditions=refused(RECORDED["selector-event"]))],
        ),
        {NODES: [node("h", labels={"gpu-type": "h100"}), node("t1", labels={"gpu-type": "t4"}), node("x")]},
        NO_MATCHING_NODE,
        "no node matches nodeSelector gpu-type=a100 (nodes have gpu-type: h100 ×1, t4 ×1, (none) ×1)",
        [NODES],
    ),
    (
        "selector-label-nowhere",
        lambda: facts(
            jobset(), [pod(0, spec={"nodeSelector": {"pool": "big"}}, conditions=refused(RECORDED["selector-event"]))]
        ),
        {NODES: NODES8},
        NO_MATCHING_NODE,
        "no node matches nodeSelector pool=big (no node has label pool)",
        [NODES],
    ),
    (
        "selector-labels-never-together",
        lambda: facts(
            jobset(),
            [pod(0, spec={"nodeSelector": {"a": "1", "b": "1"}}, conditions=refused(RECORDED["selector-event"]))],
        ),
        {NODES: [node("x", labels={"a": "1"}), node("y", labels={"b": "1"})]},
        NO_MATCHING_NODE,
        "no node matches nodeSelector a=1, b=1 (each label is on some node, never all on one)",
        [NODES],
    ),
    (
        "affinity",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec=_affinity({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]}),
                    conditions=refused(RECORDED["selector-event"]),
                )
            ],
        ),
        {NODES: [node("x", labels={"zone": "a"})]},
        NO_MATCHING_NODE,
        "no node matches the pod's required node affinity (nodes have zone: a ×1)",
        [NODES],
    ),
    (
        "cordoned",
        lambda: facts(jobset(), [pod(0, conditions=refused("0/1 nodes are available: 1 node(s) were unschedulable."))]),
        {NODES: [{**node("x"), "spec": {"unschedulable": True}}]},
        NODES_CORDONED,
        "every node pod demo-node-0-0-x may use is cordoned (1 node, spec.unschedulable)",
        [NODES],
    ),
    (
        "no-nodes",
        lambda: facts(jobset(), [pod(0, conditions=refused("0/0 nodes are available: ."))]),
        {NODES: []},
        NO_NODES,
        "the cluster has no nodes for pod demo-node-0-0-x",
        [NODES],
    ),
    (
        "nodes-forbidden-selector",
        lambda: facts(
            jobset(),
            [pod(0, spec={"nodeSelector": {"gpu-type": "a100"}}, conditions=refused(RECORDED["selector-condition"]))],
        ),
        {NODES: FORBIDDEN},
        NO_MATCHING_NODE,
        "3 of 8 nodes do not match the pod's node selector/affinity (gpu-type=a100); 5 of 8 nodes have taints "
        "the pod does not tolerate (the nodes could not be read to say more)",
        [NODES],
    ),
    (
        "scheduler-fits-now",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    conditions=refused(
                        # volumerestrictions/volume_restrictions.go ErrReasonDiskConflict: not decoded
                        "0/2 nodes are available: 2 node(s) had no available disk."
                    ),
                )
            ],
        ),
        {NODES: [node("a"), node("b")], NODE_PODS: []},
        UNSCHEDULABLE,
        "the scheduler cannot place pod demo-node-0-0-x: 0/2 nodes are available: 2 node(s) had no available disk",
        [NODES, NODE_PODS],
    ),
    (
        "anti-affinity-with-nodes-forbidden",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    annotations={c.JOBSET_EXCLUSIVE_ANNOTATION: "zone"},
                    conditions=refused(
                        "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match pod "
                        "anti-affinity rules."
                    ),
                )
            ],
        ),
        {NODES: FORBIDDEN},
        INSUFFICIENT,
        "1 of 4 nodes lack that much nvidia.com/gpu; 3 of 4 nodes are in zone domains other Jobs hold "
        "(JobSet exclusive placement, alpha.jobset.sigs.k8s.io/exclusive-topology: zone)",
        [NODES],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
