"""`ktrain.jobs.why.diagnosis.diagnose`: the order in which the areas of `ktrain.jobs.why` are asked
(an ended job first, then a suspended one, missing controllers, pods the scheduler refused
or no scheduler looks at, pods that fail, running), and what every verdict carries (the reads refused, the notes).

Each area's verdicts are tested in its own file (tests/unit/jobs/why/test_<area>.py); the objects
and the reader (`settle`) are in tests/unit/jobs/why/objects.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from apiserver.scheduling import RECORDED

from ktrain.jobs.why.diagnosis import diagnose
from ktrain.jobs.why.facts import EVENTS, SUCCEEDED, UNKNOWN
from ktrain.jobs.why.gangs import NO_SCHEDULER
from ktrain.jobs.why.nodes import NODES
from ktrain.jobs.why.pods import FAILED, STARTING
from ktrain.jobs.why.queues import SUSPENDED
from ktrain.jobs.why.scheduling import INSUFFICIENT, TOO_LARGE

from .objects import (
    FORBIDDEN,
    GPU16,
    NODES8,
    NOW,
    _cond,
    at,
    check_verdict,
    facts,
    jobset,
    pod,
    refused,
    running,
    settle,
)


def test_a_refused_read_is_listed_and_never_asked_again() -> None:
    f = facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))])
    verdict, made = settle(f, {NODES: FORBIDDEN})
    assert made == [NODES]
    assert verdict.code == INSUFFICIENT
    assert verdict.unread == ['nodes: forbidden: User "u" cannot list resource']
    assert diagnose(f, NOW).needs is None  # decided: no read left to make


def test_base_notes_are_listed_with_the_refused_reads() -> None:
    f = facts(jobset(suspend=True), [])
    f.notes.append('trainjobs.trainer.kubeflow.org "demo" is forbidden: User "u" cannot get resource')
    verdict, _ = settle(f, {})
    assert verdict.unread == ['trainjobs.trainer.kubeflow.org "demo" is forbidden: User "u" cannot get resource']


CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "succeeded",
        lambda: facts(jobset(status={"conditions": [_cond("Completed", "True", "AllJobsCompleted")]}), []),
        {},
        SUCCEEDED,
        "job demo completed (AllJobsCompleted)",
        [],
    ),
    (
        "pods-unreadable",
        lambda: facts(jobset(), None),
        {},
        UNKNOWN,
        "job demo is Created; its pods could not be read",
        [],
    ),
    # --- the first reason that holds wins, in diagnosis.py's order ---
    (
        "an-ended-job-is-not-asked-about-its-pods",
        lambda: facts(
            jobset(status={"conditions": [_cond("Completed", "True", "AllJobsCompleted")]}),
            [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))],
        ),
        {},
        SUCCEEDED,
        "job demo completed (AllJobsCompleted)",
        [],
    ),
    (
        "failed-before-suspended",
        lambda: facts(jobset(suspend=True, status={"conditions": [_cond("Failed", "True", "FailedJobs", "boom")]}), []),
        {},
        FAILED,
        "job demo failed: FailedJobs: boom",
        [],
    ),
    (
        "suspended-before-the-pods-the-scheduler-refused",
        lambda: facts(jobset(suspend=True), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {},
        SUSPENDED,
        "job demo is suspended",
        [],
    ),
    (
        "a-trainjob-without-its-jobset-before-its-pods",
        lambda: facts(
            None, None, trainjob={"kind": "TrainJob", "metadata": {"name": "demo", "creationTimestamp": at(0.1)}}
        ),
        {EVENTS: []},
        STARTING,
        "waiting for the Trainer controller to make the JobSet of TrainJob demo",
        [EVENTS],
    ),
    (
        "a-refused-pod-before-a-crashing-one",
        lambda: facts(
            jobset(limits=GPU16),
            [
                pod(0, "Running", statuses=running({"waiting": {"reason": "CrashLoopBackOff"}}, {"exitCode": 2}, 5)),
                pod(1, limits=GPU16, conditions=refused(RECORDED["gpu16"])),
            ],
        ),
        {NODES: NODES8},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; the largest node has 8 (8 nodes)",
        [NODES],
    ),
    (
        "a-pod-no-scheduler-looks-at-before-an-image-pull",
        lambda: facts(
            jobset(),
            [pod(0, statuses=running({"waiting": {"reason": "ErrImagePull", "message": "denied"}})), pod(1, created=3)],
        ),
        {},
        NO_SCHEDULER,
        "the default scheduler has not looked at pod demo-node-0-1-x in 3m",
        [],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
