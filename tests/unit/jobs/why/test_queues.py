"""`ktrain.jobs.why.queues`: a suspended job, by hand or waiting for Kueue (its Workload's
QuotaReserved / Admitted conditions, the LocalQueue's ClusterQueue), and the quota admission's refusal.

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.jobs.why.facts import NOT_SERVED
from ktrain.jobs.why.queues import (
    LOCAL_QUEUE,
    NO_KUEUE,
    NO_WORKLOAD,
    NOT_ADMITTED,
    SUSPENDED,
    WORKLOADS,
    parse_quota_refusal,
)
from ktrain.jobs.why.queues import QUEUED as why_QUEUED

from .objects import FORBIDDEN, PENDING, QUEUED, _cond, _workload, check_verdict, facts, jobset


def test_parse_quota_refusal() -> None:
    message = (
        'Error creating: pods "p" is forbidden: exceeded quota: q, requested: limits.cpu=2,requests.cpu=2, '
        "used: limits.cpu=4,requests.cpu=4, limited: limits.cpu=4,requests.cpu=4"
    )
    assert parse_quota_refusal(message) == (
        "q",
        {"limits.cpu": "2", "requests.cpu": "2"},
        {"limits.cpu": "4", "requests.cpu": "4"},
        {"limits.cpu": "4", "requests.cpu": "4"},
    )
    assert parse_quota_refusal("exceeded quota: q") is None


CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    ("suspended", lambda: facts(jobset(suspend=True), []), {}, SUSPENDED, "job demo is suspended", []),
    (
        "no-kueue",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {WORKLOADS: NOT_SERVED},
        NO_KUEUE,
        "job demo is suspended for Kueue queue q, but the cluster does not serve Kueue",
        [WORKLOADS],
    ),
    (
        "kueue-workloads-forbidden",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {WORKLOADS: FORBIDDEN},
        why_QUEUED,
        "job demo is suspended, waiting for Kueue queue q to admit it",
        [WORKLOADS],
    ),
    (
        "kueue-no-workload-yet",
        lambda: facts(jobset(suspend=True, labels=QUEUED, created=0.1), []),
        {WORKLOADS: []},
        why_QUEUED,
        "job demo is suspended; Kueue has not made its Workload yet",
        [WORKLOADS],
    ),
    (
        "kueue-never-made-a-workload",
        lambda: facts(jobset(suspend=True, labels=QUEUED, created=10), []),
        {WORKLOADS: []},
        NO_WORKLOAD,
        "job demo is suspended for Kueue queue q, but Kueue made no Workload for it in 10m",
        [WORKLOADS],
    ),
    (
        "kueue-pending-local-queue-missing",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [_workload([_cond("QuotaReserved", "False", "Inadmissible", "LocalQueue q doesn't exist")])],
            LOCAL_QUEUE: None,
        },
        NOT_ADMITTED,
        "Kueue has not admitted job demo (queue q): Inadmissible: LocalQueue q doesn't exist",
        [WORKLOADS, LOCAL_QUEUE],
    ),
    (
        "kueue-pending-in-cluster-queue",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [_workload([_cond("QuotaReserved", "False", "Pending", PENDING)])],
            LOCAL_QUEUE: {"spec": {"clusterQueue": "cq"}},
        },
        NOT_ADMITTED,
        f"Kueue has not admitted job demo to ClusterQueue cq: Pending: {PENDING}",
        [WORKLOADS, LOCAL_QUEUE],
    ),
    (
        "kueue-admission-check",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [
                _workload(
                    [_cond("QuotaReserved", "True", "QuotaReserved"), _cond("Admitted", "False", "NoChecks")],
                    {"clusterQueue": "cq"},
                    [{"name": "prov", "state": "Pending", "message": "waiting for capacity"}],
                )
            ]
        },
        NOT_ADMITTED,
        "Kueue reserved quota for job demo in ClusterQueue cq, waiting for prov",
        [WORKLOADS],
    ),
    (
        "kueue-deactivated",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [
                {
                    **_workload([_cond("Evicted", "True", "Deactivated", "The workload is deactivated")]),
                    "spec": {"active": False},
                }
            ]
        },
        NOT_ADMITTED,
        "Kueue's Workload jobset-demo-1 for job demo is deactivated (spec.active: false): it will not be admitted",
        [WORKLOADS],
    ),
    (
        "kueue-admitted",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {WORKLOADS: [_workload([_cond("QuotaReserved", "True"), _cond("Admitted", "True")], {"clusterQueue": "cq"})]},
        why_QUEUED,
        "Kueue admitted job demo to ClusterQueue cq; it is being resumed",
        [WORKLOADS],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
