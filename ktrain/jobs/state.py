"""What state a training job is in, derived from the objects the API server returns.

Pure: takes plain dicts (JobSet, TrainJob, Pod, Event as the API serves them) and the current
time, returns values. No client, no printing. ENGINE.md §10 is the spec:

- `Complete` / `Failed` when that condition is True (the TrainJob's `Complete`/`Failed`, or the
  JobSet's `Completed`/`Failed`); checked in that order, as the Python SDK does;
- `Suspended` when the job is suspended (spec.suspend, or a `Suspended=True` condition);
- `Running` when every trainer pod (rJobs `node` and `launcher`) is Running or Succeeded;
- `Created` otherwise.
"""

from __future__ import annotations

import datetime as dt

from ktrain import constants as c
from ktrain.jobs.restarts import RestartCount, restart_count
from ktrain.util.structs import field, struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

Obj = dict[str, "Any"]

CREATED = "Created"
RUNNING = "Running"
SUSPENDED = "Suspended"
COMPLETE = "Complete"
FAILED = "Failed"
STATES = (CREATED, RUNNING, SUSPENDED, COMPLETE, FAILED)
TERMINAL_STATES = (COMPLETE, FAILED)

# The replicated jobs whose pods are "the trainer" for the Running rule (ENGINE.md §10).
TRAINER_RJOBS = (c.NODE, c.LAUNCHER)
# Where a runtime name is recorded on a JobSet that ktrain submitted (label first, then annotation).
RUNTIME_KEY = c.RUNTIME_ANNOTATION
TRAINJOB_PLURAL_GROUP = f"trainjob.{c.TRAINER_GROUP}"
JOBSET_PLURAL_GROUP = f"jobset.{c.JOBSET_GROUP}"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _conditions(obj: Obj) -> list[Obj]:
    return list((obj.get("status") or {}).get("conditions") or [])


def condition_true(obj: Obj, kind: str) -> Obj | None:
    """The condition of type `kind` when its status is "True"."""
    for cond in _conditions(obj):
        if cond.get("type") == kind and str(cond.get("status")) == "True":
            return cond
    return None


# --- shape --------------------------------------------------------------------------------------


def replicated_jobs(jobset: Obj) -> list[Obj]:
    return list((jobset.get("spec") or {}).get("replicatedJobs") or [])


def ancestor_step(rjob: Obj) -> str | None:
    """The `trainjob-ancestor-step` label of a replicated job's Job template."""
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    value = labels.get(c.LABEL_ANCESTOR)
    return str(value) if value is not None else None


def has_trainer_shape(jobset: Obj) -> bool:
    """A JobSet made from a Trainer runtime: some replicated job carries the ancestor label."""
    return any(ancestor_step(r) is not None for r in replicated_jobs(jobset))


def owner_trainjob(obj: Obj) -> str | None:
    """The name of the TrainJob that owns this object, if any."""
    for ref in _meta(obj).get("ownerReferences") or []:
        if ref.get("kind") == c.TRAINJOB_KIND and str(ref.get("apiVersion", "")).startswith(c.TRAINER_GROUP + "/"):
            return str(ref.get("name"))
    return None


def pods_per_rjob(rjob: Obj) -> int:
    """Pods a replicated job runs at once: replicas x parallelism (both default 1; a value that
    is not a count, which no API server stores but a broken one may send, counts as the default)."""
    template = rjob.get("template")
    job_spec = template.get("spec") if isinstance(template, dict) else None
    parallelism = job_spec.get("parallelism") if isinstance(job_spec, dict) else None
    return _count(rjob.get("replicas")) * _count(parallelism)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1


def expected_trainer_pods(jobset: Obj) -> int:
    return sum(pods_per_rjob(r) for r in replicated_jobs(jobset) if r.get("name") in TRAINER_RJOBS)


def trainer_step(jobset: Obj | None) -> str:
    """The replicated job where the training program's output appears.

    The rJob labelled ancestor-step=trainer: `node` for torch & co, `launcher` for MPI (mpirun
    runs there and gathers every rank's output). Without a JobSet: `node`.
    """
    if jobset:
        for rjob in replicated_jobs(jobset):
            if ancestor_step(rjob) == c.ANCESTOR_TRAINER:
                return str(rjob.get("name"))
        names = [r.get("name") for r in replicated_jobs(jobset)]
        if c.LAUNCHER in names:
            return c.LAUNCHER
    return c.NODE


