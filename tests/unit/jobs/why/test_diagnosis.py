"""`ktrain.jobs.why.diagnosis.diagnose`: the order in which the areas of `ktrain.jobs.why` are asked
(an ended job first, ...), and what every verdict carries (the reads refused, the notes).

Each area's verdicts are tested in its own file (tests/unit/jobs/why/test_<area>.py); the objects
and the reader (`settle`) are in tests/unit/jobs/why/objects.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from apiserver.scheduling import RECORDED

from ktrain.jobs.why.diagnosis import diagnose
from ktrain.jobs.why.facts import RUNNING, SUCCEEDED, UNKNOWN
from ktrain.jobs.why.nodes import NODES
from ktrain.jobs.why.scheduling import INSUFFICIENT

from .objects import FORBIDDEN, GPU16, NOW, _cond, facts, jobset, pod, refused, settle


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
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    verdict, made = settle(make(), answers)
    assert verdict.code == code, verdict
    assert verdict.message.startswith(message), verdict.message
    assert made == reads
    assert verdict.ok is (code in (RUNNING, SUCCEEDED))
