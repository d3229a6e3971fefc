"""Issue #35's Done-when on the API-server double with its controllers (tests/jobset_controller.py:
the JobSet and Job controllers and the kubelet, each pod's container run for real): a failing pod
restarts the job up to the budget and then fails it; a fail-fast exit code fails it at once; a
DisruptionTarget pod restarts it without counting; `job get`, `job list` and `job why` say so."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from jobset_controller import JobSetController

NS = "team-a"
# Rank FAIL_RANK says where it got to, then exits FAIL_CODE; the others succeed.
SCRIPT = (
    "import os, sys; r = os.environ['JOB_COMPLETION_INDEX']; "
    "print('rank ' + r + ' step 3: loss is nan', flush=True); "
    "sys.exit(int(os.environ['FAIL_CODE']) if r == os.environ['FAIL_RANK'] else 0)"
)


def create(cli: Any, kube: Any, *flags: str, code: int = 1, rank: str = "1") -> None:
    r = cli("job", "create", *kube.args(), "-r", "torch-distributed", "--name", "demo", "--nodes", "2",
            "-e", f"FAIL_CODE={code}", "-e", f"FAIL_RANK={rank}", *flags, "--", "python3", "-c", SCRIPT)  # fmt: skip
    assert r.exit_code == 0, r.stderr


def settled(kube: Any, controller: JobSetController, timeout: float = 60) -> dict[str, Any]:
    """The JobSet once the controller has ended it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if controller.errors:
            raise controller.errors[0]
        jobset = kube.srv.get_object("jobsets", "demo", NS)
        if jobset and (jobset.get("status") or {}).get("terminalState"):
            return jobset
        time.sleep(0.05)
    raise AssertionError("the JobSet did not end")