def jobset_nodes(jobset: Obj) -> int | None:
    """numNodes as rendered: the `node` rJob's pods, plus the launcher when it runs the node
    container (MPI runLauncherAsNode)."""
    total = 0
    found = False
    for rjob in replicated_jobs(jobset):
        name = rjob.get("name")
        if name == c.NODE:
            total += pods_per_rjob(rjob)
            found = True
        elif name == c.LAUNCHER:
            pod_spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            if any(ct.get("name") == c.NODE for ct in pod_spec.get("containers") or []):
                total += pods_per_rjob(rjob)
                found = True
    return total if found else None


def runtime_of(trainjob: Obj | None, jobset: Obj | None) -> str | None:
    """The runtime name when known: the TrainJob's runtimeRef, else a label/annotation on the JobSet."""
    if trainjob:
        ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
        if ref.get("name"):
            return str(ref["name"])
    if jobset:
        meta = _meta(jobset)
        for source in (meta.get("labels") or {}, meta.get("annotations") or {}):
            if source.get(RUNTIME_KEY):
                return str(source[RUNTIME_KEY])
    return None


# --- pods -----------------------------------------------------------------------------------------


@struct(frozen=True)
class PodSummary:
    name: str
    step: str  # the replicated job (node, launcher, dataset-initializer, ...)
    rank: int | None  # the Job completion index
    phase: str
    node: str | None
    restarts: int
    reason: str | None = None  # why it is not running / why it stopped
    message: str | None = None
    created: str | None = None


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def pod_step(pod: Obj) -> str:
    return str((_meta(pod).get("labels") or {}).get(c.JOBSET_RJOB_NAME_LABEL) or "-")


def pod_rank(pod: Obj) -> int | None:
    meta = _meta(pod)
    rank = _int_or_none((meta.get("annotations") or {}).get(c.JOB_COMPLETION_INDEX_ANNOTATION))
    if rank is None:  # some versions also set it as a label
        rank = _int_or_none((meta.get("labels") or {}).get(c.JOB_COMPLETION_INDEX_ANNOTATION))
    return rank


def _all_container_statuses(pod: Obj) -> list[Obj]:
    status = pod.get("status") or {}
    return list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])


def pod_reason(pod: Obj) -> tuple[str | None, str | None]:
    """(reason, message) explaining a pod that is not simply running: unschedulable, a waiting
    container (ImagePullBackOff, CrashLoopBackOff, ...), a failed container (Error, OOMKilled)."""
    status = pod.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and str(cond.get("status")) == "False":
            return cond.get("reason") or "Unschedulable", cond.get("message")
    statuses = _all_container_statuses(pod)
    for cs in statuses:
        waiting = (cs.get("state") or {}).get("waiting")
        # ContainerCreating / PodInitializing are normal progress, reported only when nothing else is.
        if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            return waiting.get("reason"), waiting.get("message")
    if status.get("phase") == "Failed" or status.get("reason"):
        if status.get("reason"):
            return status.get("reason"), status.get("message")
        for cs in statuses:
            term = (cs.get("state") or {}).get("terminated")
            if term and term.get("exitCode", 0) != 0:
                code = term.get("exitCode")
                return term.get("reason") or "Error", f"container {cs.get('name')} exited with code {code}"
    for cs in statuses:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and status.get("phase") == "Pending":
            return waiting.get("reason"), waiting.get("message")
    return None, None


def summarize_pod(pod: Obj) -> PodSummary:
    status = pod.get("status") or {}
    reason, message = pod_reason(pod)
    return PodSummary(
        name=str(_meta(pod).get("name", "")),
        step=pod_step(pod),
        rank=pod_rank(pod),
        phase=str(status.get("phase") or "Unknown"),
        node=(pod.get("spec") or {}).get("nodeName"),
        restarts=sum(int(cs.get("restartCount") or 0) for cs in status.get("containerStatuses") or []),
        reason=reason,
        message=message,
        created=_meta(pod).get("creationTimestamp"),
    )


