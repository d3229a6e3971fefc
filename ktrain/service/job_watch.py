"""`job watch`: one look at a job (its TrainJob and JobSet, one list of its pods, its progress), and
`job why`'s verdict for a job that is not running."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.cluster.reads import find_job
from ktrain.jobs import state
from ktrain.util.jsondata import Obj
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

# The job's pods in one answer up to this many: one list request per look for a 2,000-pod job (the
# transport's answer bound still splits a page of very large pods).
PODS_PER_PAGE = 2000


@struct
class Look:
    summary: state.JobSummary
    trainjob: Obj | None
    jobset: Obj | None
    pods: list[Obj]
    progress: Any = None  # ktrain.progress.status.TrainerStatus


@server_shaped
def look(cluster: KubeCluster, name: str, namespace: str) -> Look:
    """The job now: two GETs and one list (and, when the TrainJob reports no progress, one read of
    its rank-0 log's tail)."""
    from ktrain.cluster.progress_read import job_progress

    trainjob, jobset = find_job(cluster, name, namespace)
    pods, _ = k.list_pages(
        cluster,
        k.POD.path(namespace),
        {"labelSelector": f"{c.JOBSET_NAME_LABEL}={name}"},
        what=f"pods in {namespace}",
        managed_fields=False,
        chunk=PODS_PER_PAGE,
    )
    summary = state.summarize(trainjob, jobset, pods)
    ran = summary.state in (state.RUNNING, state.COMPLETE)
    return Look(summary, trainjob, jobset, pods, job_progress(cluster, trainjob, summary, logs=ran))


def verdict(cluster: KubeCluster, name: str, namespace: str, seen: Look) -> tuple[str, str] | None:
    """`job why`'s (code, message) for the job as `seen` (its reads are the diagnosis's own)."""
    from ktrain.errors import KtrainError
    from ktrain.service.job_why import diagnose_job, job_facts

    try:
        found = diagnose_job(
            cluster, job_facts(cluster, name, namespace, known=(seen.trainjob, seen.jobset, seen.pods))
        )
    except KtrainError:
        return None
    return (str(found.code), str(found.message))
