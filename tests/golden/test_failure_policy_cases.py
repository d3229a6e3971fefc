"""The failure-policy golden cases (cases/failure-policy/*) are accepted by JobSet and mean what
they say (issue #35, docs/failure-policy.md).

Accepted: each rendered JobSet passes the JobSet v0.12 CRD schema (../shared), the JobSet
webhook's `ValidateCreate` (tests/apiserver/jobset_admission.py, from jobset_webhook.go) and, for
every replicated job, what kube-apiserver checks of the Job JobSet creates from it
(pkg/apis/batch/validation: podFailurePolicy wants restartPolicy Never, ordered exit codes, ...).

Meaning: the Job controller's failure messages for a preempted pod and for a listed exit code
(pod_failure_policy.go) are run through the rendered policy with JobSet's rule matching
(failure_policy.go, tests/apiserver/jobset_failure.py): a preemption restarts without counting, a
listed code fails the JobSet at once, any other exit restarts counted against maxRestarts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver.jobset_admission import default_on_create, job_spec_errors, webhook_create_errors
from apiserver.jobset_failure import JobFailure, job_failure, jobset_action
from apiserver.schema import crd_schema
from conftest import UPSTREAM

CASES = Path(__file__).parent / "cases" / "failure-policy"
RENDERED = sorted(p.parent for p in CASES.glob("*/expected.yaml"))
JSON = dict[str, Any]


def _jobset(case: Path, cli) -> JSON:  # type: ignore[no-untyped-def]
    result = cli("job", "render", "-f", str(case / "trainjob.yaml"), "--runtime-file", str(case / "runtime.yaml"))
    assert result.exit_code == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    return next(d for d in docs if d["kind"] == "JobSet")


def _annotations(case: Path) -> dict[str, str]:
    job = yaml.safe_load((case / "trainjob.yaml").read_text())
    return job["metadata"].get("annotations") or {}


def _pod(name: str, *, code: int | None = None, disrupted: bool = False) -> JSON:
    status: JSON = {"phase": "Failed", "conditions": [], "containerStatuses": []}
    if disrupted:
        status["conditions"].append({"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"})
        code = 137 if code is None else code
    status["containerStatuses"].append({"name": "node", "state": {"terminated": {"exitCode": code}}})
    return {"metadata": {"name": name, "namespace": "default"}, "status": status}


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="needs ../shared for the JobSet CRD")
@pytest.mark.parametrize("case", RENDERED, ids=lambda p: p.name)
def test_every_render_is_accepted_by_the_crd_the_webhook_and_the_job_api(case: Path, cli) -> None:  # type: ignore[no-untyped-def]
    jobset = _jobset(case, cli)
    default_on_create(jobset)  # the mutating webhook runs before the schema and the validating webhook
    schema = crd_schema(UPSTREAM / "jobset" / "jobset.x-k8s.io_jobsets.yaml", "v1alpha2")
    normalised, unknown = schema.normalise(jobset)
    assert unknown == []
    assert schema.validate(normalised) == []
    assert webhook_create_errors(normalised) == []
    for rjob in normalised["spec"]["replicatedJobs"]:
        assert job_spec_errors(rjob["template"]["spec"]) == [], rjob["name"]


def _decide(jobset: JSON, pod: JSON, rjob: str = "node") -> tuple[str, str | None, bool, Any]:
    job_spec = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == rjob)["template"]["spec"]
    failure = job_failure(job_spec, pod, failed_so_far=0)
    if failure is None:
        return "retried by the Job", None, False, None
    decision = jobset_action(jobset, rjob, failure, f"fp-{rjob}-0")
    return decision.action, decision.rule, decision.counts, decision.failed


@pytest.mark.parametrize("case", RENDERED, ids=lambda p: p.name)
def test_each_render_means_what_its_settings_say(case: Path, cli) -> None:  # type: ignore[no-untyped-def]
    annotations = _annotations(case)
    jobset = _jobset(case, cli)
    max_restarts = int(annotations.get("ktrain.io/max-restarts", "0"))
    codes = [int(c) for c in annotations.get("ktrain.io/fail-on-exit-code", "").split(",") if c]
    preemption = annotations.get("ktrain.io/restart-on-preemption") == "true"
    if "ktrain.io/ttl" in annotations:
        assert jobset["spec"]["ttlSecondsAfterFinished"] > 0
    for rjob in ("dataset-initializer", "node"):
        # A preempted pod: restarts without counting with --restart-on-preemption, else a plain failure.
        action, rule, counts, failed = _decide(jobset, _pod("fp-node-0-1-abcde", disrupted=True), rjob)
        if preemption:
            assert (action, rule, counts, failed) == (
                "RestartJobSetAndIgnoreMaxRestarts",
                "RestartOnPreemption",
                False,
                None,
            )
        elif "ktrain.io/max-restarts" in annotations:
            assert (action, counts) == ("RestartJobSet", max_restarts > 0)
        # A listed exit code fails the JobSet at once, whatever the budget.
        for code in codes:
            action, rule, counts, failed = _decide(jobset, _pod("fp-node-0-1-abcde", code=code), rjob)
            assert (action, rule) == ("FailJobSet", "FailOnExitCode")
            assert failed[0] == "FailJobSetFailurePolicyAction"
        # Any other exit: with a budget the first failure fails the Job (backoffLimit 0) and is counted.
        action, rule, counts, failed = _decide(jobset, _pod("fp-node-0-1-abcde", code=1), rjob)
        if "ktrain.io/max-restarts" in annotations:
            assert (action, rule, counts) == ("RestartJobSet", None, max_restarts > 0)
            assert (failed is None) == (max_restarts > 0)
        elif not codes and not preemption:
            assert action == "retried by the Job"  # the runtime's backoffLimit (6) is left alone


def test_a_budget_is_used_up_by_counted_failures_only() -> None:
    """status.restartsCountTowardsMax against maxRestarts, as restartJobSetActionApplier compares them."""
    jobset = {"spec": {"failurePolicy": {"maxRestarts": 2, "rules": []}}, "status": {"restartsCountTowardsMax": 1}}
    failure = JobFailure("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert jobset_action(jobset, "node", failure, "j").counts
    jobset["status"]["restartsCountTowardsMax"] = 2
    decision = jobset_action(jobset, "node", failure, "j")
    assert decision.failed is not None and decision.failed[0] == "ReachedMaxRestarts"


def test_the_preemption_and_exit_code_patterns_do_not_match_each_other(cli) -> None:  # type: ignore[no-untyped-def]
    """An exit code 143 (SIGTERM) listed by the user on a preempted pod: rule 0 (DisruptionTarget)
    comes first in the Job's podFailurePolicy, so the preemption still restarts uncounted."""
    jobset = _jobset(CASES / "all-combined", cli)
    node = jobset["spec"]["replicatedJobs"][1]["template"]["spec"]
    node["podFailurePolicy"]["rules"][1]["onExitCodes"]["values"] = [2, 143]
    failure = job_failure(node, _pod("p", code=143, disrupted=True), 0)
    assert failure is not None and failure.rule == 0
    assert jobset_action(jobset, "node", failure, "j").rule == "RestartOnPreemption"
    failure = job_failure(node, _pod("p", code=143), 0)
    assert failure is not None and failure.rule == 1
    assert jobset_action(jobset, "node", failure, "j").rule == "FailOnExitCode"