def _step_order(step: str) -> int:
    order = (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER, c.LAUNCHER, c.NODE)
    return order.index(step) if step in order else len(order)


def pod_order(p: PodSummary) -> tuple[int, str, int, str, str]:
    """Initializers, launcher, nodes; by rank; older pods of a rank (before a restart) first."""
    return _step_order(p.step), p.step, p.rank if p.rank is not None else -1, p.created or "", p.name


def sort_pods(pods: list[PodSummary]) -> list[PodSummary]:
    return sorted(pods, key=pod_order)


# --- the job --------------------------------------------------------------------------------------


@struct(frozen=True)
class StepCounts:
    """One replicated job: its pods as specified, and the JobSet's counts of child Jobs."""

    name: str
    ancestor: str | None
    pods: int
    ready: int = 0
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    suspended: int = 0


@struct(frozen=True)
class JobSummary:
    kind: str  # "TrainJob" or "JobSet": the object that stands for the job
    name: str
    namespace: str
    state: str
    runtime: str | None
    nodes: int | None
    created: str | None
    reason: str | None = None
    message: str | None = None
    trainer_pods_ready: int = 0
    trainer_pods_expected: int = 0
    conditions: list[Obj] = field(default_factory=list)
    steps: list[StepCounts] = field(default_factory=list)
    pods: list[PodSummary] = field(default_factory=list)
    # Why a job that is not running is not getting there (see `stall_reason`), or None.
    stalled: str | None = None
    restarts: RestartCount | None = None  # the JobSet's, against its budget (ktrain.jobs.restarts)

    @property
    def resource_name(self) -> str:
        """kubectl's `-o name` form."""
        group = TRAINJOB_PLURAL_GROUP if self.kind == c.TRAINJOB_KIND else JOBSET_PLURAL_GROUP
        return f"{group}/{self.name}"

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


def _suspended(obj: Obj) -> bool:
    return bool((obj.get("spec") or {}).get("suspend")) or condition_true(obj, "Suspended") is not None


def derive_state(trainjob: Obj | None, jobset: Obj | None, pods: list[Obj]) -> tuple[str, str | None, str | None]:
    """(state, reason, message) of a job from its TrainJob and/or JobSet and its pods."""
    sources = [o for o in (trainjob, jobset) if o]
    for source in sources:
        for kind, state in (("Complete", COMPLETE), ("Completed", COMPLETE), ("Failed", FAILED)):
            cond = condition_true(source, kind)
            if cond is not None:
                return state, cond.get("reason"), cond.get("message")
        if trainjob is not None:
            break  # a TrainJob's own conditions are authoritative; its JobSet's copy them (§10)
    if any(_suspended(o) for o in sources):
        return SUSPENDED, "Suspended", None
    ready, expected = trainer_pod_counts(trainjob, jobset, pods)
    if expected and ready >= expected:
        return RUNNING, None, None
    return CREATED, None, None


def trainer_pod_counts(trainjob: Obj | None, jobset: Obj | None, pods: list[Obj]) -> tuple[int, int]:
    """(trainer pods Running or Succeeded, trainer pods expected)."""
    ready = sum(
        1
        for p in pods
        if pod_step(p) in TRAINER_RJOBS and (p.get("status") or {}).get("phase") in ("Running", "Succeeded")
    )
    if jobset:
        expected = expected_trainer_pods(jobset)
    else:
        expected = _int_or_none(((trainjob or {}).get("spec") or {}).get("trainer", {}).get("numNodes")) or 0
    return ready, expected


def step_counts(jobset: Obj) -> list[StepCounts]:
    reported = {s.get("name"): s for s in (jobset.get("status") or {}).get("replicatedJobsStatus") or []}
    out = []
    for rjob in replicated_jobs(jobset):
        st = reported.get(rjob.get("name")) or {}
        out.append(
            StepCounts(
                name=str(rjob.get("name")),
                ancestor=ancestor_step(rjob),
                pods=pods_per_rjob(rjob),
                ready=int(st.get("ready") or 0),
                active=int(st.get("active") or 0),
                succeeded=int(st.get("succeeded") or 0),
                failed=int(st.get("failed") or 0),
                suspended=int(st.get("suspended") or 0),
            )
        )
    return out


