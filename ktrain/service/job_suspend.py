"""`job suspend` / `job resume`: set only spec.suspend of a job's TrainJob (its controller passes it
on), else of its JobSet."""

from __future__ import annotations

from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.errors import ConflictError
from ktrain.service.job_delete import Written
from ktrain.util.jsondata import Obj

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


@server_shaped
def set_suspended(cluster: KubeCluster, name: str, namespace: str, suspend: bool) -> tuple[Written, bool]:
    """`job suspend` / `job resume`: set spec.suspend of the job's TrainJob (its controller passes
    it on to the JobSet), else of its JobSet. Returns (what was patched, whether it changed)."""
    from ktrain.cluster.reads import find_job
    from ktrain.jobs.state import TERMINAL_STATES, summarize

    trainjob, jobset = find_job(cluster, name, namespace)
    state = summarize(trainjob, jobset, []).state
    if state in TERMINAL_STATES:
        verb = "suspend" if suspend else "resume"
        raise ConflictError(f"job {name} is {state}: there is nothing to {verb}", status=409, reason="Conflict")
    resource, obj = (k.TRAINJOB, trainjob) if trainjob is not None else (k.JOBSET, jobset)
    assert obj is not None
    if bool((obj.get("spec") or {}).get("suspend")) == suspend:
        return Written(resource, name, namespace, obj, created=False), False
    stored = resume(cluster, resource, name, namespace, suspend=suspend)
    return Written(resource, name, namespace, stored, created=False), True


def resume(
    cluster: KubeCluster, resource: k.Resource, name: str, namespace: str | None, *, suspend: bool = False
) -> Obj:
    """Set only `spec.suspend` (a merge patch). Re-applying the whole object would re-send fields
    the server defaulted or owns (JobSet's webhook defaults volumeClaimPolicies' retentionPolicy on
    create, and a CEL rule then refuses any other value: issue #19)."""
    return k.merge_patch(cluster, resource, name, namespace, {"spec": {"suspend": suspend}})
