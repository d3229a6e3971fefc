"""`ktrain.jobs.why.pods`: pods that fail or never start: image pulls, container config errors,
crash loops, OOM kills, failed pods, volumes that never mount (the kubelet's waiting reasons and events).

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.jobs.why.facts import EVENTS, LOG
from ktrain.jobs.why.pods import CONTAINER_ERROR, CRASH_LOOP, FAILED, IMAGE_PULL, POD_FAILED, STARTING

from .objects import FORBIDDEN, _cond, at, check_verdict, facts, jobset, pod, running

CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "failed-oom",
        lambda: facts(
            jobset(status={"conditions": [_cond("Failed", "True", "FailedJobs", "jobset failed")]}),
            [
                pod(
                    0,
                    "Failed",
                    limits={"memory": "8Gi"},
                    statuses=running({"terminated": {"exitCode": 137, "reason": "OOMKilled"}}),
                )
            ],
        ),
        {},
        FAILED,
        "job demo failed: container node was OOMKilled: it used more than its memory limit 8Gi (exit code 137)",
        [],
    ),
    (
        "image-pull",
        lambda: facts(
            jobset(),
            [pod(0, statuses=running({"waiting": {"reason": "ErrImagePull", "message": "rpc error: not found"}}))],
        ),
        {},
        IMAGE_PULL,
        "image trainer:1 cannot be pulled: rpc error: not found",
        [],
    ),
    (
        "image-pull-back-off-reads-the-event",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    statuses=running(
                        {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "trainer:1"'}}
                    ),
                )
            ],
        ),
        {
            EVENTS: [
                {
                    "involvedObject": {"kind": "Pod", "name": "demo-node-0-0-x"},
                    "reason": "Failed",
                    "message": 'Failed to pull image "trainer:1": denied',
                }
            ]
        },
        IMAGE_PULL,
        "image trainer:1 cannot be pulled: denied",
        [EVENTS],
    ),
    (
        "image-pull-back-off-1.33-message",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    statuses=running(
                        {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": 'Back-off pulling image "trainer:1": ErrImagePull: unauthorized',
                            }
                        }
                    ),
                )
            ],
        ),
        {},
        IMAGE_PULL,
        "image trainer:1 cannot be pulled: unauthorized",
        [],
    ),
    (
        "config-error",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    statuses=running(
                        {"waiting": {"reason": "CreateContainerConfigError", "message": 'secret "hf" not found'}}
                    ),
                )
            ],
        ),
        {},
        CONTAINER_ERROR,
        "container node of pod demo-node-0-0-x (node rank 0) cannot start: CreateContainerConfigError: "
        'secret "hf" not found',
        [],
    ),
    (
        "crash-loop-log-forbidden",
        lambda: facts(
            jobset(),
            [pod(0, "Running", statuses=running({"waiting": {"reason": "CrashLoopBackOff"}}, {"exitCode": 2}, 5))],
        ),
        {LOG: FORBIDDEN},
        CRASH_LOOP,
        "container node of pod demo-node-0-0-x (node rank 0) keeps crashing (5 restarts, last exit code 2)",
        [LOG],
    ),
    (
        "pod-failed",
        lambda: facts(
            jobset(), [pod(0, "Failed", statuses=running({"terminated": {"exitCode": 3, "reason": "Error"}}))]
        ),
        {LOG: [(at(1), "boom")]},
        POD_FAILED,
        "container node of pod demo-node-0-0-x (node rank 0) failed with exit code 3",
        [LOG],
    ),
    (
        "volume-never-mounts",
        lambda: facts(
            jobset(replicas=1),
            [pod(0, statuses=running({"waiting": {"reason": "ContainerCreating"}}), created=5)],
        ),
        {
            EVENTS: [
                {
                    "involvedObject": {"kind": "Pod", "name": "demo-node-0-0-x"},
                    "reason": "FailedMount",
                    "message": 'MountVolume.SetUp failed for volume "data" : configmap "cfg" not found',
                    "count": 4,
                }
            ]
        },
        CONTAINER_ERROR,
        "pod demo-node-0-0-x (node rank 0) cannot start on node n0: FailedMount: MountVolume.SetUp failed",
        [EVENTS],
    ),
    (
        "young-container-creating-is-starting",
        lambda: facts(
            jobset(replicas=1), [pod(0, statuses=running({"waiting": {"reason": "ContainerCreating"}}), created=0.5)]
        ),
        {},
        STARTING,
        "job demo is starting: 0 of 1 trainer pods are running; pod demo-node-0-0-x (node rank 0) is Pending "
        "(ContainerCreating)",
        [],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
