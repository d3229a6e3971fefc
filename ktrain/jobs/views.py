"""What `job get` and `job why` show as data (`-o yaml|json`, and the Python API's `get` and `why`),
in a fixed key order."""

from __future__ import annotations

from ktrain.jobs import state as status
from ktrain.jobs.restarts import document as restarts_document
from ktrain.util.structs import field, struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

Obj = dict[str, "Any"]


@struct
class JobDetails:
    summary: status.JobSummary
    trainjob: Obj | None
    jobset: Obj | None
    warnings: list[Obj] = field(default_factory=list)
    # Why it is (not) running (ktrain.jobs.why.facts.Verdict), when asked for (`job get`).
    verdict: Any = None
    pods: list[Obj] = field(default_factory=list)  # as read (the summary's are sorted and summarized)
    progress: Any = None  # ktrain.progress.status.TrainerStatus: trainerStatus, else the rank-0 log's
    failure: Any = None  # the last failure (ktrain.jobs.restarts.Failure), when one is recorded


def details_document(details: JobDetails) -> Obj:
    """`job get -o yaml|json` (and `ktrain.Client().get`): the derived view, in a fixed key order."""
    s = details.summary
    return {
        "name": s.name,
        "namespace": s.namespace,
        "kind": s.kind,
        "runtime": s.runtime,
        "nodes": s.nodes,
        "state": s.state,
        "reason": s.reason,
        "message": s.message,
        "waiting": s.stalled,  # why a job that is not running is not getting there (issue #19)
        "trainerPods": {"ready": s.trainer_pods_ready, "expected": s.trainer_pods_expected},
        "restarts": restarts_document(s.restarts, details.failure),  # issue #35; None without a JobSet
        "conditions": s.conditions,
        "replicatedJobs": [
            {
                "name": st.name,
                "step": st.ancestor,
                "pods": st.pods,
                "ready": st.ready,
                "active": st.active,
                "succeeded": st.succeeded,
                "failed": st.failed,
                "suspended": st.suspended,
            }
            for st in s.steps
        ],
        "pods": [
            {
                "name": p.name,
                "step": p.step,
                "rank": p.rank,
                "phase": p.phase,
                "node": p.node,
                "restarts": p.restarts,
                "reason": p.reason,
                "message": p.message,
            }
            for p in s.pods
        ],
        **({"why": _why_document(details.verdict)} if details.verdict is not None else {}),
        "progress": details.progress.to_dict() if details.progress is not None else None,
        "warnings": [
            {
                "object": "{}/{}".format(
                    (e.get("involvedObject") or {}).get("kind"), (e.get("involvedObject") or {}).get("name")
                ),
                "reason": e.get("reason"),
                "message": e.get("message"),
                "count": e.get("count"),
                "lastTimestamp": e.get("lastTimestamp"),
            }
            for e in details.warnings
        ],
    }


def why_document(facts: Any, verdict: Any) -> Obj:
    """`job why -o json|yaml` (and `ktrain.Client().why`): the job, its state, the verdict."""
    from ktrain.jobs.why.facts import document

    state, _, _ = status.derive_state(facts.trainjob, facts.jobset, facts.pods or [])
    return {
        "name": facts.name,
        "namespace": facts.namespace,
        "state": state,
        "running": verdict.ok,
        **document(verdict),
    }


def _why_document(verdict: Any) -> Obj:
    from ktrain.jobs.why.facts import document

    return {"running": verdict.ok, **document(verdict)}
