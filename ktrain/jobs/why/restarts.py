"""`job why` for a job's failure policy at work (issue #35): a job restarting in a loop (the same
Job failing attempt after attempt, until the budget is spent: `ReachedMaxRestarts`), and a fail-fast
exit (a FailJobSet rule fired, on an exit code `--fail-on-exit-code` lists). What the JobSet and Job
controllers record is read by `ktrain.jobs.restarts`. Reads: the Warning events (`EVENTS`: the
JobSet's restart events, the failed Job's) and the failed container's last log lines (`LOG`).
"""

from __future__ import annotations

from ktrain.jobs import restarts as rs
from ktrain.jobs.why.facts import EVENTS, LOG, LOG_LINES, Facts, Read, Verdict, need, plural

RESTART_LOOP = "RestartLoop"
RESTARTS_SPENT = rs.REACHED_MAX_RESTARTS  # the JobSet's own reason
FAIL_FAST = "FailFast"

# Restarts that make a loop of a job that runs now: one restart may have been the cure.
LOOP_WHILE_RUNNING = 2


def _failure(f: Facts) -> rs.Failure | None:
    return rs.last_failure(f.jobset, f.pods or [], need(f, Read(EVENTS)) or [])


def _last_line(f: Facts, failure: rs.Failure) -> tuple[str | None, list[str]]:
    """(the last line the failed container wrote, its last lines) while the pod is still there."""
    if not failure.pod or not any(str((p.get("metadata") or {}).get("name")) == failure.pod for p in f.pods or []):
        return None, []
    lines = need(f, Read(LOG, name=failure.pod, container=failure.container or "node"))
    said = [text for _, text in (lines or [])[-LOG_LINES:] if text.strip()]
    return (said[-1] if said else None), said


def _each_time(f: Facts, failure: rs.Failure, count: rs.RestartCount) -> str:
    """`each time job J failed` when the restart events name one Job for every restart."""
    jobs = rs.failed_jobs(f.jobset or {}, need(f, Read(EVENTS)) or [])
    if list(jobs) == [failure.job] and jobs[failure.job] >= count.restarts:
        return f"each time job {failure.job} failed"
    return f"the last time job {failure.job} failed"


def _evidence(failure: rs.Failure, lines: list[str]) -> list[str]:
    evidence = [f"job {failure.job}: {failure.reason}: {failure.message}"] if failure.reason else []
    evidence.append(rs.rule_text(failure, None))
    if lines:
        evidence.append(f"last lines of pod {failure.pod} (container {failure.container or 'node'}):")
        evidence += [f"  {line}" for line in lines]
    return evidence


def _ended_by(failure: rs.Failure, last: str | None) -> str:
    """`pod P exited 1: <its last line>`."""
    if failure.pod and failure.exit_code is not None and not failure.condition:
        text = f"pod {failure.pod} exited {failure.exit_code}"
    else:
        text = rs.what_failed(failure)
    return text + (f": {last}" if last else "")


def ended_of(f: Facts, reason: str | None) -> Verdict | None:
    """A failed job its failure policy ended: a FailJobSet rule, or the budget spent."""
    if reason not in (rs.FAIL_JOBSET_REASON, rs.REACHED_MAX_RESTARTS) or not f.jobset:
        return None
    failure = _failure(f)
    count = rs.restart_count(f.jobset)
    if failure is None or count is None:
        return None
    last, lines = _last_line(f, failure)
    if reason == rs.FAIL_JOBSET_REASON:
        rule = f"rule {failure.rule}" if failure.rule else "a FailJobSet rule"
        flag = rs.KTRAIN_RULES.get(failure.rule or "")
        on = f" on exit code {failure.exit_code}" if failure.exit_code is not None else ""
        return Verdict(
            FAIL_FAST,
            f"job {f.name} failed at once: {rule} fired{on} ({_ended_by(failure, last)})",
            _evidence(failure, lines),
            (
                f"exit code {failure.exit_code} is one {flag} lists as a bug: no restart was tried; "
                if flag and on
                else ""
            )
            + f"`ktrain job logs {f.name}` shows its output; fix it and create the job again",
        )
    return Verdict(
        RESTARTS_SPENT,
        f"job {f.name} failed: restarted {count.counted} of {count.budget} times, {_each_time(f, failure, count)}; "
        f"{_ended_by(failure, last)}",
        [f"restarts: {rs.restarts_text(count)}", *_evidence(failure, lines)],
        f"`ktrain job logs {f.name}` shows the last attempt's output; the same failure each time is a bug, "
        "not bad luck: fix it and create the job again",
    )


def loop_of(f: Facts, running: bool) -> Verdict | None:
    """A job that keeps restarting: counted restarts and the last failure (a running job only
    once it has restarted `LOOP_WHILE_RUNNING` times)."""
    count = rs.restart_count(f.jobset)
    if count is None or count.counted < (LOOP_WHILE_RUNNING if running else 1):
        return None
    failure = _failure(f)
    if failure is None:
        return None
    last, lines = _last_line(f, failure)
    left = (count.budget or 0) - count.counted
    return Verdict(
        RESTART_LOOP,
        f"job {f.name} is restarting in a loop: restarted {count.counted} of {count.budget} times, "
        f"{_each_time(f, failure, count)}"
        + (f"; {_ended_by(failure, last)}" if failure.pod else "")
        + f" ({plural(left, 'restart')} left)",
        [f"restarts: {rs.restarts_text(count)}", *_evidence(failure, lines)],
        f"`ktrain job logs {f.name}` shows the current attempt; if each attempt fails the same way, "
        f"`ktrain job delete {f.name}` saves the rest of the budget",
    )
