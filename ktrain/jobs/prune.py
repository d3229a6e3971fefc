"""`ktrain job prune`: which listed jobs are finished and old enough to delete (pure: the jobs and
the time come in, the choice goes out)."""

from __future__ import annotations

from datetime import datetime, timezone

from ktrain.jobs.state import COMPLETE, FAILED, JobSummary
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.util.jsondata import Obj

STATES = {"complete": COMPLETE, "failed": FAILED}
_TERMINAL_CONDITIONS = ("Complete", "Completed", "Failed")


@struct
class Candidate:
    kind: str  # TrainJob | JobSet: the object that stands for the job
    name: str
    namespace: str
    uid: str | None  # deleted only if it is still this object (a precondition)
    state: str
    finished: str | None  # when its Complete/Failed condition became True (else its creation)
    age: float  # seconds since then


def finished_at(obj: Obj) -> str | None:
    """The lastTransitionTime of the object's True Complete/Completed/Failed condition."""
    for cond in ((obj.get("status") or {}).get("conditions")) or []:
        if isinstance(cond, dict) and cond.get("type") in _TERMINAL_CONDITIONS and cond.get("status") == "True":
            value = cond.get("lastTransitionTime")
            return str(value) if value else None
    return None


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def select(
    jobs: list[tuple[JobSummary, Obj]],
    *,
    now: datetime,
    states: tuple[str, ...] = (COMPLETE, FAILED),
    older_than: float | None = None,
) -> list[Candidate]:
    """The finished jobs in `states` that finished at least `older_than` seconds before `now`,
    oldest first; a job whose time cannot be read is never old enough."""
    out: list[Candidate] = []
    for summary, obj in jobs:
        if summary.state not in states:
            continue
        finished = finished_at(obj) or summary.created
        when = _parse(finished)
        if when is None:
            if older_than:
                continue
            age = 0.0
        else:
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            age = (now - when).total_seconds()
        if older_than is not None and age < older_than:
            continue
        uid = (obj.get("metadata") or {}).get("uid")
        out.append(Candidate(summary.kind, summary.name, summary.namespace, uid, summary.state, finished, age))
    return sorted(out, key=lambda c: (-c.age, c.namespace, c.name))
