"""A job's restarts against its budget and its last failure, as the JobSet and Job controllers
record them (issue #35, "Visible"): `job list`'s RESTARTS, `job get`'s `Restarts:` and `Failure:`,
and what `job why`'s restart verdicts (`ktrain.jobs.why.restarts`) stand on.

Pure: plain dicts as the API server serves them in. Where each fact is written:

- the JobSet's `status.restarts` (every restart) and `status.restartsCountTowardsMax` (those that
  count), against `spec.failurePolicy.maxRestarts` (jobset api/jobset/v1alpha2 `JobSetStatus`);
- its Failed condition: reason `ReachedMaxRestarts`, `FailJobSetFailurePolicyAction` or (no failure
  policy) `FailedJobs`, and its restart events (Warning `RestartJobSetFailurePolicyAction`,
  `RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction`), each message ending in
  ` (first failed job: <job>)` (jobset pkg/constants, pkg/controllers/failure_policy.go
  `messageWithFirstFailedJob`);
- the failed Job's Warning event, its Failed condition's reason and message (kubernetes
  pkg/controller/job/job_controller.go `recordJobFinished`), which for a pod failure policy rule
  names the pod (pod_failure_policy.go: `Container C for pod NS/P failed with exit code N matching
  FailJob rule at index I`, `Pod NS/P has condition T matching FailJob rule at index I`);
- the failed pods themselves (their exit codes, a DisruptionTarget condition).

The JobSet does not record which of its rules fired: `fired_rule` finds it again as
failure_policy.go `ruleIsApplicable` does (the first rule whose reasons, message patterns and
target replicated jobs match the failed Job), else the default action, RestartJobSet.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.util.structs import struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

Obj = dict[str, "Any"]

# jobset pkg/constants
REACHED_MAX_RESTARTS = "ReachedMaxRestarts"
FAIL_JOBSET_REASON = "FailJobSetFailurePolicyAction"
FAILED_JOBS = "FailedJobs"
RESTART_EVENT = "RestartJobSetFailurePolicyAction"
RESTART_UNCOUNTED_EVENT = "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"
FIRST_FAILED = " (first failed job: "
# jobset api/jobset/v1alpha2 FailurePolicyAction
FAIL_JOBSET = "FailJobSet"
RESTART_JOBSET = "RestartJobSet"
RESTART_IGNORING_MAX = "RestartJobSetAndIgnoreMaxRestarts"
ACTION_OF_EVENT = {RESTART_EVENT: RESTART_JOBSET, RESTART_UNCOUNTED_EVENT: RESTART_IGNORING_MAX}
# batch/v1 JobReason*: the reasons of a Job's Failed condition
JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "PodFailurePolicy",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
)
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
DISRUPTION_TARGET = "DisruptionTarget"
# The rules ktrain writes (ktrain.authoring.failure_policy), and the flags that write them.
KTRAIN_RULES = {"FailOnExitCode": "--fail-on-exit-code", "RestartOnPreemption": "--restart-on-preemption"}


@struct(frozen=True)
class RestartCount:
    """The JobSet's restarts: all of them, those that count, and the budget (None: no failure
    policy, so the first failed Job fails the job)."""

    restarts: int
    counted: int
    budget: int | None

    @property
    def uncounted(self) -> int:
        return max(self.restarts - self.counted, 0)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def restart_count(jobset: Obj | None) -> RestartCount | None:
    """The JobSet's restart count against its budget; None without a JobSet."""
    if not jobset:
        return None
    status = jobset.get("status") or {}
    policy = (jobset.get("spec") or {}).get("failurePolicy")
    budget = _int(policy.get("maxRestarts")) if isinstance(policy, dict) else None
    return RestartCount(_int(status.get("restarts")), _int(status.get("restartsCountTowardsMax")), budget)


def restarts_cell(count: RestartCount | None) -> str:
    """`job list`'s RESTARTS: `-` (no JobSet yet), `0` (no failure policy), `1/3` (restarts of
    the budget), `2 (1/3)` (two restarts, one of them counted: the other a preemption)."""
    if count is None:
        return "-"
    if count.budget is None:
        return str(count.restarts)
    used = f"{count.counted}/{count.budget}"
    return used if not count.uncounted else f"{count.restarts} ({used})"


def restarts_text(count: RestartCount) -> str:
    """`job get`'s `Restarts:` line."""
    text = f"{count.counted} of {count.budget} (maxRestarts)" if count.budget is not None else str(count.restarts)
    if count.uncounted:
        text += f", and {count.uncounted} that did not count (RestartJobSetAndIgnoreMaxRestarts)"
    return text


# --- the last failure ----------------------------------------------------------------------------


