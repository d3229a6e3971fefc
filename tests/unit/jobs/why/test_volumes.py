"""`ktrain.jobs.why.volumes`: a pod the scheduler refused for its volumes: a claim missing, not bound
(and why: the provisioner's event), lost, being deleted, pinned to another zone (volumebinding's
volume_binding.go and binder.go; pv_controller.go).

The verdict cases give the objects a cluster would hold and the answers to the reads the diagnosis
asks for (`objects.settle` plays the reader, so each case also checks which reads it costs).
"""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.jobs.why.facts import EVENTS
from ktrain.jobs.why.volumes import CLAIM_NOT_FOUND, CLAIM_PENDING, CLAIM_UNUSABLE, CLAIMS, VOLUME_NODE_CONFLICT

from .objects import (
    DELETING,
    FORBIDDEN,
    LOST,
    MOUNTS_DATA,
    UNBOUND,
    at,
    check_verdict,
    claim,
    facts,
    jobset,
    pod,
    refused,
)

CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "claim-lost",
        lambda: facts(jobset(), [pod(0, spec=MOUNTS_DATA, conditions=refused(LOST))]),
        {CLAIMS: [claim("data", "Lost", volume="pv-9")]},
        CLAIM_UNUSABLE,
        "PersistentVolumeClaim data that pod demo-node-0-0-x (node rank 0) mounts lost its volume pv-9 (phase Lost)",
        [CLAIMS],
    ),
    (
        "claim-being-deleted",
        lambda: facts(jobset(), [pod(0, spec=MOUNTS_DATA, conditions=refused(DELETING))]),
        {CLAIMS: [claim("data", "Bound", deleting=True)]},
        CLAIM_UNUSABLE,
        "PersistentVolumeClaim data that pod demo-node-0-0-x (node rank 0) mounts is being deleted",
        [CLAIMS],
    ),
    (
        "ephemeral-claim-not-made-yet",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec={"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]},
                    conditions=refused(
                        "0/2 nodes are available: waiting for ephemeral volume controller to create the "
                        'persistentvolumeclaim "demo-node-0-0-x-scratch".'
                    ),
                )
            ],
        ),
        {CLAIMS: []},
        CLAIM_PENDING,
        "pod demo-node-0-0-x (node rank 0) waits for the ephemeral volume controller to create claim "
        "demo-node-0-0-x-scratch (volume scratch)",
        [CLAIMS],
    ),
    (
        "provisioning-failed-quotes-the-provisioner",
        lambda: facts(jobset(), [pod(0, spec=MOUNTS_DATA, conditions=refused(UNBOUND))]),
        {
            CLAIMS: [claim("data", "Pending", cls="fsx")],
            EVENTS: [
                {
                    "involvedObject": {"kind": "PersistentVolumeClaim", "name": "data"},
                    "reason": "ProvisioningFailed",
                    "message": 'failed to provision volume with StorageClass "fsx": rpc error: code = '
                    "ResourceExhausted desc = quota exceeded",
                    "lastTimestamp": at(1),
                }
            ],
        },
        CLAIM_PENDING,
        "PersistentVolumeClaim data (volume data of pod demo-node-0-0-x (node rank 0)) is not bound: "
        'ProvisioningFailed: failed to provision volume with StorageClass "fsx": rpc error',
        [CLAIMS, EVENTS],
    ),
    (
        "bound-volume-in-another-zone",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec=MOUNTS_DATA,
                    conditions=refused(
                        "0/3 nodes are available: 3 node(s) had volume node affinity conflict. preemption: 0/3 "
                        "nodes are available: 3 Preemption is not helpful for scheduling."
                    ),
                )
            ],
        ),
        {CLAIMS: [claim("data", "Bound", volume="pv-1", cls="gp3")]},
        VOLUME_NODE_CONFLICT,
        "the volumes of pod demo-node-0-0-x (node rank 0) are pinned (PersistentVolume node affinity, e.g. a zone)",
        [CLAIMS],
    ),
    (
        "missing-claim-with-claims-forbidden",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec=MOUNTS_DATA,
                    conditions=refused('0/2 nodes are available: persistentvolumeclaim "data" not found.'),
                )
            ],
        ),
        {CLAIMS: FORBIDDEN},
        CLAIM_NOT_FOUND,
        "pod demo-node-0-0-x (node rank 0) mounts PersistentVolumeClaim data, which does not exist",
        [CLAIMS],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    check_verdict(make(), answers, code, message, reads)
