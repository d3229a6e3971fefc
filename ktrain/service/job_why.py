"""`job why` (and `job get`'s `Why:`, `job wait`'s stall notices, `ktrain.Client().why`): the verdict
on a job, reading one more thing at a time until `ktrain.jobs.why.diagnosis.diagnose` decides.

The verdict is pure (`ktrain.jobs.why`); its reads are `ktrain.cluster.why_reads`. It asks for one
read at a time, only those its case needs, so a job is read as deep as its state requires. Every
read but the job itself may fail (RBAC above all): the failure is recorded and the diagnosis goes
on without it."""

from __future__ import annotations

from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.cluster.names import check_name
from ktrain.cluster.reads import JOBSET, TRAINJOB, find_job, get_custom, job_pods
from ktrain.cluster.why_reads import perform
from ktrain.errors import ApiError, ClusterError, KtrainError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

    from ktrain.jobs.why.facts import Facts, Verdict

Obj = dict[str, "Any"]

# At most this many reads beyond the job and its pods (there are eleven kinds; a log read twice at most).
MAX_READS = 12


@server_shaped
def diagnose_job(cluster: KubeCluster, facts: Facts, now: Any = None) -> Verdict:
    """The verdict on the job `facts` hold, reading what it needs."""
    import datetime as dt

    from ktrain.jobs.why.diagnosis import diagnose
    from ktrain.jobs.why.facts import UNKNOWN, Verdict

    now = now or dt.datetime.now(dt.timezone.utc)
    for _ in range(MAX_READS + 1):
        verdict = diagnose(facts, now)
        if verdict.needs is None:
            return verdict
        perform(cluster, facts, verdict.needs)
    return Verdict(UNKNOWN, f"job {facts.name}: no verdict after {MAX_READS} reads", unread=list(facts.unread.values()))


def why_job(cluster: KubeCluster, name: str) -> tuple[Facts, Verdict]:
    """`job why NAME`: the job read as the diagnosis starts from, and the verdict on it."""
    facts = job_facts(cluster, name)
    return facts, diagnose_job(cluster, facts)


def _optional(cluster: KubeCluster, resource: k.Resource, namespace: str, name: str, notes: list[str]) -> Obj | None:
    """GET an object the job may lack; None when absent, or refused (noted)."""
    try:
        return get_custom(cluster, resource, namespace, name)
    except ApiError as exc:
        if exc.status != 403:
            raise
        notes.append(_refusal(exc))
        return None


def _refusal(exc: KtrainError) -> str:
    """What `unread` says about a refused read: the server's own words (they name the resource)."""
    return exc.message


@server_shaped
def job_facts(
    cluster: KubeCluster,
    name: str,
    namespace: str | None = None,
    *,
    known: tuple[Obj | None, Obj | None, list[Obj]] | None = None,
    events: list[Obj] | None = None,
) -> Any:
    """The job as `diagnose` starts from: its TrainJob and/or JobSet and its pods (`known` when the
    caller has read them). Either object may be unreadable (403) as long as the other one is read;
    pods we may not list are diagnosed without."""
    from ktrain.jobs.why.facts import EVENTS, Facts, Read

    ns = namespace or cluster.namespace
    notes: list[str] = []
    if known is not None:
        trainjob, jobset, pods = known
        facts = Facts(name, ns, trainjob, jobset, list(pods), notes=notes)
    else:
        check_name(name, "job")
        trainjob = _optional(cluster, TRAINJOB, ns, name, notes)
        jobset = _optional(cluster, JOBSET, ns, name, notes)
        if trainjob is None and jobset is None:
            if notes:
                raise ClusterError(
                    notes[0], hint="ask a cluster admin for read access (RBAC), or look in another namespace (-n)"
                )
            find_job(cluster, name, ns)  # raises the usual NotFoundError
        pods_read: list[Obj] | None
        try:
            pods_read = job_pods(cluster, name, ns)
        except ApiError as exc:
            if exc.status != 403:
                raise
            notes.append(_refusal(exc))
            pods_read = None
        facts = Facts(name, ns, trainjob, jobset, pods_read, notes=notes)
    if events is not None:
        facts.record(Read(EVENTS), events)
    return facts
