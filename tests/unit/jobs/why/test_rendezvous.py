"""`ktrain.jobs.why.rendezvous`: a running job, or one whose rank 0 waits at the rendezvous for its
peers (torch elastic's and c10d's log lines, their timestamps).

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.jobs.why.facts import LOG, RUNNING
from ktrain.jobs.why.rendezvous import RENDEZVOUS_WAIT, rendezvous_wait

from .objects import NOW, at, check_verdict, facts, jobset, pod, running


@pytest.mark.parametrize(
    "lines, waited",
    [
        ([(at(9), "starting"), (at(8), "[default] Rendezvous'ing worker group")], 8 * 60),
        (
            [
                (at(9), "Waiting in store based barrier to initialize process group for rank: 0"),
                (at(8), "Waiting in store based barrier to initialize process group for rank: 0"),
                (at(8), "*****"),
            ],
            9 * 60,
        ),
        ([(at(9), "[default] Rendezvous'ing worker group"), (at(1), "epoch 1 loss 0.5")], None),
        ([(at(9), "epoch 1 loss 0.5")], None),
        ([("", "[default] Rendezvous'ing worker group")], None),  # no timestamp: cannot say how long
    ],
)
def test_rendezvous_wait(lines: list[tuple[str, str]], waited: float | None) -> None:
    assert rendezvous_wait(lines, NOW) == waited


CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "recovered-oom-is-history",
        lambda: facts(
            jobset(replicas=1),
            [pod(0, "Running", statuses=running(last={"exitCode": 137, "reason": "OOMKilled"}, restarts=1))],
        ),
        {LOG: [(at(0.1), "step 9")]},
        RUNNING,
        "job demo is running (1 of 1 trainer pods)",
        [LOG],
    ),
    (
        "running-no-log-yet",
        lambda: facts(jobset(replicas=1), [pod(0, "Running", statuses=running())]),
        {LOG: []},
        RUNNING,
        "job demo is running (1 of 1 trainer pods)",
        [LOG],
    ),
    (
        "rendezvous",
        lambda: facts(jobset(replicas=1), [pod(0, "Running", statuses=running())]),
        {LOG: [(at(4), "[default] Rendezvous'ing worker group")]},
        RENDEZVOUS_WAIT,
        "job demo runs but is stuck: rank 0 has waited 4m at the rendezvous for its peers",
        [LOG],
    ),
    (
        "rendezvous-too-young-to-call",
        lambda: facts(jobset(replicas=1), [pod(0, "Running", statuses=running())]),
        {LOG: [(at(0.5), "[default] Rendezvous'ing worker group")]},
        RUNNING,
        "job demo is running",
        [LOG],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
