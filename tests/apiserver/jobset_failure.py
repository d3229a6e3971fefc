"""What the Job and JobSet controllers decide when a pod fails, for the double's controllers and
for tests that check a rendered failure policy means what it says.

- `job_failure(job_spec, pod)`: kubernetes pkg/controller/job/pod_failure_policy.go
  (`matchPodFailurePolicy`) and job_controller.go: the first podFailurePolicy rule that matches the
  failed pod decides (`FailJob`: the Job fails with reason `PodFailurePolicy` and the rule's message;
  `Ignore`: not counted; `Count`/no rule: counted against `backoffLimit`, and past it the Job fails
  with reason `BackoffLimitExceeded`, message "Job has reached the specified backoff limit").
- `jobset_action(jobset, failed_job)`: kubernetes-sigs/jobset pkg/controllers/failure_policy.go
  (`executeFailurePolicy`, `findFirstFailedPolicyRuleAndJob`, `ruleIsApplicable`) with the
  message patterns of KEP-262 (the Job failure condition's message must match one pattern of
  `onJobFailureMessagePatterns`, an RE2 regexp searched unanchored; empty lists match anything),
  and the action appliers: `RestartJobSet` counts and fails the JobSet with `ReachedMaxRestarts`
  once `restartsCountTowardsMax >= maxRestarts`; `RestartJobSetAndIgnoreMaxRestarts` restarts
  without counting; `FailJobSet` fails it (`FailedJobs` without a failure policy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

# jobset pkg/constants: condition reasons and messages
REACHED_MAX_RESTARTS = ("ReachedMaxRestarts", "jobset failed due to reaching max number of restarts")
FAIL_JOBSET_ACTION = ("FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action")
# the restart actions' Warning events on the JobSet (failure_policy.go, the action appliers)
RESTART_EVENTS = {
    "RestartJobSet": ("RestartJobSetFailurePolicyAction", "applying RestartJobSet failure policy action"),
    "RestartJobSetAndIgnoreMaxRestarts": (
        "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction",
        "applying RestartJobSetAndIgnoreMaxRestarts failure policy action",
    ),
}
FAILED_JOBS = ("FailedJobs", "jobset failed due to one or more job failures")
BACKOFF_LIMIT_MESSAGE = "Job has reached the specified backoff limit"


@dataclass
class JobFailure:
    reason: str
    message: str
    rule: int | None = None  # the podFailurePolicy rule that fired


def _exit_code_match(requirement: JSON, pod: JSON) -> JSON | None:
    """matchOnExitCodes: the first container (init containers first) that ended non-zero and whose
    code is In / NotIn the values; containerName narrows it to one."""
    statuses = [*(pod.get("status", {}).get("initContainerStatuses") or [])]
    statuses += pod.get("status", {}).get("containerStatuses") or []
    for status in statuses:
        name = requirement.get("containerName")
        if name is not None and status.get("name") != name:
            continue
        code = ((status.get("state") or {}).get("terminated") or {}).get("exitCode")
        if code is None or code == 0:
            continue
        inside = code in (requirement.get("values") or [])
        if inside == (requirement.get("operator") == "In"):
            return status
    return None


def _condition_match(patterns: list[JSON], pod: JSON) -> JSON | None:
    for condition in pod.get("status", {}).get("conditions") or []:
        for pattern in patterns:
            if condition.get("type") == pattern.get("type") and condition.get("status") == pattern.get(
                "status", "True"
            ):
                return condition
    return None


def pod_rule(job_spec: JSON, pod: JSON) -> tuple[int, str, str] | None:
    """(rule index, action, FailJob message) of the first podFailurePolicy rule the failed pod meets."""
    namespace, name = pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]
    for index, rule in enumerate((job_spec.get("podFailurePolicy") or {}).get("rules") or []):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            status = _exit_code_match(rule["onExitCodes"], pod)
            if status is not None:
                code = status["state"]["terminated"]["exitCode"]
                message = (
                    f"Container {status['name']} for pod {namespace}/{name} failed with exit code {code} "
                    f"matching {action} rule at index {index}"
                )
                return index, action, message
        elif rule.get("onPodConditions"):
            condition = _condition_match(rule["onPodConditions"], pod)
            if condition is not None:
                message = (
                    f"Pod {namespace}/{name} has condition {condition['type']} matching {action} rule at index {index}"
                )
                return index, action, message
    return None


def job_failure(job_spec: JSON, pod: JSON, failed_so_far: int) -> JobFailure | None:
    """The Job's failure condition after `pod` failed (`failed_so_far` counted failures before it),
    or None while the Job would still retry it."""
    matched = pod_rule(job_spec, pod)
    if matched is not None:
        index, action, message = matched
        if action == "FailJob":
            return JobFailure("PodFailurePolicy", message, index)
        if action == "Ignore":
            return None
    if failed_so_far + 1 > int(job_spec.get("backoffLimit", 6)):
        return JobFailure("BackoffLimitExceeded", BACKOFF_LIMIT_MESSAGE)
    return None


@dataclass
class JobSetDecision:
    action: str  # FailJobSet | RestartJobSet | RestartJobSetAndIgnoreMaxRestarts | Failed (no policy)
    rule: str | None  # the matching rule's name, None for the default action
    failed: tuple[str, str] | None = None  # (reason, message) when the JobSet fails
    counts: bool = False  # the restart counts towards maxRestarts


def rule_applies(rule: JSON, reason: str, message: str, rjob: str) -> bool:
    """ruleIsApplicable, with KEP-262's message patterns."""
    reasons = rule.get("onJobFailureReasons") or []
    if reasons and reason not in reasons:
        return False
    patterns = rule.get("onJobFailureMessagePatterns") or []
    if patterns and not any(re.search(p, message) for p in patterns):
        return False
    targets = rule.get("targetReplicatedJobs") or []
    return not targets or rjob in targets


def jobset_action(jobset: JSON, rjob: str, failure: JobFailure, job_name: str) -> JobSetDecision:
    """executeFailurePolicy for one failed Job of replicated job `rjob`."""
    spec, status = jobset.get("spec") or {}, jobset.get("status") or {}
    policy = spec.get("failurePolicy")
    if policy is None:
        return JobSetDecision("Failed", None, (FAILED_JOBS[0], f"{FAILED_JOBS[1]} (first failed job: {job_name})"))
    for rule in policy.get("rules") or []:
        if rule_applies(rule, failure.reason, failure.message, rjob):
            action, name = rule["action"], rule.get("name")
            break
    else:
        action, name = "RestartJobSet", None
    if action == "FailJobSet":
        return JobSetDecision(
            action, name, (FAIL_JOBSET_ACTION[0], f"{FAIL_JOBSET_ACTION[1]} (first failed job: {job_name})")
        )
    if action == "RestartJobSet":
        if int(status.get("restartsCountTowardsMax", 0)) >= int(policy.get("maxRestarts", 0)):
            message = f"{REACHED_MAX_RESTARTS[1]} (first failed job: {job_name})"
            return JobSetDecision(action, name, (REACHED_MAX_RESTARTS[0], message))
        return JobSetDecision(action, name, counts=True)
    if action == "RestartJobSetAndIgnoreMaxRestarts":
        return JobSetDecision(action, name)
    raise NotImplementedError(f"the double does not model the {action} action")
