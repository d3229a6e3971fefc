"""`ktrain job get` through the CLI, against the API-server double."""

from __future__ import annotations

import json

import pytest
from cli import jobs_double
from cli.jobs_double import image_pull_backoff, owned_by_trainjob, pod, seed, set_pod_status, unschedulable

from ktrain.errors import ExitCode

# Both HTTP clients (conftest); the API-server double (conftest `srv`); fast polling.
# The API-server double and its kubeconfig, and fast polling (tests/cli/jobs_double.py).
srv, kc, fast_polling = jobs_double.srv, jobs_double.kc, jobs_double.fast_polling
pytestmark = [pytest.mark.both_transports, pytest.mark.double, pytest.mark.usefixtures("fast_polling")]


# --- get ------------------------------------------------------------------------------------------


def test_get_explains_why_a_job_is_not_running(srv, kc, cli) -> None:
    js = seed(srv, "demo")
    p0 = pod(srv, js, rank=0, phase="Pending")
    p1 = pod(srv, js, rank=1, phase="Pending", node="gpu-1")
    set_pod_status(srv, p0["metadata"]["name"], unschedulable)
    set_pod_status(srv, p1["metadata"]["name"], image_pull_backoff)
    srv.add_event(p0, "FailedScheduling", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", type="Warning")
    srv.add_event(p1, "Failed", 'Failed to pull image "trainer:missing"', type="Warning")
    srv.add_event(("Pod", "other-job-node-0-0-x"), "Failed", "unrelated", type="Warning")
    srv.add_event(p1, "Scheduled", "Successfully assigned default/demo to gpu-1")  # Normal: left out

    r = cli("job", "get", "demo", "--kubeconfig", kc)

    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert "State:      Created" in out
    assert "Waiting:    0 of 2 trainer pods are running" in out
    assert (
        "pod demo-node-0-0-x1 is Pending: Unschedulable - 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    ) in out
    pods = out.split("Pods:\n")[1].split("\n\n")[0].splitlines()
    assert pods[0].split() == ["NAME", "STEP", "RANK", "PHASE", "NODE", "RESTARTS", "REASON"]
    assert [line.split() for line in pods[1:]] == [
        ["demo-node-0-0-x1", "node", "0", "Pending", "-", "0", "Unschedulable"],
        ["demo-node-0-1-x1", "node", "1", "Pending", "gpu-1", "0", "ImagePullBackOff"],
    ]
    events = out.split("Warning events:\n")[1]
    assert "FailedScheduling" in events and 'Failed to pull image "trainer:missing"' in events
    assert "unrelated" not in events and "Successfully assigned" not in events
    assert "Replicated jobs:" in out and "node   trainer" in out


def test_get_yaml_and_json_carry_counts_and_pods(srv, kc, cli) -> None:
    js = seed(srv, "mpi", runtime="deepspeed-distributed", nodes=2)
    srv.set_status(
        "jobsets",
        "mpi",
        {
            "replicatedJobsStatus": [
                {"name": "launcher", "ready": 1, "active": 1, "succeeded": 0, "failed": 0, "suspended": 0},
                {"name": "node", "ready": 1, "active": 1, "succeeded": 0, "failed": 0, "suspended": 0},
            ]
        },
    )
    pod(srv, js, rjob="launcher", rank=0, restart_count=2)
    pod(srv, js, rjob="node", rank=0, node="n1")

    doc = json.loads(cli("job", "get", "mpi", "--kubeconfig", kc, "-o", "json").stdout)
    text = cli("job", "get", "mpi", "--kubeconfig", kc, "-o", "yaml").stdout

    assert doc["state"] == "Running" and doc["nodes"] == 2
    assert doc["trainerPods"] == {"ready": 2, "expected": 2}
    assert [(j["name"], j["step"], j["active"]) for j in doc["replicatedJobs"]] == [
        ("node", None, 1),
        ("launcher", "trainer", 1),
    ]
    assert [(p["step"], p["rank"], p["restarts"], p["node"]) for p in doc["pods"]] == [
        ("launcher", 0, 2, None),
        ("node", 0, 0, "n1"),
    ]
    assert text.startswith("name: mpi\nnamespace: default\nkind: JobSet\n")


def test_get_unknown_job_is_not_found(srv, kc, cli) -> None:
    r = cli("job", "get", "nope", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.NOT_FOUND
    assert r.stderr.splitlines()[0] == (
        'error: job "nope" not found in namespace default (no TrainJob or JobSet of that name)'
    )


def test_get_of_a_trainjob_shows_its_runtime_and_conditions(srv, kc, cli) -> None:
    resumed = {
        "type": "Suspended",
        "status": "False",
        "reason": "Resumed",
        "message": "TrainJob is resumed",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    complete = {
        "type": "Complete",
        "status": "True",
        "reason": "AllJobsCompleted",
        "message": "jobset completed successfully",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    js = owned_by_trainjob(srv, "sft", "torchtune-llama3.2-1b", 1, [resumed, complete])
    pod(srv, js, phase="Succeeded")
    srv.add_event(("TrainJob", "sft"), "TrainJobResourcesCreationFailed", "quota exceeded", type="Warning")

    r = cli("job", "get", "sft", "--kubeconfig", kc)

    assert r.exit_code == 0, r.stderr
    assert "Kind:       TrainJob\nRuntime:    torchtune-llama3.2-1b\nNodes:      1\n" in r.stdout
    assert "State:      Complete (AllJobsCompleted: jobset completed successfully)" in r.stdout
    conditions = r.stdout.split("Conditions:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[:3] for line in conditions] == [
        ["TYPE", "STATUS", "REASON"],
        ["Suspended", "False", "Resumed"],
        ["Complete", "True", "AllJobsCompleted"],
    ]
    assert "trainjob/sft   TrainJobResourcesCreationFailed   quota exceeded" in r.stdout


def test_get_of_a_running_job_reads_only_what_it_shows(srv, kc, cli) -> None:
    """A running job: its TrainJob and JobSet, its pods and the warning events (as `kubectl get`
    plus describe's events); no `Why:` and none of the reads behind it, whose verdict would be
    "Running" (issue #32). This JobSet reports no trainerStatus, so its progress is read from the tail
    of rank 0's log: one more read (issue #34). `job why` still reads rank 0's log (stuck at the
    rendezvous?)."""
    js = seed(srv, "demo", nodes=1)
    pod(srv, js, rank=0, phase="Running")
    before = len(srv.requests)
    r = cli("job", "get", "demo", "--kubeconfig", kc)
    assert r.exit_code == 0, r.stderr
    assert "State:      Running" in r.stdout and "Why:" not in r.stdout
    assert [(q.method, q.resource) for q in srv.requests[before:]] == [
        ("GET", "trainjobs.trainer.kubeflow.org"),
        ("GET", "jobsets.jobset.x-k8s.io"),
        ("GET", "pods"),
        ("GET", "events"),
        ("GET", "pods/log"),
    ]
    doc = json.loads(cli("job", "get", "demo", "--kubeconfig", kc, "-o", "json").stdout)
    assert doc["state"] == "Running" and "why" not in doc
    before = len(srv.requests)
    assert cli("job", "why", "demo", "--kubeconfig", kc).exit_code == 0
    assert ("GET", "pods/log") in [(q.method, q.resource) for q in srv.requests[before:]]


def test_get_shows_restarts_against_the_budget_and_the_last_failure_with_no_more_requests(srv, kc, cli) -> None:
    """Issue #35: `Restarts:` from the JobSet's status and `maxRestarts`, `Failure:` from the restart
    event on the JobSet and the Job controller's event on the failed Job (the events `job get`
    reads anyway): the same requests as any running job (its progress' log tail included)."""
    js = seed(srv, "demo", nodes=1)
    js["spec"]["failurePolicy"] = {"maxRestarts": 3}
    js = srv.put_object(js)
    srv.set_status("jobsets", "demo", {"restarts": 1, "restartsCountTowardsMax": 1})
    pod(srv, js, rank=0, phase="Running")
    backoff = "Job has reached the specified backoff limit"
    restarted = "applying RestartJobSet failure policy action (first failed job: demo-node-0)"
    srv.add_event(("Job", "demo-node-0"), "BackoffLimitExceeded", backoff, type="Warning")
    srv.add_event(js, "RestartJobSetFailurePolicyAction", restarted, type="Warning")
    before = len(srv.requests)
    r = cli("job", "get", "demo", "--kubeconfig", kc)
    assert r.exit_code == 0, r.stderr
    assert (
        "Restarts:   1 of 3 (maxRestarts)\n"
        "Failure:    job demo-node-0 failed\n"
        "            BackoffLimitExceeded: Job has reached the specified backoff limit\n"
        "            no rule matched, the default: RestartJobSet, a restart counted against maxRestarts\n"
    ) in r.stdout
    assert [(q.method, q.resource) for q in srv.requests[before:]] == [
        ("GET", "trainjobs.trainer.kubeflow.org"),
        ("GET", "jobsets.jobset.x-k8s.io"),
        ("GET", "pods"),
        ("GET", "events"),
        ("GET", "pods/log"),  # the progress, as for any running JobSet (issue #34)
    ]
    doc = json.loads(cli("job", "get", "demo", "--kubeconfig", kc, "-o", "json").stdout)
    assert doc["restarts"]["restarts"] == 1 and doc["restarts"]["lastFailure"]["job"] == "demo-node-0"


def test_get_of_a_jobset_without_a_failure_policy_shows_no_restarts_line(srv, kc, cli) -> None:
    seed(srv, "demo", nodes=1)
    r = cli("job", "get", "demo", "--kubeconfig", kc)
    assert "Restarts:" not in r.stdout and "Failure:" not in r.stdout
