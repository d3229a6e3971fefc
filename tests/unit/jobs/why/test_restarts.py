"""`ktrain.jobs.why.restarts`: the verdicts on a job's failure policy at work (issue #35), through
`diagnose` with the reads it asks for played by the test (`settle`): a restart loop (counted
restarts, the same Job failing each time), the budget spent, a fail-fast exit."""

from __future__ import annotations

from typing import Any

from ktrain.jobs.why.facts import EVENTS, LOG, RUNNING, Read
from ktrain.jobs.why.restarts import FAIL_FAST, RESTART_LOOP, RESTARTS_SPENT

from .test_diagnosis import at, facts, jobset, pod, running, settle

JSON = dict[str, Any]
BACKOFF = "Job has reached the specified backoff limit"
RESTARTED = "applying RestartJobSet failure policy action (first failed job: demo-node-0)"
LAST_LINE = [("2026-06-01T11:59:00Z", "step 3"), ("2026-06-01T11:59:01Z", "loss is nan")]


def policy_jobset(restarts: int, counted: int, budget: int, condition: JSON | None = None, rules: Any = None) -> JSON:
    js = jobset(
        status={
            "restarts": restarts,
            "restartsCountTowardsMax": counted,
            "conditions": [condition] if condition else [],
        }
    )
    js["spec"]["failurePolicy"] = {"maxRestarts": budget, **({"rules": rules} if rules else {})}
    return js


def warning(kind: str, name: str, reason: str, message: str, minutes: float, count: int = 1) -> JSON:
    return {
        "involvedObject": {"kind": kind, "name": name},
        "type": "Warning",
        "reason": reason,
        "message": message,
        "count": count,
        "lastTimestamp": at(minutes),
    }


def failed(rank: int, code: int) -> JSON:
    return pod(
        rank,
        "Failed",
        labels={"batch.kubernetes.io/job-name": "demo-node-0"},
        statuses=[{"name": "node", "state": {"terminated": {"exitCode": code, "reason": "Error"}}}],
    )


def test_a_job_restarting_between_attempts_is_in_a_loop_from_the_restart_events() -> None:
    events = [
        warning("JobSet", "demo", "RestartJobSetFailurePolicyAction", RESTARTED, 2, count=3),
        warning("Job", "demo-node-0", "BackoffLimitExceeded", BACKOFF, 2),
    ]
    verdict, reads = settle(facts(policy_jobset(3, 3, 5), []), {EVENTS: events})
    assert verdict.code == RESTART_LOOP and not verdict.ok
    assert verdict.message == (
        "job demo is restarting in a loop: restarted 3 of 5 times, each time job demo-node-0 failed (2 restarts left)"
    )
    assert reads == [EVENTS]  # no pod left to read a log of


def test_the_loop_names_a_failed_pod_of_this_attempt_and_its_last_line() -> None:
    events = [warning("JobSet", "demo", "RestartJobSetFailurePolicyAction", RESTARTED, 2)]
    log = Read(LOG, name="demo-node-0-1-x", container="node").key
    verdict, reads = settle(
        facts(policy_jobset(1, 1, 5), [pod(0, "Running", statuses=running()), failed(1, 1)]),
        {EVENTS: events, log: LAST_LINE},
    )
    assert verdict.message == (
        "job demo is restarting in a loop: restarted 1 of 5 times, each time job demo-node-0 failed; "
        "pod demo-node-0-1-x exited 1: loss is nan (4 restarts left)"
    )
    assert reads == [EVENTS, LOG]


def test_one_restart_of_a_job_that_runs_again_is_not_a_loop() -> None:
    pods = [pod(0, "Running", statuses=running()), pod(1, "Running", statuses=running())]
    log = Read(LOG, name="demo-node-0-0-x", container="node").key
    verdict, reads = settle(facts(policy_jobset(1, 1, 5), pods), {log: LAST_LINE})
    assert verdict.code == RUNNING
    assert EVENTS not in reads  # no restart verdict looked at


def test_two_restarts_make_a_loop_even_while_it_runs() -> None:
    pods = [pod(0, "Running", statuses=running()), pod(1, "Running", statuses=running())]
    events = [warning("JobSet", "demo", "RestartJobSetFailurePolicyAction", RESTARTED, 2, count=1)]
    verdict, _ = settle(facts(policy_jobset(2, 2, 5), pods), {EVENTS: events})
    assert verdict.code == RESTART_LOOP
    assert "the last time job demo-node-0 failed" in verdict.message  # one of two restarts on record


def test_the_budget_spent() -> None:
    condition = {
        "type": "Failed",
        "status": "True",
        "reason": "ReachedMaxRestarts",
        "message": "jobset failed due to reaching max number of restarts (first failed job: demo-node-0)",
    }
    events = [
        warning("JobSet", "demo", "RestartJobSetFailurePolicyAction", RESTARTED, 3, count=2),
        warning("Job", "demo-node-0", "BackoffLimitExceeded", BACKOFF, 1),
    ]
    log = Read(LOG, name="demo-node-0-1-x", container="node").key
    verdict, _ = settle(facts(policy_jobset(2, 2, 2, condition), [failed(1, 1)]), {EVENTS: events, log: LAST_LINE})
    assert verdict.code == RESTARTS_SPENT
    assert verdict.message == (
        "job demo failed: restarted 2 of 2 times, each time job demo-node-0 failed; "
        "pod demo-node-0-1-x exited 1: loss is nan"
    )
    assert "last lines of pod demo-node-0-1-x (container node):" in verdict.evidence


def test_a_fail_fast_exit() -> None:
    condition = {
        "type": "Failed",
        "status": "True",
        "reason": "FailJobSetFailurePolicyAction",
        "message": "applying FailJobSet failure policy action (first failed job: demo-node-0)",
    }
    rules = [
        {
            "name": "FailOnExitCode",
            "action": "FailJobSet",
            "onJobFailureReasons": ["PodFailurePolicy"],
            "onJobFailureMessagePatterns": ["failed with exit code [0-9]+ matching FailJob rule at index 0$"],
        }
    ]
    said = "Container node for pod ns/demo-node-0-1-x failed with exit code 2 matching FailJob rule at index 0"
    events = [warning("Job", "demo-node-0", "PodFailurePolicy", said, 1)]
    log = Read(LOG, name="demo-node-0-1-x", container="node").key
    verdict, _ = settle(facts(policy_jobset(0, 0, 3, condition, rules), [failed(1, 2)]), {EVENTS: events, log: []})
    assert verdict.code == FAIL_FAST
    assert (
        verdict.message
        == "job demo failed at once: rule FailOnExitCode fired on exit code 2 (pod demo-node-0-1-x exited 2)"
    )
    assert verdict.next_step is not None and verdict.next_step.startswith(
        "exit code 2 is one --fail-on-exit-code lists as a bug: no restart was tried"
    )
