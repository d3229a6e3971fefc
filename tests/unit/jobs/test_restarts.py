"""`ktrain.jobs.restarts`: a job's restarts against its budget and its last failure, from the objects
and events the JobSet and Job controllers leave (their texts: jobset pkg/constants and
pkg/controllers/failure_policy.go; kubernetes pkg/controller/job)."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.authoring import failure_policy as authored
from ktrain.jobs import restarts as rs

JSON = dict[str, Any]
BACKOFF = "Job has reached the specified backoff limit"
EXIT_2 = "Container node for pod ns/demo-node-0-1-ab12c failed with exit code 2 matching FailJob rule at index 1"
PREEMPTED = "Pod ns/demo-node-0-0-zz9yx has condition DisruptionTarget matching FailJob rule at index 0"
RULES = [
    {
        "name": "RestartOnPreemption",
        "action": "RestartJobSetAndIgnoreMaxRestarts",
        "onJobFailureReasons": ["PodFailurePolicy"],
        "onJobFailureMessagePatterns": ["has condition DisruptionTarget matching FailJob rule at index 0$"],
    },
    {
        "name": "FailOnExitCode",
        "action": "FailJobSet",
        "onJobFailureReasons": ["PodFailurePolicy"],
        "onJobFailureMessagePatterns": ["failed with exit code [0-9]+ matching FailJob rule at index 1$"],
    },
]


def jobset(status: JSON | None = None, policy: JSON | None = None) -> JSON:
    spec: JSON = {"replicatedJobs": [{"name": "node"}, {"name": "launcher"}]}
    if policy is not None:
        spec["failurePolicy"] = policy
    return {"kind": "JobSet", "metadata": {"name": "demo", "namespace": "ns"}, "spec": spec, "status": status or {}}


def event(kind: str, name: str, reason: str, message: str, when: str, count: int = 1) -> JSON:
    return {
        "involvedObject": {"kind": kind, "name": name},
        "type": "Warning",
        "reason": reason,
        "message": message,
        "count": count,
        "lastTimestamp": when,
    }


def failed_pod(name: str, code: int, job: str = "demo-node-0", disrupted: bool = False) -> JSON:
    status: JSON = {
        "phase": "Failed",
        "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": code, "reason": "Error"}}}],
    }
    if disrupted:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return {"metadata": {"name": name, "labels": {rs.JOB_NAME_LABEL: job}}, "status": status}


@pytest.mark.parametrize(
    ("status", "policy", "cell"),
    [
        (None, None, "0"),
        ({}, {"maxRestarts": 3}, "0/3"),
        ({"restarts": 1, "restartsCountTowardsMax": 1}, {"maxRestarts": 3}, "1/3"),
        ({"restarts": 2, "restartsCountTowardsMax": 1}, {"maxRestarts": 3}, "2 (1/3)"),
        ({"restarts": "x"}, {"maxRestarts": 3}, "0/3"),  # a broken server's value counts as none
    ],
)
def test_the_restarts_cell(status: JSON | None, policy: JSON | None, cell: str) -> None:
    assert rs.restarts_cell(rs.restart_count(jobset(status, policy))) == cell


def test_no_jobset_has_no_count() -> None:
    assert rs.restart_count(None) is None and rs.restarts_cell(None) == "-"


def test_the_job_controllers_failjob_messages_are_read() -> None:
    assert rs.parse_pod_failure_message(EXIT_2) == ("demo-node-0-1-ab12c", "node", 2, None)
    assert rs.parse_pod_failure_message(PREEMPTED) == ("demo-node-0-0-zz9yx", None, None, "DisruptionTarget")
    assert rs.parse_pod_failure_message(BACKOFF) is None


def test_the_rules_ktrain_writes_are_the_ones_it_names() -> None:
    assert set(rs.KTRAIN_RULES) == {authored.EXIT_CODE_RULE, authored.PREEMPTION_RULE}


@pytest.mark.parametrize(
    ("reason", "message", "job", "fired"),
    [
        ("PodFailurePolicy", EXIT_2, "demo-node-0", ("FailOnExitCode", "FailJobSet")),
        ("PodFailurePolicy", PREEMPTED, "demo-node-0", ("RestartOnPreemption", "RestartJobSetAndIgnoreMaxRestarts")),
        ("BackoffLimitExceeded", BACKOFF, "demo-node-0", (None, "RestartJobSet")),
        (None, None, "demo-node-0", None),  # no failure event read: not known
    ],
)
def test_the_rule_that_fired_is_found_as_rule_is_applicable_does(
    reason: str | None, message: str | None, job: str, fired: tuple[str | None, str] | None
) -> None:
    assert rs.fired_rule(jobset(policy={"maxRestarts": 3, "rules": RULES}), job, reason, message) == fired


def test_target_replicated_jobs_narrow_a_rule() -> None:
    rules = [{"name": "Launcher", "action": "FailJobSet", "targetReplicatedJobs": ["launcher"]}]
    js = jobset(policy={"maxRestarts": 1, "rules": rules})
    assert rs.fired_rule(js, "demo-node-0", "BackoffLimitExceeded", BACKOFF) == (None, "RestartJobSet")
    assert rs.fired_rule(js, "demo-launcher-0", "BackoffLimitExceeded", BACKOFF) == ("Launcher", "FailJobSet")


def test_the_budget_spent_names_the_last_failed_job_its_pod_and_the_default_action() -> None:
    js = jobset(
        {
            "restarts": 2,
            "restartsCountTowardsMax": 2,
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "ReachedMaxRestarts",
                    "message": "jobset failed due to reaching max number of restarts (first failed job: demo-node-0)",
                }
            ],
        },
        {"maxRestarts": 2},
    )
    events = [
        event("Job", "demo-node-0", "BackoffLimitExceeded", BACKOFF, "2026-06-01T11:00:01Z"),
        event("Job", "demo-node-0", "BackoffLimitExceeded", BACKOFF, "2026-06-01T11:00:09Z"),
        event(
            "JobSet",
            "demo",
            "RestartJobSetFailurePolicyAction",
            "applying RestartJobSet failure policy action (first failed job: demo-node-0)",
            "2026-06-01T11:00:05Z",
            count=2,
        ),
    ]
    failure = rs.last_failure(js, [failed_pod("demo-node-0-1-b", 1)], events)
    assert failure == rs.Failure(
        "demo-node-0", "BackoffLimitExceeded", BACKOFF, "demo-node-0-1-b", "node", 1, None, None, "RestartJobSet",
        "ReachedMaxRestarts",
    )  # fmt: skip
    assert rs.failed_jobs(js, events) == {"demo-node-0": 2}
    assert rs.failure_lines(failure, rs.restart_count(js)) == [
        "job demo-node-0: pod demo-node-0-1-b exited with code 1 (container node)",
        f"BackoffLimitExceeded: {BACKOFF}",
        "no rule matched, the default: RestartJobSet, but the budget was spent (ReachedMaxRestarts)",
    ]


def test_a_preemption_restart_reads_the_pod_from_the_message_when_the_pod_is_gone() -> None:
    js = jobset({"restarts": 1}, {"maxRestarts": 3, "rules": RULES})
    events = [
        event("Job", "demo-node-0", "PodFailurePolicy", PREEMPTED, "2026-06-01T11:00:01Z"),
        event(
            "JobSet",
            "demo",
            "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction",
            "applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: demo-node-0)",
            "2026-06-01T11:00:02Z",
        ),
    ]
    failure = rs.last_failure(js, [], events)
    assert failure is not None
    assert (failure.pod, failure.condition, failure.rule, failure.counted) == (
        "demo-node-0-0-zz9yx",
        "DisruptionTarget",
        "RestartOnPreemption",
        False,
    )
    assert rs.restarts_text(rs.restart_count(js)) == (  # type: ignore[arg-type]
        "0 of 3 (maxRestarts), and 1 that did not count (RestartJobSetAndIgnoreMaxRestarts)"
    )


def test_without_events_a_failed_pod_still_names_its_job_and_exit() -> None:
    failure = rs.last_failure(jobset(), [failed_pod("demo-node-0-0-q", 137)], None)
    assert failure is not None and (failure.job, failure.exit_code, failure.action) == ("demo-node-0", 137, None)
    assert rs.rule_text(failure, rs.restart_count(jobset())) == (
        "no failure policy: the first failed Job fails the job (FailedJobs)"
    )


def test_a_pod_without_the_job_name_label_is_placed_by_the_jobset_labels() -> None:
    pod = {
        "metadata": {
            "labels": {c.JOBSET_NAME_LABEL: "demo", c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "1"}
        }
    }
    assert rs.pod_job(pod) == "demo-node-1"


def test_nothing_failed_is_no_failure() -> None:
    assert rs.last_failure(jobset({}, {"maxRestarts": 1}), [], []) is None
    assert rs.document(None, None) is None
    assert rs.document(rs.restart_count(jobset({}, {"maxRestarts": 1})), None) == {
        "restarts": 0,
        "counted": 0,
        "maxRestarts": 1,
        "lastFailure": None,
    }