def test_a_failing_pod_restarts_the_job_up_to_the_budget_then_fails_it(cli, kube, tmp_path) -> None:
    with JobSetController(kube.srv, NS, tmp_path) as controller:
        create(cli, kube, "--max-restarts", "2")
        jobset = settled(kube, controller)
    status = jobset["status"]
    assert (status["restarts"], status["restartsCountTowardsMax"]) == (2, 2)
    assert status["conditions"][0]["reason"] == "ReachedMaxRestarts"
    assert status["conditions"][0]["message"] == (
        "jobset failed due to reaching max number of restarts (first failed job: demo-node-0)"
    )
    # the last attempt's Job and pods stay; the earlier attempts' went with their Jobs
    jobs = kube.srv.objects("jobs", NS)
    assert [j["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] for j in jobs] == ["2"]
    assert sorted(p["metadata"]["name"] for p in kube.srv.objects("pods", NS)) == [
        "demo-node-0-0-x1r2",
        "demo-node-0-1-x1r2",
    ]

    listed = cli("job", "list", *kube.args())
    assert listed.stdout.splitlines()[0].split() == [
        "NAME",
        "RUNTIME",
        "NODES",
        "STATE",
        "RESTARTS",
        "AGE",
        "PROGRESS",
        "ETA",
    ]
    assert listed.stdout.splitlines()[1].split()[:5] == ["demo", "torch-distributed", "2", "Failed", "2/2"]

    got = cli("job", "get", "demo", *kube.args())
    assert "Restarts:   2 of 2 (maxRestarts)\n" in got.stdout
    assert (
        "Failure:    job demo-node-0: pod demo-node-0-1-x1r2 exited with code 1 (container node)\n"
        "            BackoffLimitExceeded: Job has reached the specified backoff limit\n"
        "            no rule matched, the default: RestartJobSet, but the budget was spent (ReachedMaxRestarts)\n"
    ) in got.stdout
    doc = json.loads(cli("job", "get", "demo", *kube.args(), "-o", "json").stdout)
    assert doc["restarts"] == {
        "restarts": 2,
        "counted": 2,
        "maxRestarts": 2,
        "lastFailure": {
            "job": "demo-node-0",
            "reason": "BackoffLimitExceeded",
            "message": "Job has reached the specified backoff limit",
            "pod": "demo-node-0-1-x1r2",
            "container": "node",
            "exitCode": 1,
            "condition": None,
            "rule": None,
            "action": "RestartJobSet",
        },
    }

    why = cli("job", "why", "demo", *kube.args())
    assert why.exit_code == 1
    assert why.stdout.splitlines()[0] == (
        "ReachedMaxRestarts: job demo failed: restarted 2 of 2 times, each time job demo-node-0 failed; "
        "pod demo-node-0-1-x1r2 exited 1: rank 1 step 3: loss is nan"
    )


def test_a_fail_fast_exit_code_fails_the_job_at_once(cli, kube, tmp_path) -> None:
    with JobSetController(kube.srv, NS, tmp_path) as controller:
        create(cli, kube, "--max-restarts", "3", "--fail-on-exit-code", "2", code=2)
        jobset = settled(kube, controller)
    status = jobset["status"]
    assert status.get("restarts", 0) == 0
    assert (status["conditions"][0]["reason"], status["conditions"][0]["message"]) == (
        "FailJobSetFailurePolicyAction",
        "applying FailJobSet failure policy action (first failed job: demo-node-0)",
    )

    listed = cli("job", "list", *kube.args())
    assert listed.stdout.splitlines()[1].split()[3:5] == ["Failed", "0/3"]

    got = cli("job", "get", "demo", *kube.args())
    assert "Restarts:   0 of 3 (maxRestarts)\n" in got.stdout
    assert (
        "Failure:    job demo-node-0: pod demo-node-0-1-x1 exited with code 2 (container node)\n"
        "            PodFailurePolicy: Container node for pod team-a/demo-node-0-1-x1 failed with exit code 2 "
        "matching FailJob rule at index 0\n"
        "            rule FailOnExitCode (--fail-on-exit-code): FailJobSet, the job failed at once\n"
    ) in got.stdout

    why = cli("job", "why", "demo", *kube.args())
    assert why.exit_code == 1
    assert why.stdout.splitlines()[0] == (
        "FailFast: job demo failed at once: rule FailOnExitCode fired on exit code 2 "
        "(pod demo-node-0-1-x1 exited 2: rank 1 step 3: loss is nan)"
    )
    assert "exit code 2 is one --fail-on-exit-code lists as a bug: no restart was tried" in why.stdout


def test_a_preempted_pod_restarts_the_job_without_counting(cli, kube, tmp_path) -> None:
    # attempt 0: rank 0 is preempted; attempt 1 runs every pod to the end
    with JobSetController(kube.srv, NS, tmp_path, preempt={(0, "node", 0)}) as controller:
        create(cli, kube, "--max-restarts", "1", "--restart-on-preemption", rank="none")
        jobset = settled(kube, controller)
    status = jobset["status"]
    assert (status["restarts"], status["restartsCountTowardsMax"]) == (1, 0)
    assert status["conditions"][0]["type"] == "Completed"
    events = [e for e in kube.srv.objects("events", NS) if e["involvedObject"]["kind"] == "JobSet"]
    assert ("RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction") in [e["reason"] for e in events]

    listed = cli("job", "list", *kube.args())
    assert listed.stdout.splitlines()[1].split()[3:6] == ["Complete", "1", "(0/1)"]

    got = cli("job", "get", "demo", *kube.args())
    assert (
        "Restarts:   0 of 1 (maxRestarts), and 1 that did not count (RestartJobSetAndIgnoreMaxRestarts)\n"
    ) in got.stdout
    assert (
        "Failure:    job demo-node-0: pod demo-node-0-0-x1 has condition DisruptionTarget "
        "(it was disrupted: preempted, evicted or drained)\n"
        "            PodFailurePolicy: Pod team-a/demo-node-0-0-x1 has condition DisruptionTarget "
        "matching FailJob rule at index 0\n"
        "            rule RestartOnPreemption (--restart-on-preemption): RestartJobSetAndIgnoreMaxRestarts, "
        "a restart that does not count\n"
    ) in got.stdout
    assert cli("job", "why", "demo", *kube.args()).stdout.startswith("Succeeded: job demo completed")


@pytest.mark.parametrize("restarts", [1, 2])
def test_a_job_restarting_now_is_in_a_loop_once_it_restarted(cli, kube, tmp_path, restarts: int) -> None:
    """Between attempts (the controller pauses), `job why` sees the loop from the restart events:
    the failed pods went with their Jobs."""
    with JobSetController(kube.srv, NS, tmp_path, pause=3.0) as controller:
        create(cli, kube, "--max-restarts", "5")
        deadline = time.monotonic() + 30
        while (kube.srv.get_object("jobsets", "demo", NS).get("status") or {}).get("restarts", 0) < restarts:
            assert time.monotonic() < deadline and not controller.errors
            time.sleep(0.05)
        why = cli("job", "why", "demo", *kube.args())
        listed = cli("job", "list", *kube.args())
    assert listed.stdout.splitlines()[1].split()[4] == f"{restarts}/5"
    assert why.exit_code == 1
    assert why.stdout.splitlines()[0] == (
        f"RestartLoop: job demo is restarting in a loop: restarted {restarts} of 5 times, "
        f"each time job demo-node-0 failed ({5 - restarts} restarts left)"
    )
