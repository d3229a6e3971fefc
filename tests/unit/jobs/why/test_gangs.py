"""`ktrain.jobs.why.gangs`: pods no scheduler looks at (a `schedulerName` not running, or too young
to tell), and gangs: a Volcano PodGroup its queue has not admitted, a PodGroup with fewer pods than
its minMember.

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.jobs.why.facts import SERVED
from ktrain.jobs.why.gangs import GANG, NO_SCHEDULER, POD_GROUP
from ktrain.jobs.why.nodes import NODES
from ktrain.jobs.why.pods import STARTING
from ktrain.jobs.why.queues import QUEUED as why_QUEUED

from .objects import check_verdict, facts, jobset, node, pod, refused

CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "unscheduled-default-scheduler",
        lambda: facts(jobset(), [pod(0, created=3)]),
        {},
        NO_SCHEDULER,
        "the default scheduler has not looked at pod demo-node-0-0-x in 3m: is it running?",
        [],
    ),
    (
        "young-pod-is-starting",
        lambda: facts(jobset(), [pod(0, created=0.05), pod(1, created=0.05)]),
        {},
        STARTING,
        "job demo is starting: 0 of 2 trainer pods are running",
        [],
    ),
    (
        "volcano-queue-pending",
        lambda: facts(
            jobset(),
            [pod(0, spec={"schedulerName": "volcano"}, annotations={c.VOLCANO_GROUP_NAME_ANNOTATION: "pg"}, created=3)],
        ),
        {SERVED: True, POD_GROUP: {"spec": {"minMember": 2, "queue": "research"}, "status": {"phase": "Pending"}}},
        why_QUEUED,
        "Volcano has not admitted PodGroup pg to queue research (phase Pending)",
        [SERVED, POD_GROUP],
    ),
    (
        "gang-missing-members",
        lambda: facts(
            jobset(replicas=3),
            [
                pod(
                    0,
                    labels={c.COSCHEDULING_POD_GROUP_LABEL: "pg"},
                    conditions=refused(
                        "0/2 nodes are available: pre-filter pod demo-node-0-0-x cannot find enough sibling pods, "
                        "current pods number: 1, minMember of group: 3."
                    ),
                )
            ],
        ),
        {NODES: [node("a")], POD_GROUP: {"spec": {"minMember": 3}}},
        GANG,
        "the gang needs 3 pods (PodGroup pg minMember) but only 1 exist",
        [NODES, POD_GROUP],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
