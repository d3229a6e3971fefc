"""A local run follows the rendered JobSet's failure policy (issue #35, docs/failure-policy.md).

When a pod fails, the Job and JobSet controllers decide what happens; here the same decision is
made from the same rendered fields, as kubernetes pkg/controller/job/pod_failure_policy.go and
kubernetes-sigs/jobset pkg/controllers/failure_policy.go make it:

1. the failed pod's Job: the first `podFailurePolicy` rule its exit code meets (`onExitCodes`
   In/NotIn, `containerName`; no pod conditions locally: nothing preempts a local pod). `FailJob`
   fails the Job with reason `PodFailurePolicy` and the Job controller's message; otherwise the Job
   fails with `BackoffLimitExceeded` (a local run does not retry a pod inside its Job);
2. the JobSet: the first `failurePolicy.rules` entry whose reasons, message patterns and target
   replicated jobs match, else `RestartJobSet`; without a failure policy the run ends;
3. `RestartJobSet` restarts every pod of the job, in JobSet's start order, while fewer than
   `maxRestarts` counted restarts happened; `RestartJobSetAndIgnoreMaxRestarts` restarts without
   counting (bounded here by `LOCAL_RESTART_CAP`); `FailJobSet` ends the run with the pod's code.

Each attempt is planned again with its number (the pods' `jobset.sigs.k8s.io/restart-attempt`
label, so `KTRAIN_RESTART_ATTEMPT`), emptyDirs start empty, and claims (`--checkpoint`) keep their
files. `decide` is pure; `execute_with_restarts` drives a `ktrain.local.run.LocalRun`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ktrain import constants as c

if TYPE_CHECKING:
    from typing import Any, Protocol

    from ktrain.local.run_plan import RunPlan
    from ktrain.local.runner import RunResult

    class LocalRun(Protocol):  # ktrain.local.run.LocalRun, which imports this module
        plan: RunPlan | None
        options: Any

        def notify(self, text: str) -> None: ...
        def execute_once(self) -> RunResult: ...
        def restart(self, attempt: int) -> None: ...

    from ktrain.util.jsondata import Obj

# A rule that restarts without counting could loop for ever on a bug; locally that is a bug in
# the policy, not a preemption, so the run stops after this many such restarts.
LOCAL_RESTART_CAP = 100


@dataclass
class LocalPolicy:
    max_restarts: int
    rules: list[Obj] = field(default_factory=list)
    pod_rules: dict[str, list[Obj]] = field(default_factory=dict)  # replicated job -> its podFailurePolicy rules


@dataclass
class Decision:
    action: str  # RestartJobSet | RestartJobSetAndIgnoreMaxRestarts | FailJobSet | ReachedMaxRestarts
    rule: str | None  # the JobSet rule that matched (None: the default action)
    reason: str  # the Job's failure reason
    message: str  # the Job's failure message
    counts: bool = False


def policy_of(objects: list[Obj]) -> LocalPolicy | None:
    """The rendered JobSet's failure policy, or None (then a failed pod ends the run)."""
    jobset = next((o for o in objects if o.get("kind") == c.JOBSET_KIND), None)
    spec = (jobset or {}).get("spec") or {}
    failure = spec.get("failurePolicy")
    if not isinstance(failure, dict):
        return None
    pod_rules: dict[str, list[Obj]] = {}
    for rjob in spec.get("replicatedJobs") or []:
        job_spec = ((rjob or {}).get("template") or {}).get("spec") or {}
        rules = (job_spec.get("podFailurePolicy") or {}).get("rules") or []
        pod_rules[str((rjob or {}).get("name"))] = [r for r in rules if isinstance(r, dict)]
    rules = [r for r in failure.get("rules") or [] if isinstance(r, dict)]
    return LocalPolicy(max_restarts=int(failure.get("maxRestarts") or 0), rules=rules, pod_rules=pod_rules)


