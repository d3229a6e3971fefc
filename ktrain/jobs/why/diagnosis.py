"""Why a training job is not running: one verdict, its evidence and the next step (issue #29).

Pure, like `ktrain.jobs.state`: plain dicts as the API server serves them in, a `Verdict` out; no
client, clock or printing. What the diagnosis needs beyond the job and its pods it asks for:
`diagnose` returns a verdict whose `needs` names one more read (`ktrain.jobs.why.facts.Read`) when
it cannot decide without it, and the reader (`ktrain.service.job_why.diagnose_job`, performing
each read with `ktrain.service.job_why.perform`) performs it and asks again. So a job is read only
as deep as its state requires (a running job: its rank 0 log; a pod the scheduler refused: the
nodes; a quota refusal: the namespace's ResourceQuotas), and a read the server refuses (RBAC) is
recorded in `Facts.unread` and decided without.

The first reason that holds wins, in this order (each area a module of `ktrain.jobs.why`, its reads
named beside its verdicts):

1. the job ended (Complete / Failed: `pods`), by its failure policy (a fail-fast exit, the restart
   budget spent: `restarts`);
2. suspended: by Kueue (its Workload's QuotaReserved/Admitted condition, the ClusterQueue), by a
   queue label on a cluster without Kueue, or by hand (`queues`);
3. missing controllers: a TrainJob without a JobSet (Trainer), a JobSet without Jobs (JobSet)
   (`controllers`);
4. pods the scheduler refused: for their volumes (a claim missing, unbound, lost, pinned elsewhere;
   read from the namespace's PersistentVolumeClaims and their events: `volumes`), else decoded
   against the pod's ask and the nodes (`scheduling`, `nodes`), then its pod (anti-)affinity,
   topology spread (JobSet's exclusive placement) and host ports (`placement`); pods no scheduler
   looks at (a `schedulerName` that is not running); a gang (PodGroup) the nodes cannot hold (`gangs`);
5. pods that fail: image pulls, crash loops (the last log lines), OOM kills (the limit hit), a
   ReadWriteOnce volume attached to another node (Multi-Attach) (`pods`);
6. pods that are never created (ResourceQuota, admission: `controllers`, `queues`);
7. restarting in a loop (the JobSet's restarts, the same Job failing each time: `restarts`);
8. running, or running but stuck at the rendezvous (rank 0's last log lines: `rendezvous`).

The texts decoded here are the emitters' own; each parser names the file that writes them.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs import state as js
from ktrain.jobs.why.controllers import jobs_verdict, no_jobset
from ktrain.jobs.why.facts import (
    READ_KINDS,
    SUCCEEDED,
    UNKNOWN,
    Facts,
    Missing,
    Verdict,
    meta,
    pod_where,
    sorted_pods,
    status_of,
)
from ktrain.jobs.why.gangs import unscheduled
from ktrain.jobs.why.pods import (
    STARTING,
    container_trouble,
    failed_of,
    initializer_running,
    stuck_starting,
    waiting_reason,
)
from ktrain.jobs.why.queues import suspended_of
from ktrain.jobs.why.rendezvous import running_of
from ktrain.jobs.why.restarts import ended_of, loop_of
from ktrain.jobs.why.scheduling import unschedulable_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    import datetime as dt


# Every read a diagnosis may ask for (each area names its own).
READS = tuple(READ_KINDS)


def diagnose(facts: Facts, now: dt.datetime) -> Verdict:
    """The verdict on a job, or (`needs` set) the next read it takes to reach one."""
    try:
        verdict = _diagnose(facts, now)
    except Missing as missing:
        return Verdict(code="", message="", needs=missing.read)
    unread = [*facts.notes, *facts.unread.values()]
    return Verdict(verdict.code, verdict.message, verdict.evidence, verdict.next_step, unread)


# --- the diagnosis ------------------------------------------------------------------------------------


def _diagnose(f: Facts, now: dt.datetime) -> Verdict:
    pods = f.pods or []
    state, reason, message = js.derive_state(f.trainjob, f.jobset, pods)
    main = f.trainjob or f.jobset
    kind = c.TRAINJOB_KIND if f.trainjob else c.JOBSET_KIND
    if state == js.COMPLETE:
        return Verdict(SUCCEEDED, f"job {f.name} completed" + (f" ({reason})" if reason else ""))
    if state == js.FAILED:
        return ended_of(f, reason) or failed_of(f, reason, message)
    if state == js.SUSPENDED:
        return suspended_of(f, main, kind, now)
    if f.trainjob is not None and f.jobset is None:
        return no_jobset(f, now)
    if f.pods is None:
        return Verdict(
            UNKNOWN,
            f"job {f.name} is {state}; its pods could not be read, so why it waits is not known",
            next_step=f"`ktrain job get {f.name}` shows its conditions; ask for read access to pods",
        )
    if state == js.RUNNING:
        return loop_of(f, running=True) or running_of(f, now)
    return _created(f, now)


# --- pods that wait or fail ---


def _created(f: Facts, now: dt.datetime) -> Verdict:
    pods = sorted_pods(f.pods or [])
    live = [p for p in pods if not meta(p).get("deletionTimestamp")]
    for pod in live:
        verdict = unschedulable_of(f, pod, live, now)
        if verdict is not None:
            return verdict
    for pod in live:
        verdict = unscheduled(f, pod, now)
        if verdict is not None:
            return verdict
    looping = loop_of(f, running=False)  # a pod failed again, or pods recreated by a restart
    if looping is not None:
        return looping
    for pod in live:
        verdict = container_trouble(f, pod, now)
        if verdict is not None:
            return verdict
    expected = sum(js.pods_per_rjob(r) for r in js.replicated_jobs(f.jobset or {}))
    if len(live) < expected:
        verdict = jobs_verdict(f, now)
        if verdict is not None:
            return verdict
    ready, want = js.trainer_pod_counts(f.trainjob, f.jobset, live)
    waiting = [p for p in live if status_of(p).get("phase") != "Running" and status_of(p).get("phase") != "Succeeded"]
    evidence = [f"{pod_where(p)} is {status_of(p).get('phase') or 'Pending'}" + waiting_reason(p) for p in waiting[:5]]
    if not live:
        return Verdict(
            STARTING,
            f"job {f.name} has no pods yet",
            evidence,
            f"`ktrain job wait {f.name} --for running` waits for them",
        )
    first = waiting[0] if waiting else None
    stuck = stuck_starting(f, waiting, now)
    if stuck is not None:
        return stuck
    init = initializer_running(f, live)
    if init is not None:
        return Verdict(
            STARTING,
            f"job {f.name} is initializing: {pod_where(init)} is running first",
            evidence,
            f"`ktrain job logs {f.name} --step {js.pod_step(init)}` shows its progress",
        )
    return Verdict(
        STARTING,
        f"job {f.name} is starting: {ready} of {want} trainer pods are running"
        + (f"; {pod_where(first)} is {status_of(first).get('phase')}{waiting_reason(first)}" if first else ""),
        evidence,
        f"`ktrain job wait {f.name} --for running` waits for it",
    )
