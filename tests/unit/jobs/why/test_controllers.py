"""`ktrain.jobs.why.controllers`: the controllers that make a job's objects: a TrainJob without
its JobSet (the Trainer controller), a JobSet without Jobs (the JobSet controller), Jobs whose pods are
refused (the Job controller's FailedCreate events).

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.jobs.why.controllers import JOBS, NO_JOBSET_CONTROLLER, NO_TRAINER_CONTROLLER, POD_CREATION_FAILED
from ktrain.jobs.why.facts import EVENTS
from ktrain.jobs.why.pods import STARTING

from .objects import at, check_verdict, facts, jobset

CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "trainer-starting",
        lambda: facts(
            None, [], trainjob={"kind": "TrainJob", "metadata": {"name": "demo", "creationTimestamp": at(0.1)}}
        ),
        {EVENTS: []},
        STARTING,
        "waiting for the Trainer controller to make the JobSet of TrainJob demo",
        [EVENTS],
    ),
    (
        "trainer-says-why",
        lambda: facts(
            None, [], trainjob={"kind": "TrainJob", "metadata": {"name": "demo", "creationTimestamp": at(0.1)}}
        ),
        {
            EVENTS: [
                {
                    "involvedObject": {"kind": "TrainJob", "name": "demo"},
                    "reason": "TrainJobResumed",
                    "message": 'runtime "x" not found',
                    "lastTimestamp": at(0),
                }
            ]
        },
        NO_TRAINER_CONTROLLER,
        'the Trainer controller has not made a JobSet for TrainJob demo: runtime "x" not found',
        [EVENTS],
    ),
    (
        "no-jobset-controller",
        lambda: facts(jobset(created=20), []),
        {JOBS: [], EVENTS: []},
        NO_JOBSET_CONTROLLER,
        "JobSet demo has no Jobs after 20m: is the JobSet controller running?",
        [JOBS, EVENTS],
    ),
    (
        "webhook-refuses-pods",
        lambda: facts(jobset(), []),
        {
            JOBS: [{"metadata": {"name": "demo-node-0"}}],
            EVENTS: [
                {
                    "involvedObject": {"kind": "Job", "name": "demo-node-0"},
                    "reason": "FailedCreate",
                    "message": 'Error creating: admission webhook "policy.example" denied the request: no GPUs here',
                }
            ],
        },
        POD_CREATION_FAILED,
        'the Job controller cannot create the pods of job demo: admission webhook "policy.example" denied the request',
        [JOBS, EVENTS],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
