"""`job why` (and `job get`'s `Why:`, `job wait`'s stall notices, `ktrain.Client().why`): the verdict
on a job, reading one more thing at a time until `ktrain.jobs.why.diagnosis.diagnose` decides.

The verdict is pure (`ktrain.jobs.why`); its reads are performed here (`perform`). It asks for one
read at a time, only those its case needs, so a job is read as deep as its state requires. Every
read but the job itself may fail (RBAC above all): the failure is recorded and the diagnosis goes
on without it."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster, server_shaped
from ktrain.cluster.names import check_name
from ktrain.cluster.reads import JOBSET, TRAINJOB, find_job, get_custom, job_pods, list_warning_events, log_tail
from ktrain.errors import ApiError, ClusterError, KtrainError
from ktrain.util.jsondata import Obj

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.jobs.why.facts import Facts, Verdict


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


# --- the reads the areas of ktrain.jobs.why name --------------------------------------------------


def perform(cluster: KubeCluster, facts: Any, read: Any) -> None:
    """Carry out one read of the diagnosis; a refusal or an error is recorded, never raised."""
    try:
        facts.record(read, _read(cluster, facts, read))
    except ApiError as exc:
        facts.refuse(
            read, f"forbidden: {exc.message.partition(' is forbidden: ')[2]}" if exc.status == 403 else exc.message
        )
    except KtrainError as exc:  # the connection broke: say so, decide without it
        facts.refuse(read, exc.message)


def _list_all(cluster: KubeCluster, resources: tuple[k.Resource, ...], namespace: str) -> Any:
    """List the first of `resources` (one kind in several API versions) the cluster serves."""
    from ktrain.jobs.why.facts import NOT_SERVED

    for resource in resources:
        try:
            return k.list_objects(cluster, resource, namespace)
        except ApiNotFoundError:
            continue
    return NOT_SERVED


def _read(cluster: KubeCluster, facts: Any, read: Any) -> Any:
    from ktrain.jobs.why.controllers import JOBS
    from ktrain.jobs.why.facts import EVENTS, LOG, SERVED
    from ktrain.jobs.why.gangs import POD_GROUP
    from ktrain.jobs.why.nodes import NODE_PODS, NODES
    from ktrain.jobs.why.queues import LOCAL_QUEUE, QUOTAS, WORKLOADS
    from ktrain.jobs.why.volumes import CLAIMS

    ns = facts.namespace
    if read.what == EVENTS:
        return list_warning_events(cluster, ns)
    if read.what == JOBS:
        return k.list_objects(cluster, k.BATCH_JOB, ns, label_selector=f"{c.JOBSET_NAME_LABEL}={facts.name}")
    if read.what == NODES:
        return k.list_objects(cluster, k.NODE)
    if read.what == NODE_PODS:
        # What the scheduler counts as taken: pods bound to a node that have not ended (any namespace).
        selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
        return k.list_objects(cluster, k.POD, all_namespaces=True, field_selector=selector)
    if read.what == QUOTAS:
        return k.list_objects(cluster, k.RESOURCE_QUOTA, ns)
    if read.what == CLAIMS:  # one list for every claim the pods mount
        return k.list_objects(cluster, k.PVC, ns)
    if read.what == WORKLOADS:
        return _list_all(cluster, k.KUEUE_WORKLOADS, ns)
    if read.what == LOCAL_QUEUE:
        for resource in k.KUEUE_LOCAL_QUEUES:
            found = get_custom(cluster, resource, ns, read.name)
            if found is not None:
                return found
        return None
    if read.what == POD_GROUP:
        resource = k.COSCHEDULING_PODGROUP if read.api_version == c.COSCHEDULING_API_VERSION else k.VOLCANO_PODGROUP
        return get_custom(cluster, resource, ns, read.name)
    if read.what == SERVED:
        return k.served_kinds(cluster, read.api_version) is not None
    if read.what == LOG:
        return log_tail(cluster, ns, read.name, read.container, read.previous)
    raise ValueError(f"unknown read {read.what!r}")


def how_far(cluster: KubeCluster, facts: Facts) -> Any:
    """A running job's progress (`job why` says how far it is): its trainerStatus, else its rank-0
    log's (ktrain.cluster.progress_read); None for a job that is not running."""
    from ktrain.cluster.progress_read import job_progress
    from ktrain.jobs import state

    summary = state.summarize(facts.trainjob, facts.jobset, facts.pods or [])
    return job_progress(cluster, facts.trainjob, summary) if summary.state == state.RUNNING else None