def summarize(trainjob: Obj | None, jobset: Obj | None, pods: list[Obj]) -> JobSummary:
    """The job as `job list/get` show it. The TrainJob stands for the job when there is one."""
    main = trainjob or jobset
    if main is None:
        raise ValueError("summarize needs a TrainJob or a JobSet")
    meta = _meta(main)
    state, reason, message = derive_state(trainjob, jobset, pods)
    ready, expected = trainer_pod_counts(trainjob, jobset, pods)
    nodes = None
    if trainjob:
        nodes = _int_or_none(((trainjob.get("spec") or {}).get("trainer") or {}).get("numNodes"))
    if nodes is None and jobset:
        nodes = jobset_nodes(jobset)
    if nodes is None and trainjob:
        nodes = _int_or_none((meta.get("annotations") or {}).get(c.NODES_ANNOTATION))
    return JobSummary(
        kind=c.TRAINJOB_KIND if trainjob else c.JOBSET_KIND,
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace") or "default"),
        state=state,
        runtime=runtime_of(trainjob, jobset),
        nodes=nodes,
        created=meta.get("creationTimestamp"),
        reason=reason,
        message=message,
        trainer_pods_ready=ready,
        trainer_pods_expected=expected,
        conditions=_conditions(main),
        steps=step_counts(jobset) if jobset else [],
        pods=sort_pods([summarize_pod(p) for p in pods]),
        stalled=stall_reason(state, trainjob, jobset, pods),
        restarts=restart_count(jobset),
    )


NO_CONTROLLER = (
    "no JobSet was made for TrainJob {name}: is the Trainer controller running? "
    "(it turns a TrainJob into a JobSet; `ktrain job create --target jobset` needs no controller)"
)
SCHEDULER_GRACE = 10.0  # seconds a pod may wait before its scheduler is suspected
_STUCK_WAITING = (
    "ImagePullBackOff",
    "ErrImagePull",
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "InvalidImageName",
)


def stall_reason(
    state: str, trainjob: Obj | None, jobset: Obj | None, pods: list[Obj], now: dt.datetime | None = None
) -> str | None:
    """One sentence on why a job that is not running is not getting there: suspended, no JobSet
    made for its TrainJob (no Trainer controller), a pod that cannot be scheduled, a pod no
    scheduler picks up (a `schedulerName` nobody serves), a container that cannot start."""
    main = trainjob or jobset
    name = str(_meta(main or {}).get("name", ""))
    if state == SUSPENDED:
        return f"the job is suspended: `ktrain job resume {name}` resumes it"
    if state != CREATED:
        return None
    if trainjob is not None and jobset is None:
        return NO_CONTROLLER.format(name=name)
    now = now or dt.datetime.now(dt.timezone.utc)
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase") != "Pending":
            continue
        pod_name = str(_meta(pod).get("name", ""))
        conditions = status.get("conditions") or []
        for cond in conditions:
            if cond.get("type") == "PodScheduled" and str(cond.get("status")) == "False":
                return f"pod {pod_name} cannot be scheduled: {cond.get('message') or cond.get('reason')}"
        scheduler = (pod.get("spec") or {}).get("schedulerName")
        scheduled = any(cond.get("type") == "PodScheduled" for cond in conditions)
        created = parse_time(_meta(pod).get("creationTimestamp"))
        waited = (now - created).total_seconds() if created else 0.0
        if not scheduled and not (pod.get("spec") or {}).get("nodeName") and waited >= SCHEDULER_GRACE:
            who = f"scheduler {scheduler!r}" if scheduler and scheduler != "default-scheduler" else "the scheduler"
            return (
                f"pod {pod_name} has waited {short_duration(waited)} for {who}, "
                "which has not looked at it: is it running?"
            )
        reason, message = pod_reason(pod)
        if reason in _STUCK_WAITING:
            return f"pod {pod_name}: {reason}" + (f": {message}" if message else "")
    return None


