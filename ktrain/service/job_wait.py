"""`job wait` (and `job create --wait`, `ktrain.Client().wait`): until a job is complete, failed or
running, watching what the target depends on between two looks."""

from __future__ import annotations

import time

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.deadline import bounded
from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.cluster.reads import JOBSET, TRAINJOB, await_change, find_job, list_pods_document
from ktrain.errors import (
    ClusterError,
    ClusterUnreachableError,
    JobFailedError,
    UsageError,
    WaitTimeoutError,
)
from ktrain.jobs import state as status
from ktrain.service.job_why import diagnose_job, job_facts
from ktrain.util.jsondata import Obj

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


# --- waiting --------------------------------------------------------------------------------------


@server_shaped
def wait_for_job(
    cluster: KubeCluster,
    name: str,
    target: str,
    *,
    timeout: float | None,
    namespace: str | None = None,
    on_change: Callable[[status.JobSummary], None] | None = None,
    on_stall: Callable[[str], None] | None = None,
    explain: bool = False,
    on_progress: Callable[[Any], None] | None = None,
) -> status.JobSummary:
    """Wait until the job reaches `target` (complete | failed | running, see status.WAIT_TARGETS).

    `on_progress` hears a running job's progress at each look (ktrain.cluster.progress_read: its
    trainerStatus, else its rank-0 log's tail).
    `on_stall` hears why a job that is not running is not getting there, each time that changes:
    the quick reason of `status.stall_reason`, or with `explain` the verdict of `job why`
    (`<Reason>: <sentence>`; the diagnosis reads more, and only when the job or its pods changed).

    Returns the summary that satisfied it. Raises JobFailedError (exit 1) when the job ended in
    another terminal state, WaitTimeoutError (exit 124) when `timeout` seconds pass first, and
    NotFoundError when the job does not exist or is deleted while waiting.

    Between two looks it watches what the target depends on (the job's pods for `running`, the
    TrainJob/JobSet for the terminal states), so it wakes on a change instead of polling."""
    if target not in status.WAIT_TARGETS:
        raise UsageError(f"--for {target!r}: use one of " + ", ".join(status.WAIT_TARGETS))
    ns = namespace or cluster.namespace
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    # Every request ends by the deadline too: a server that stalls cannot hold the wait past
    # it by a whole --request-timeout (issue #37).
    cluster = bounded(cluster, timeout)
    last_state = None
    last_stall = None
    explainer = _Explainer(cluster, name, ns) if explain and on_stall is not None else None
    summary: status.JobSummary | None = None
    try:
        while True:
            trainjob, jobset = find_job(cluster, name, ns)
            pod_list = list_pods_document(cluster, ns, f"{c.JOBSET_NAME_LABEL}={name}")
            pods = list(pod_list.get("items") or [])
            summary = status.summarize(trainjob, jobset, pods)
            if on_progress is not None and summary.state == status.RUNNING:
                from ktrain.cluster.progress_read import job_progress

                on_progress(job_progress(cluster, trainjob, summary))
            if summary.state != last_state and on_change is not None:
                on_change(summary)
            last_state = summary.state
            outcome = status.wait_outcome(summary, target)
            if outcome:
                return summary
            stall = summary.stalled
            if explainer is not None and outcome is None and summary.state in (status.CREATED, status.SUSPENDED):
                stall = explainer.reason(trainjob, jobset, pods) or stall
            if _stall_key(stall) != _stall_key(last_stall) and stall and on_stall is not None:
                on_stall(stall)
            last_stall = stall
            if (
                trainjob is not None
                and jobset is None
                and _waited_for_controller(trainjob, started) >= CONTROLLER_GRACE
            ):
                raise NoControllerError(
                    status.NO_CONTROLLER.format(name=name),
                    hint="`kubectl get deployments -A | grep trainer` shows whether it is installed",
                )
            if outcome is False:
                why = ": ".join(p for p in (summary.reason, summary.message) if p)
                raise JobFailedError(
                    f"job {name} is {summary.state}, it will not become {status.WAIT_TARGETS[target]}"
                    + (f" ({why})" if why else ""),
                    summary=summary,
                )
            remaining = WATCH_SECONDS if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeoutError(
                    f"timed out after {_seconds(timeout or 0)} waiting for job {name} to be "
                    f"{status.WAIT_TARGETS[target]} (it is {summary.state}"
                    + (f": {last_stall})" if last_stall else ")"),
                    summary=summary,
                )
            watched: tuple[k.Resource | None, str, str, str | None]
            if target == "running":
                watched = (
                    None,
                    ns,
                    str((pod_list.get("metadata") or {}).get("resourceVersion") or ""),
                    f"{c.JOBSET_NAME_LABEL}={name}",
                )
            else:
                main = trainjob or jobset or {}
                resource = TRAINJOB if trainjob else JOBSET
                watched = (resource, ns, str((main.get("metadata") or {}).get("resourceVersion") or ""), None)
            seconds = min(remaining, WATCH_SECONDS)
            if trainjob is not None and jobset is None:  # look again when the controller's grace ends
                seconds = min(seconds, max(0.5, CONTROLLER_GRACE - (time.monotonic() - started)))
            await_change(cluster, *watched, name=name, seconds=seconds)
    except ClusterUnreachableError:
        if deadline is None or time.monotonic() < deadline:
            raise
        raise WaitTimeoutError(
            f"timed out after {_seconds(timeout or 0)} waiting for job {name} to be "
            f"{status.WAIT_TARGETS[target]} (the API server did not answer in time"
            + (f"; it was {summary.state})" if summary is not None else ")"),
            summary=summary,
        ) from None


