"""`ktrain job prune`: finished jobs and their companions, listed first, then deleted, exactly
those listed (`ktrain.jobs.prune` chooses them)."""

from __future__ import annotations

from ktrain.errors import ApiError
from ktrain.jobs.state import COMPLETE, FAILED
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from ktrain.cluster.kube import KubeCluster
    from ktrain.jobs.prune import Candidate


STATES = {"complete": COMPLETE, "failed": FAILED}  # --state


@struct
class PruneOutcome:
    deleted: list[Any] = field(default_factory=list)  # ktrain.service.job_delete.Written, per object
    skipped: list[str] = field(default_factory=list)  # why a listed job was left alone


def list_candidates(
    cluster: KubeCluster,
    *,
    now: datetime,
    all_namespaces: bool = False,
    selector: str | None = None,
    states: tuple[str, ...] | None = None,
    older_than: float | None = None,
    warnings: list[str] | None = None,
) -> list[Candidate]:
    from ktrain.jobs.prune import select
    from ktrain.service.job_list import list_jobs

    listed = list_jobs(cluster, all_namespaces=all_namespaces, selector=selector, warnings=warnings)
    jobs = [(job.summary, job.obj) for job in listed]
    if states is None:
        return select(jobs, now=now, older_than=older_than)
    return select(jobs, now=now, states=states, older_than=older_than)


def prune(cluster: KubeCluster, candidates: list[Candidate], *, dry_run: bool = False) -> PruneOutcome:
    """Delete each listed job, only if it is still the object listed (its uid, a precondition:
    a job deleted and created again under the same name since is left alone), then its companions."""
    from ktrain.cluster import client as k
    from ktrain.service.job_delete import Written, delete_job

    outcome = PruneOutcome()
    for job in candidates:
        resource = k.TRAINJOB if job.kind == "TrainJob" else k.JOBSET
        try:
            gone = k.delete(cluster, resource, job.name, job.namespace, dry_run=dry_run, uid=job.uid)
        except ApiError as exc:
            if exc.status != 409:
                raise
            outcome.skipped.append(f"{job.namespace}/{job.name}: replaced since it was listed, not deleted")
            continue
        if not gone:
            outcome.skipped.append(f"{job.namespace}/{job.name}: already gone")
            continue
        outcome.deleted.append(Written(resource, job.name, job.namespace, {}, created=False))
        outcome.deleted += delete_job(cluster, job.name, job.namespace, dry_run=dry_run)
    return outcome