def pair_jobs(trainjobs: list[Obj], jobsets: list[Obj]) -> list[tuple[Obj | None, Obj | None]]:
    """(TrainJob, JobSet) pairs: a JobSet owned by a TrainJob is shown once, as that TrainJob;
    JobSets without Trainer's shape are left out. Sorted by namespace and name."""

    def key(obj: Obj) -> tuple[str, str]:
        return str(_meta(obj).get("namespace") or ""), str(_meta(obj).get("name") or "")

    by_key = {key(js): js for js in jobsets}
    pairs: list[tuple[Obj | None, Obj | None]] = []
    owned: set[tuple[str, str]] = set()
    for tj in trainjobs:
        js = by_key.get(key(tj))
        if js is not None and owner_trainjob(js) == _meta(tj).get("name"):
            owned.add(key(js))
        else:
            js = None
        pairs.append((tj, js))
    for js in jobsets:
        if key(js) in owned or not has_trainer_shape(js):
            continue
        pairs.append((None, js))
    pairs.sort(key=lambda pair: key(pair[0] or pair[1] or {}))
    return pairs


# --- events ---------------------------------------------------------------------------------------

EVENT_KINDS = ("TrainJob", "JobSet", "Job", "Pod", "PodGroup")


def related_warnings(events: list[Obj], job_name: str, limit: int = 10) -> list[Obj]:
    """The last Warning events about the job, its Jobs, pods and PodGroup (oldest first).

    Children are named after the job (`<job>-<rjob>-<i>`, `<job>-<rjob>-<i>-<rank>-<hash>`)."""

    def related(ev: Obj) -> bool:
        inv = ev.get("involvedObject") or {}
        name = str(inv.get("name") or "")
        return inv.get("kind") in EVENT_KINDS and (name == job_name or name.startswith(job_name + "-"))

    def when(ev: Obj) -> str:
        return str(
            ev.get("lastTimestamp")
            or ev.get("eventTime")
            or ev.get("firstTimestamp")
            or _meta(ev).get("creationTimestamp")
            or ""
        )

    warnings = [ev for ev in events if ev.get("type") == "Warning" and related(ev)]
    warnings.sort(key=when)
    return warnings[-limit:]


# --- time -----------------------------------------------------------------------------------------


def parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def short_duration(seconds: float) -> str:
    """kubectl's ShortHumanDuration: 5s, 3m, 2h, 4d, 2y."""
    if seconds < -1:
        return "<invalid>"
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    if s < 86400 * 365:
        return f"{s // 86400}d"
    return f"{s // (86400 * 365)}y"


def age(timestamp: str | None, now: dt.datetime) -> str:
    moment = parse_time(timestamp)
    if moment is None:
        return "<unknown>"
    return short_duration((now - moment).total_seconds())


# --- waiting --------------------------------------------------------------------------------------

WAIT_TARGETS = {"complete": COMPLETE, "failed": FAILED, "running": RUNNING}


def wait_outcome(summary: JobSummary, target: str) -> bool | None:
    """True when `summary` satisfies `--for target`, False when it never can (a terminal state
    other than the one awaited), None to keep waiting.

    `running` is also satisfied by `Complete`: the job ran (it may have finished between polls)."""
    wanted = WAIT_TARGETS[target]
    if summary.state == wanted or (wanted == RUNNING and summary.state == COMPLETE):
        return True
    if summary.terminal:
        return False
    return None


QUEUE_LABELS = (c.KUEUE_QUEUE_LABEL, c.KAI_QUEUE_LABEL)
PRIORITY_LABELS = (c.KUEUE_PRIORITY_LABEL, "priorityClassName")  # the second: KAI's


def queue_and_priority(obj: Obj) -> tuple[str | None, str | None]:
    """(queue, priority) of a job's TrainJob or JobSet, as `job list -o wide` shows them: the Kueue
    or KAI queue label, else the Volcano queue annotation; the workload priority label, else the
    first pod template's priorityClassName."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    queue = next((labels[k] for k in QUEUE_LABELS if labels.get(k)), None) or annotations.get(
        c.VOLCANO_QUEUE_ANNOTATION
    )
    priority = next((labels[k] for k in PRIORITY_LABELS if labels.get(k)), None)
    if priority is None:
        for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
            pod = (((rjob or {}).get("template") or {}).get("spec") or {}).get("template") or {}
            name = (pod.get("spec") or {}).get("priorityClassName")
            if name:
                priority = name
                break
    return (str(queue) if queue else None), (str(priority) if priority else None)
