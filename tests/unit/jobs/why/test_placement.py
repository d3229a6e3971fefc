"""`ktrain.jobs.why.placement`: a pod the scheduler refused for its placement: required pod
(anti-)affinity and JobSet's exclusive placement (interpodaffinity/filtering.go, podtopologyspread).

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.jobs.why.nodes import NODE_PODS, NODES
from ktrain.jobs.why.placement import EXCLUSIVE_PLACEMENT, POD_AFFINITY

from .objects import ANTI, FORBIDDEN, check_verdict, facts, jobset, node, pod, refused

CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "pod-anti-affinity-names-the-rule",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [ANTI]}}},
                    conditions=refused("0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."),
                )
            ],
        ),
        {NODES: [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})], NODE_PODS: []},
        POD_AFFINITY,
        "pod demo-node-0-0-x's required anti-affinity keeps it out of 2 of 2 nodes (topologyKey zone, pods "
        "matching app=db,tier in (a,b)): pods it must not share a domain with run there",
        [NODES, NODE_PODS],
    ),
    (
        "exclusive-placement-with-node-pods-forbidden",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    annotations={c.JOBSET_EXCLUSIVE_ANNOTATION: "zone"},
                    conditions=refused("0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."),
                )
            ],
        ),
        {NODES: [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})], NODE_PODS: FORBIDDEN},
        EXCLUSIVE_PLACEMENT,
        "JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology: zone) puts each Job in a zone "
        "domain of its own; no zone domain of 2 is free for it (which Jobs hold them could not be read",
        [NODES, NODE_PODS],
    ),
    (
        "exclusive-placement-on-nodes-without-the-label",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    annotations={c.JOBSET_EXCLUSIVE_ANNOTATION: "rack"},
                    conditions=refused("0/2 nodes are available: 2 node(s) didn't match pod affinity rules."),
                )
            ],
        ),
        {NODES: [node("a"), node("b")], NODE_PODS: []},
        EXCLUSIVE_PLACEMENT,
        "JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology: rack) puts each Job in a rack "
        "domain of its own, and no node has label rack",
        [NODES, NODE_PODS],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