def _stall_key(reason: str | None) -> str | None:
    """A stall reason without its numbers: "(12s so far)" becoming "(42s so far)" is no news."""
    return None if reason is None else "".join(ch for ch in reason if not ch.isdigit())


class _Explainer:
    """`job why`'s verdict while waiting: diagnosed again when the job or its pods changed (at most
    every EXPLAIN_MIN_SECONDS), or every EXPLAIN_SECONDS (the verdicts that depend on time: a
    scheduler or controller that never acts)."""

    def __init__(self, cluster: KubeCluster, name: str, namespace: str) -> None:
        self.cluster, self.name, self.namespace = cluster, name, namespace
        self.seen: tuple[Any, ...] | None = None
        self.when = 0.0
        self.said: str | None = None

    def reason(self, trainjob: Obj | None, jobset: Obj | None, pods: list[Obj]) -> str | None:
        versions = tuple(
            str(((o or {}).get("metadata") or {}).get("resourceVersion")) for o in (trainjob, jobset, *pods)
        )
        since = time.monotonic() - self.when
        if self.seen is not None and (
            since < EXPLAIN_MIN_SECONDS or (versions == self.seen and since < EXPLAIN_SECONDS)
        ):
            return self.said  # unchanged, or changing faster than a diagnosis is worth (pods starting)
        self.seen, self.when = versions, time.monotonic()
        facts = job_facts(self.cluster, self.name, self.namespace, known=(trainjob, jobset, pods))
        verdict = diagnose_job(self.cluster, facts)
        from ktrain.jobs.why.pods import STARTING

        # A job that is starting normally is not held: nothing to say (as status.stall_reason).
        self.said = None if verdict.ok or verdict.code == STARTING else f"{verdict.code}: {verdict.message}"
        return self.said


# Seconds between two diagnoses of a job that does not change while `job wait` waits, and at least
# between two of a job that does (a hundred pods starting are a hundred changes).
EXPLAIN_SECONDS = 20.0
EXPLAIN_MIN_SECONDS = 5.0
# Longest single watch while waiting: the job is re-read at least this often.
WATCH_SECONDS = 60.0
# How long a TrainJob may go without a JobSet before the wait gives up on the Trainer controller.
CONTROLLER_GRACE = 60.0


class NoControllerError(ClusterError):
    """A TrainJob that no controller picks up: no JobSet is made for it."""


def _waited_for_controller(trainjob: Obj, started: float) -> float:
    """Seconds the TrainJob has gone without a JobSet: since this wait began, or since it was
    created when that is longer (an old TrainJob is not given the grace again)."""
    import datetime as dt

    waited = time.monotonic() - started
    created = status.parse_time((trainjob.get("metadata") or {}).get("creationTimestamp"))
    if created is not None:
        waited = max(waited, (dt.datetime.now(dt.timezone.utc) - created).total_seconds())
    return waited


def _seconds(value: float) -> str:
    return f"{value:g}s"