@struct(frozen=True)
class Failure:
    """The last failure the controllers recorded: the Job, its failure condition, the pod and what
    ended it, and the JobSet rule that decided (None: no rule matched, or no failure policy)."""

    job: str
    reason: str | None = None  # the Job's Failed condition
    message: str | None = None
    pod: str | None = None
    container: str | None = None
    exit_code: int | None = None
    condition: str | None = None  # a pod condition that failed it (DisruptionTarget)
    rule: str | None = None
    action: str | None = None  # FailJobSet | RestartJobSet | RestartJobSetAndIgnoreMaxRestarts; None: no policy
    outcome: str | None = None  # the JobSet's Failed reason, when it ended the job

    @property
    def counted(self) -> bool:
        return self.action == RESTART_JOBSET


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _failed_condition(obj: Obj | None) -> Obj | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "Failed" and str(cond.get("status")) == "True":
            return cond
    return None


def first_failed_job(message: object) -> str | None:
    """The job named by `... (first failed job: NAME)`."""
    text = str(message or "")
    if not text.endswith(")") or FIRST_FAILED not in text:
        return None
    return text.rsplit(FIRST_FAILED, 1)[1][:-1] or None


def _when(ev: Obj) -> str:
    return str(ev.get("lastTimestamp") or ev.get("eventTime") or ev.get("firstTimestamp") or "")


def _about(events: list[Obj], kind: str, name: str, reasons: tuple[str, ...] | dict[str, str]) -> list[Obj]:
    found = [
        ev
        for ev in events
        if (ev.get("involvedObject") or {}).get("kind") == kind
        and (ev.get("involvedObject") or {}).get("name") == name
        and ev.get("reason") in reasons
    ]
    return sorted(found, key=_when)


def restart_events(jobset: Obj, events: list[Obj]) -> list[Obj]:
    """The JobSet's restart events, oldest first (each counts its repeats in `count`)."""
    return _about(events, c.JOBSET_KIND, str(_meta(jobset).get("name") or ""), ACTION_OF_EVENT)


def failed_jobs(jobset: Obj, events: list[Obj]) -> dict[str, int]:
    """Job -> how many restarts its failure caused, by the restart events."""
    out: dict[str, int] = {}
    for ev in restart_events(jobset, events):
        job = first_failed_job(ev.get("message"))
        if job:
            out[job] = out.get(job, 0) + max(_int(ev.get("count")), 1)
    return out


def pod_job(pod: Obj) -> str:
    """The Job a pod belongs to: its job-name label, else `<jobset>-<rjob>-<index>`."""
    labels = _meta(pod).get("labels") or {}
    if labels.get(JOB_NAME_LABEL):
        return str(labels[JOB_NAME_LABEL])
    parts = (
        labels.get(c.JOBSET_NAME_LABEL),
        labels.get(c.JOBSET_RJOB_NAME_LABEL),
        labels.get(c.JOBSET_JOB_INDEX_LABEL),
    )
    return "-".join(str(p) for p in parts) if all(p is not None for p in parts) else ""


def parse_pod_failure_message(message: str) -> tuple[str, str | None, int | None, str | None] | None:
    """(pod, container, exit code, condition) from a FailJob message of the Job controller."""
    words = message.split(" ")
    if (
        len(words) > 8
        and words[0] == "Container"
        and words[2:4] == ["for", "pod"]
        and words[5:8] == ["failed", "with", "exit"]
    ):
        code = words[9] if len(words) > 9 else ""
        return words[4].rpartition("/")[2], words[1], int(code) if code.isdigit() else None, None
    if len(words) > 4 and words[0] == "Pod" and words[2:4] == ["has", "condition"]:
        return words[1].rpartition("/")[2], None, None, words[4]
    return None


def _ended(pod: Obj) -> tuple[str | None, int | None, str | None]:
    """(container, exit code, condition) of a failed pod: its first non-zero exit, a DisruptionTarget."""
    status = pod.get("status") or {}
    condition = next(
        (
            str(cd.get("type"))
            for cd in status.get("conditions") or []
            if isinstance(cd, dict) and cd.get("type") == DISRUPTION_TARGET and str(cd.get("status")) == "True"
        ),
        None,
    )
    for cs in list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or []):
        term = ((cs or {}).get("state") or {}).get("terminated") or {}
        if term.get("exitCode") not in (None, 0):
            return str(cs.get("name")), int(term["exitCode"]), condition
    return None, None, condition


def _rjob_of(jobset: Obj, job: str) -> str | None:
    name = str(_meta(jobset).get("name") or "")
    for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        prefix = f"{name}-{rjob.get('name')}-"
        if job.startswith(prefix) and job[len(prefix) :].isdigit():
            return str(rjob.get("name"))
    return None


def fired_rule(jobset: Obj, job: str, reason: str | None, message: str | None) -> tuple[str | None, str] | None:
    """(rule name, action) the JobSet's failure policy takes for this failed Job (name None: no
    rule matched, the default RestartJobSet); None without a failure policy or a known reason."""
    import re

    policy = (jobset.get("spec") or {}).get("failurePolicy")
    if not isinstance(policy, dict) or reason is None:
        return None
    rjob = _rjob_of(jobset, job)
    for rule in policy.get("rules") or []:
        reasons = rule.get("onJobFailureReasons") or []
        patterns = rule.get("onJobFailureMessagePatterns") or []
        targets = rule.get("targetReplicatedJobs") or []
        try:
            said = not patterns or any(re.search(str(p), message or "") for p in patterns)
        except re.error:  # an RE2 pattern Python does not read: the rule cannot be told
            return None
        if (not reasons or reason in reasons) and said and (not targets or rjob in targets):
            return (str(rule["name"]) if rule.get("name") else None), str(rule.get("action"))
    return None, RESTART_JOBSET