def _pod_rule(rules: list[Obj], container: str | None, code: int) -> tuple[int, str] | None:
    for index, rule in enumerate(rules):
        requirement = rule.get("onExitCodes")
        if not isinstance(requirement, dict) or code == 0:
            continue  # onPodConditions: no local pod is disrupted
        name = requirement.get("containerName")
        if name is not None and name != container:
            continue
        inside = code in (requirement.get("values") or [])
        if inside == (requirement.get("operator") == "In"):
            return index, str(rule.get("action"))
    return None


def _applies(rule: Obj, reason: str, message: str, rjob: str) -> bool:
    reasons = rule.get("onJobFailureReasons") or []
    if reasons and reason not in reasons:
        return False
    patterns = rule.get("onJobFailureMessagePatterns") or []
    if patterns and not any(re.search(str(p), message) for p in patterns):
        return False
    targets = rule.get("targetReplicatedJobs") or []
    return not targets or rjob in targets


def decide(
    policy: LocalPolicy,
    counted: int,
    *,
    rjob: str,
    pod: str,
    container: str | None,
    code: int,
    namespace: str = "default",
) -> Decision:
    """What the Job and JobSet controllers do when `pod` of `rjob` fails with `code`, after
    `counted` restarts that count towards maxRestarts."""
    matched = _pod_rule(policy.pod_rules.get(rjob, []), container, code)
    if matched is not None and matched[1] == "FailJob":
        reason = "PodFailurePolicy"
        message = (
            f"Container {container} for pod {namespace}/{pod} failed with exit code {code} "
            f"matching FailJob rule at index {matched[0]}"
        )
    else:
        reason, message = "BackoffLimitExceeded", "Job has reached the specified backoff limit"
    for rule in policy.rules:
        if _applies(rule, reason, message, rjob):
            action, name = str(rule.get("action")), rule.get("name")
            break
    else:
        action, name = "RestartJobSet", None
    if action in ("RestartJob", "RestartJobAndIgnoreMaxRestarts"):
        # JobSet's recreate of one Job: locally every pod restarts (the same pods, the same order).
        action = "RestartJobSet" if action == "RestartJob" else "RestartJobSetAndIgnoreMaxRestarts"
    if action == "RestartJobSet":
        if counted >= policy.max_restarts:
            return Decision("ReachedMaxRestarts", name, reason, message)
        return Decision(action, name, reason, message, counts=True)
    return Decision(action, None if name is None else str(name), reason, message)


def _step_of(run: LocalRun, pod: str) -> str:
    plan = run.plan
    for step in plan.steps if plan is not None else []:
        if any(p.name == pod for p in step.pods):
            return step.name
    return pod


def execute_with_restarts(run: LocalRun, policy: LocalPolicy) -> RunResult:
    """Run attempts until one succeeds, or the policy says the job has failed."""
    options = run.options
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    counted = uncounted = attempt = 0
    while True:
        result = run.execute_once()
        if result.exit_code == 0 or result.failed_pod is None:
            return result  # done, or stopped (a timeout, a signal, cancel): no failure to decide on
        rjob = _step_of(run, result.failed_pod)
        decision = decide(
            policy,
            counted,
            rjob=rjob,
            pod=result.failed_pod,
            container=result.failed_container,
            code=result.exit_code,
        )
        rule = f"rule {decision.rule}" if decision.rule else "the default action"
        if decision.action == "FailJobSet":
            run.notify(f"{result.message}: the job fails at once ({rule}, FailJobSet: {decision.message})")
            return result
        if decision.action == "ReachedMaxRestarts":
            run.notify(
                f"{result.message}: the job fails, restarted {counted} of {policy.max_restarts} times "
                "(ReachedMaxRestarts)"
            )
            return result
        if decision.counts:
            counted += 1
        else:
            uncounted += 1
            if uncounted > LOCAL_RESTART_CAP:
                run.notify(f"{result.message}: {LOCAL_RESTART_CAP} restarts that do not count; stopping")
                return result
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return result
            options.timeout = left
        attempt += 1
        budget = f"restart {counted} of {policy.max_restarts}" if decision.counts else "a restart that does not count"
        run.notify(
            f"{result.message} ({decision.reason}, {rule}): {budget}; starting every pod again (attempt {attempt})"
        )
        run.restart(attempt)
