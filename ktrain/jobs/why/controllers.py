"""`job why` for missing controllers: a TrainJob without a JobSet (the Trainer controller), a JobSet
without Jobs (the JobSet controller), Jobs that make no pods (admission, quota). Reads: the JobSet's
batch/v1 Jobs (`JOBS`).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs.why.facts import (
    CONTROLLER_GRACE,
    EVENTS,
    Facts,
    Read,
    Verdict,
    age_of,
    ago_of,
    event_line,
    event_time,
    events_about,
    meta,
    need,
    read_kind,
    status_of,
)
from ktrain.jobs.why.pods import STARTING
from ktrain.jobs.why.queues import quota_from_usage, quota_verdict

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt


NO_TRAINER_CONTROLLER = "NoTrainerController"
NO_JOBSET_CONTROLLER = "NoJobSetController"


POD_CREATION_FAILED = "PodCreationFailed"


JOBS = read_kind("jobs", "the JobSet's Jobs")  # its batch/v1 Jobs


# --- controllers ---


def no_jobset(f: Facts, now: dt.datetime) -> Verdict:
    age = age_of(f.trainjob, now)
    events = need(f, Read(EVENTS))
    about = events_about(events, c.TRAINJOB_KIND, {f.name})
    evidence = [event_line(ev) for ev in about[-3:]]
    for cond in status_of(f.trainjob).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("message"):
            evidence.append(f"condition {cond.get('type')}={cond.get('status')}: {cond.get('message')}")
    if about:
        last = about[-1]
        return Verdict(
            NO_TRAINER_CONTROLLER,
            f"the Trainer controller has not made a JobSet for TrainJob {f.name}: {last.get('message')}",
            evidence,
            "fix what the event names (often the runtime: `ktrain runtime list` shows those the cluster has)",
        )
    if age < CONTROLLER_GRACE:
        return Verdict(
            STARTING,
            f"waiting for the Trainer controller to make the JobSet of TrainJob {f.name} ({ago_of(age)} so far)",
            evidence,
            f"`ktrain job wait {f.name} --for running` waits for it",
        )
    return Verdict(
        NO_TRAINER_CONTROLLER,
        f"no JobSet was made for TrainJob {f.name} in {ago_of(age)}: is the Trainer controller running?",
        evidence or [f"TrainJob {f.namespace}/{f.name} has no JobSet and no events"],
        "`kubectl get deployments -A | grep trainer` shows whether it is installed; "
        "`ktrain job create --target jobset` needs no Trainer controller",
    )


def jobs_verdict(f: Facts, now: dt.datetime) -> Verdict | None:
    """Fewer pods than the JobSet runs and no pod to blame: look at its Jobs and their events."""
    jobs = need(f, Read(JOBS))
    events = need(f, Read(EVENTS))
    age = age_of(f.jobset, now)
    if jobs == []:
        about = events_about(events, c.JOBSET_KIND, {f.name})
        evidence = [event_line(ev) for ev in about[-3:]]
        if about:
            return Verdict(
                POD_CREATION_FAILED,
                f"the JobSet controller has not made the Jobs of JobSet {f.name}: {about[-1].get('message')}",
                evidence,
                f"`kubectl describe jobset {f.name} -n {f.namespace}` shows the controller's account",
            )
        if age < CONTROLLER_GRACE:
            return Verdict(
                STARTING, f"waiting for the JobSet controller to make the Jobs of {f.name} ({ago_of(age)} so far)"
            )
        seen = bool(status_of(f.jobset))
        return Verdict(
            NO_JOBSET_CONTROLLER,
            f"JobSet {f.name} has no Jobs after {ago_of(age)}"
            + ("" if seen else ": is the JobSet controller running?"),
            [
                f"JobSet {f.namespace}/{f.name}: "
                + ("a status, but no Jobs" if seen else "no status: no controller has looked at it")
            ],
            "`kubectl get deployments -A | grep jobset` shows whether it is installed "
            "(https://jobset.sigs.k8s.io/docs/installation/)",
        )
    # The Job controller's refusals: FailedCreate events on the Jobs (named <jobset>-<rjob>-<i>).
    names = {str(meta(job).get("name")) for job in jobs} if jobs is not None else None
    refused = [
        ev
        for ev in events or []
        if (ev.get("involvedObject") or {}).get("kind") == "Job"
        and ev.get("reason") == "FailedCreate"
        and (
            str((ev.get("involvedObject") or {}).get("name")) in names
            if names is not None
            else str((ev.get("involvedObject") or {}).get("name")).startswith(f.name + "-")
        )
    ]
    refused.sort(key=event_time)
    if refused:
        text = str(refused[-1].get("message") or "")
        if "exceeded quota" in text:
            return quota_verdict(f, text, [event_line(refused[-1])])
        return Verdict(
            POD_CREATION_FAILED,
            f"the Job controller cannot create the pods of job {f.name}: {text.removeprefix('Error creating: ')}",
            [event_line(ev) for ev in refused[-3:]],
            "an admission webhook or policy refuses the pods: the message names it",
        )
    if events is None:  # no account of the refusals: compare the quotas with what a pod asks
        return quota_from_usage(f)
    return None