def last_failure(jobset: Obj | None, pods: list[Obj], events: list[Obj] | None) -> Failure | None:
    """The last failure of the job, or None when nothing failed (or nothing says so)."""
    if not jobset:
        return None
    events = events or []
    failed = _failed_condition(jobset)
    job = first_failed_job(failed.get("message")) if failed else None
    restarts = restart_events(jobset, events)
    if job is None and restarts:
        job = first_failed_job(restarts[-1].get("message"))
    failed_pods = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
    if job is None and failed_pods:
        job = pod_job(failed_pods[0]) or None
    if job is None:
        return None
    said = _about(events, "Job", job, JOB_FAILURE_REASONS)
    reason = str(said[-1].get("reason")) if said else None
    message = str(said[-1].get("message") or "") if said else None
    pod = container = condition = None
    code: int | None = None
    parsed = parse_pod_failure_message(message) if message else None
    if parsed:
        pod, container, code, condition = parsed
    mine = [p for p in failed_pods if pod_job(p) == job and (pod is None or _meta(p).get("name") == pod)]
    if mine:
        pod = pod or str(_meta(mine[0]).get("name"))
        seen_container, seen_code, seen_condition = _ended(mine[0])
        container, code, condition = (
            container or seen_container,
            code if code is not None else seen_code,
            condition or seen_condition,
        )
    decided = fired_rule(jobset, job, reason, message)
    rule, action = decided if decided else (None, None)
    outcome = str(failed.get("reason")) if failed else None
    if action is None and outcome == FAIL_JOBSET_REASON:
        action = FAIL_JOBSET
    elif action is None and restarts and first_failed_job(restarts[-1].get("message")) == job and not failed:
        action = ACTION_OF_EVENT[str(restarts[-1].get("reason"))]
    elif action is None and outcome == REACHED_MAX_RESTARTS:
        action = RESTART_JOBSET
    return Failure(job, reason, message, pod, container, code, condition, rule, action, outcome)


def what_failed(failure: Failure) -> str:
    """`pod P exited with code 1 (container node)`, `pod P has condition DisruptionTarget`, `job J failed`."""
    if failure.pod and failure.condition:
        return f"pod {failure.pod} has condition {failure.condition} (it was disrupted: preempted, evicted or drained)"
    if failure.pod and failure.exit_code is not None:
        return f"pod {failure.pod} exited with code {failure.exit_code}" + (
            f" (container {failure.container})" if failure.container else ""
        )
    if failure.pod:
        return f"pod {failure.pod} failed"
    return f"job {failure.job} failed"


def rule_text(failure: Failure, count: RestartCount | None) -> str:
    """Which failure-policy rule decided, and what it did."""
    if failure.action is None:
        if failure.outcome == FAILED_JOBS or (count is not None and count.budget is None):
            return "no failure policy: the first failed Job fails the job (FailedJobs)"
        return "the rule that decided is not known (the Job's failure event was not read)"
    flag = KTRAIN_RULES.get(failure.rule or "")
    who = f"rule {failure.rule}" + (f" ({flag})" if flag else "") if failure.rule else "no rule matched, the default"
    if failure.action == FAIL_JOBSET:
        return f"{who}: FailJobSet, the job failed at once"
    if failure.action == RESTART_IGNORING_MAX:
        return f"{who}: RestartJobSetAndIgnoreMaxRestarts, a restart that does not count"
    if failure.outcome == REACHED_MAX_RESTARTS:
        return f"{who}: RestartJobSet, but the budget was spent (ReachedMaxRestarts)"
    return f"{who}: {failure.action}, a restart counted against maxRestarts"


def failure_lines(failure: Failure, count: RestartCount | None) -> list[str]:
    """`job get`'s `Failure:` lines: the Job and what ended it, its condition, the rule."""
    lines = [f"job {failure.job}: {what_failed(failure)}" if failure.pod else what_failed(failure)]
    if failure.reason:
        lines.append(f"{failure.reason}: {failure.message}" if failure.message else failure.reason)
    lines.append(rule_text(failure, count))
    return lines


def document(count: RestartCount | None, failure: Failure | None) -> Obj | None:
    """`job get -o json|yaml`'s `restarts` (key order fixed); None without a JobSet."""
    if count is None:
        return None
    last = None
    if failure is not None:
        last = {
            "job": failure.job,
            "reason": failure.reason,
            "message": failure.message,
            "pod": failure.pod,
            "container": failure.container,
            "exitCode": failure.exit_code,
            "condition": failure.condition,
            "rule": failure.rule,
            "action": failure.action,
        }
    return {
        "restarts": count.restarts,
        "counted": count.counted,
        "maxRestarts": count.budget,
        "lastFailure": last,
    }
