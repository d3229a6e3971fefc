"""`ktrain job list | get | logs | wait` through the CLI, against the API-server double.

Jobs are seeded the way they reach a cluster: bundled runtimes rendered by ktrain, the objects
stored, then status, pods, logs and events set as the JobSet controller and kubelet would."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble

from ktrain import constants as c
from ktrain.cli.common import registry_from
from ktrain.cluster import observe
from ktrain.errors import ExitCode
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

JSON = dict[str, Any]
COMPLETED = {
    "type": "Completed",
    "status": "True",
    "reason": "AllJobsCompleted",
    "message": "jobset completed successfully",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}
FAILED = {
    "type": "Failed",
    "status": "True",
    "reason": "FailedJobs",
    "message": "jobset failed due to one or more job failures",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
}


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observe, "POLL_INTERVAL", 0.05)


def seed(
    srv: ApiServerDouble,
    name: str = "demo",
    runtime: str = "torch-distributed",
    nodes: int = 2,
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    suspend: bool | None = None,
) -> JSON:
    """Render a bundled runtime and store its objects; returns the stored JobSet."""
    overrides = JobOverrides(
        runtime=runtime, name=name, nodes=nodes, namespace=namespace, labels=dict(labels or {}), suspend=suspend
    )
    outcome = render_request(RenderRequest(overrides=overrides), registry_from(None, None))
    jobset = None
    for obj in outcome.result.objects:
        stored = srv.put_object(obj)
        if obj["kind"] == "JobSet":
            jobset = stored
    assert jobset is not None
    return jobset


def pod(
    srv: ApiServerDouble,
    jobset: JSON,
    rjob: str = "node",
    rank: int = 0,
    phase: str = "Running",
    suffix: str = "x1",
    **kwargs: Any,
) -> JSON:
    """A pod as the Job controller names and labels it."""
    name = jobset["metadata"]["name"]
    namespace = jobset["metadata"].get("namespace", "default")
    return srv.add_pod(
        f"{name}-{rjob}-0-{rank}-{suffix}",
        namespace,
        labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: rjob, c.JOBSET_JOB_INDEX_LABEL: "0"},
        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
        phase=phase,
        containers=kwargs.pop("containers", ["node"]),
        owner=jobset,
        **kwargs,
    )


def set_pod_status(srv: ApiServerDouble, name: str, change: Callable[[JSON], None]) -> JSON:
    with srv.cluster.lock:
        obj = srv.get_object("pods", name)
        assert obj is not None
        change(obj["status"])
        return srv.put_object(obj)


def unschedulable(status: JSON) -> None:
    status["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        }
    ]


def image_pull_backoff(status: JSON) -> None:
    status["containerStatuses"][0]["state"] = {
        "waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "trainer:missing"'}
    }


def start(status: JSON) -> None:
    status["phase"] = "Running"
    status["containerStatuses"][0]["state"] = {"running": {"startedAt": "2025-01-01T00:00:00Z"}}


def crash(status: JSON) -> None:
    """The container exits 1 and the kubelet will restart it (restartPolicy OnFailure)."""
    status["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 1, "reason": "Error"}}


def restart(srv: ApiServerDouble, name: str, container: str = "node") -> None:
    """The kubelet restarts the container: its log becomes the previous one, a new run starts."""
    with srv.cluster.lock:
        logs = srv.cluster.logs
        logs[("default", name, container, True)] = logs.pop(("default", name, container, False), [])

        def rerun(status: JSON) -> None:
            cs = status["containerStatuses"][0]
            cs["lastState"] = {"terminated": cs["state"].get("terminated", {"exitCode": 1})}
            cs["state"] = {"running": {"startedAt": "2025-01-01T00:01:00Z"}}
            cs["restartCount"] = int(cs.get("restartCount") or 0) + 1

        set_pod_status(srv, name, rerun)


def later(*steps: Callable[[], Any], pause: float = 0.3, srv: ApiServerDouble | None = None) -> threading.Thread:
    """Run `steps` in the background, `pause` seconds apart (the cluster moving on); with `srv`,
    only once the command has looked at the job's pods (so "later" means after it started)."""

    def run() -> None:
        deadline = time.monotonic() + 10
        while srv is not None and not srv.requests_for(verb="list", resource="pods") and time.monotonic() < deadline:
            time.sleep(0.01)
        for step in steps:
            time.sleep(pause)
            step()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


# --- list -----------------------------------------------------------------------------------------


def test_list_shows_each_state_of_engine_spec_section_10(srv, kc, cli) -> None:
    created = seed(srv, "created")
    pod(srv, created, rank=0, phase="Running")
    pod(srv, created, rank=1, phase="Pending")  # 1 of 2 trainer pods: still Created
    running = seed(srv, "running")
    pod(srv, running, rank=0)
    pod(srv, running, rank=1, phase="Succeeded")  # Running or Succeeded count
    seed(srv, "suspended", suspend=True)
    seed(srv, "complete")
    srv.set_status("jobsets", "complete", {"conditions": [COMPLETED], "terminalState": "Completed"})
    seed(srv, "failed")
    srv.set_status("jobsets", "failed", {"conditions": [FAILED], "terminalState": "Failed"})

    r = cli("job", "list", "--kubeconfig", kc)

    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "RUNTIME", "NODES", "STATE", "AGE", "PROGRESS", "ETA"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert {name: row[3] for name, row in rows.items()} == {
        "complete": "Complete",
        "created": "Created",
        "failed": "Failed",
        "running": "Running",
        "suspended": "Suspended",
    }
    assert rows["running"][1:3] == ["-", "2"]  # ktrain's JobSets carry no runtime name
    assert rows["running"][4].endswith("s")  # AGE, kubectl style


def test_list_shows_a_trainjob_once_with_its_runtime_and_skips_foreign_jobsets(srv, kc, cli) -> None:
    trainjob = srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "tj", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 3}},
        }
    )
    owned = seed(srv, "tj", nodes=3)
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "name": "tj",
            "uid": trainjob["metadata"]["uid"],
            "controller": True,
        }
    ]
    srv.put_object(owned)
    srv.put_object(
        {
            "apiVersion": c.JOBSET_API_VERSION,
            "kind": "JobSet",
            "metadata": {"name": "not-training", "namespace": "default"},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "web",
                        "template": {
                            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
                        },
                    }
                ]
            },
        }
    )

    r = cli("job", "list", "--kubeconfig", kc, "-o", "wide")

    assert r.exit_code == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert [row[:5] for row in rows] == [["tj", "torch-distributed", "3", "Created", rows[0][4]]]
    assert rows[0][5:9] == ["-", "-", "TrainJob", "0/3"]  # no progress reported: PROGRESS and ETA are -


def test_list_all_namespaces_adds_the_namespace_column(srv, kc, cli) -> None:
    srv.add_namespace("team-b")
    seed(srv, "here")
    seed(srv, "there", namespace="team-b")

    mine = cli("job", "list", "--kubeconfig", kc)
    every = cli("job", "list", "--kubeconfig", kc, "-A")
    other = cli("job", "list", "--kubeconfig", kc, "-n", "team-b", "-o", "name")

    assert [line.split()[0] for line in mine.stdout.splitlines()[1:]] == ["here"]
    assert every.stdout.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert [line.split()[:2] for line in every.stdout.splitlines()[1:]] == [["default", "here"], ["team-b", "there"]]
    assert other.stdout == "jobset.jobset.x-k8s.io/there\n"


def test_list_selector_and_name_output_for_completion(srv, kc, cli) -> None:
    seed(srv, "nlp-1", labels={"team": "nlp"})
    seed(srv, "vision-1", labels={"team": "vision"})
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "nlp-2", "namespace": "default", "labels": {"team": "nlp"}},
            "spec": {"runtimeRef": {"name": "torch-distributed"}},
        }
    )

    r = cli("job", "list", "--kubeconfig", kc, "-l", "team=nlp", "-o", "name")

    assert r.exit_code == 0, r.stderr
    assert r.stdout == "jobset.jobset.x-k8s.io/nlp-1\ntrainjob.trainer.kubeflow.org/nlp-2\n"


def test_list_json_is_a_kubectl_list_of_the_objects(srv, kc, cli) -> None:
    seed(srv, "demo")
    r = cli("job", "list", "--kubeconfig", kc, "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["kind"] == "List" and [i["metadata"]["name"] for i in doc["items"]] == ["demo"]
    assert doc["items"][0]["kind"] == "JobSet"


def test_list_in_an_empty_namespace_says_so_on_stderr(srv, kc, cli) -> None:
    r = cli("job", "list", "--kubeconfig", kc)
    assert (r.exit_code, r.stdout) == (0, "")
    assert r.stderr == "No training jobs found in namespace default.\n"


def test_server_down_is_a_one_line_cluster_error(srv, kc, cli) -> None:
    srv.stop()
    r = cli("job", "list", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.CLUSTER
    assert r.stderr.startswith("error: cannot reach the API server at http://127.0.0.1:")
    assert "connection refused" in r.stderr and "Traceback" not in r.stderr


def test_forbidden_list_names_the_resource_and_what_to_do(srv, kc, cli) -> None:
    srv.forbid("list", "jobsets")
    r = cli("job", "list", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.CLUSTER
    # the server's message once (it names the resource), and a hint for a read (issue #19)
    assert r.stderr.startswith("error: jobsets.jobset.x-k8s.io is forbidden: User ")
    assert r.stderr.count("forbidden") == 1
    assert "hint: ask a cluster admin for read access (RBAC), or look in another namespace (-n)" in r.stderr


def test_trainjobs_we_may_not_list_leave_the_jobsets_listed_with_a_warning(srv, kc, cli) -> None:
    seed(srv, "visible")
    srv.forbid("list", "trainjobs")
    r = cli("job", "list", "--kubeconfig", kc, "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "jobset.jobset.x-k8s.io/visible\n"
    assert r.stderr.startswith("warning: trainjobs.trainer.kubeflow.org is forbidden: ")
    assert "showing JobSets only" in r.stderr


def test_a_slow_server_times_out_with_the_request_timeout(srv, kc, cli) -> None:
    srv.slow(2.0, verb="list", resource="jobsets")
    r = cli("job", "list", "--kubeconfig", kc, "--request-timeout", "0.3")
    assert r.exit_code == ExitCode.CLUSTER
    assert "did not answer within 0.3s" in r.stderr


def test_list_without_trainer_crds_shows_jobsets_and_without_jobset_says_what_to_install(tmp_path, cli) -> None:
    with ApiServerDouble(crds={"jobset"}) as plain:
        seed(plain, "demo")
        r = cli("job", "list", "--kubeconfig", str(plain.write_kubeconfig(tmp_path / "a")), "-o", "name")
    with ApiServerDouble(crds={"trainer"}) as bare:
        missing = cli("job", "list", "--kubeconfig", str(bare.write_kubeconfig(tmp_path / "b")))
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/demo\n")
    assert missing.exit_code == ExitCode.CLUSTER
    assert "does not serve JobSets" in missing.stderr and "install JobSet" in missing.stderr


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


# --- logs -----------------------------------------------------------------------------------------


def test_logs_default_to_rank_0_of_the_node_step(srv, kc, cli) -> None:
    js = seed(srv, "demo")
    p0, p1 = pod(srv, js, rank=0), pod(srv, js, rank=1)
    srv.append_log(p0["metadata"]["name"], "rank0 line1\nrank0 line2\n")
    srv.append_log(p1["metadata"]["name"], "rank1 line\n")

    default = cli("job", "logs", "demo", "--kubeconfig", kc)
    second = cli("job", "logs", "demo", "--kubeconfig", kc, "--node", "1")
    tail = cli("job", "logs", "demo", "--kubeconfig", kc, "--tail", "1", "--timestamps")

    assert (default.exit_code, default.stdout) == (0, "rank0 line1\nrank0 line2\n")
    assert second.stdout == "rank1 line\n"
    stamp, _, text = tail.stdout.partition(" ")
    assert text == "rank0 line2\n" and stamp.endswith("Z")


def test_logs_of_mpi_default_to_the_launcher(srv, kc, cli) -> None:
    js = seed(srv, "mpi", runtime="deepspeed-distributed", nodes=2)
    launcher, node = pod(srv, js, rjob="launcher"), pod(srv, js, rjob="node")
    srv.append_log(launcher["metadata"]["name"], "mpirun: all ranks\n")
    srv.append_log(node["metadata"]["name"], "sshd\n")

    assert cli("job", "logs", "mpi", "--kubeconfig", kc).stdout == "mpirun: all ranks\n"
    assert cli("job", "logs", "mpi", "--kubeconfig", kc, "--step", "node").stdout == "sshd\n"


def test_logs_step_selects_an_initializer_and_all_prefixes_every_pod(srv, kc, cli) -> None:
    js = seed(srv, "demo", nodes=2)
    init = pod(srv, js, rjob="dataset-initializer", containers=["dataset-initializer"])
    p0, p1 = pod(srv, js, rank=0), pod(srv, js, rank=1)
    srv.append_log(init["metadata"]["name"], "downloaded\n")
    srv.append_log(p0["metadata"]["name"], "a\n")
    srv.append_log(p1["metadata"]["name"], "b\n")

    step = cli("job", "logs", "demo", "--kubeconfig", kc, "--step", "dataset-initializer")
    every = cli("job", "logs", "demo", "--kubeconfig", kc, "--all")

    assert step.stdout == "downloaded\n"
    assert every.stdout == "[dataset-initializer-0] downloaded\n[node-0] a\n[node-1] b\n"


def test_logs_of_a_pending_pod_say_why_instead_of_an_http_error(srv, kc, cli) -> None:
    js = seed(srv, "demo")
    p0 = pod(srv, js, rank=0, phase="Pending")
    set_pod_status(srv, p0["metadata"]["name"], unschedulable)

    r = cli("job", "logs", "demo", "--kubeconfig", kc)

    assert r.exit_code == ExitCode.ERROR
    assert r.stderr.splitlines()[0] == (
        "error: pod demo-node-0-0-x1 (node rank 0) is Pending: Unschedulable - 0/3 nodes are available: "
        "3 Insufficient nvidia.com/gpu.; it has no logs yet"
    )
    assert "-f" in r.stderr and "400" not in r.stderr


def test_logs_previous_shows_the_earlier_run(srv, kc, cli) -> None:
    js = seed(srv, "demo")
    p0 = pod(srv, js, rank=0)
    name = p0["metadata"]["name"]
    srv.append_log(name, "first run\n")
    set_pod_status(srv, name, crash)
    restart(srv, name)
    srv.append_log(name, "second run\n")

    assert cli("job", "logs", "demo", "--kubeconfig", kc, "--previous").stdout == "first run\n"
    assert cli("job", "logs", "demo", "--kubeconfig", kc).stdout == "second run\n"
    p1 = pod(srv, js, rank=1)
    never = cli("job", "logs", "demo", "--kubeconfig", kc, "--node", "1", "-p")
    assert never.exit_code == ExitCode.ERROR and "has not restarted" in never.stderr
    assert p1 is not None


def test_logs_no_such_rank_lists_the_pods(srv, kc, cli) -> None:
    js = seed(srv, "demo")
    pod(srv, js, rank=0)
    r = cli("job", "logs", "demo", "--kubeconfig", kc, "--node", "7")
    assert r.exit_code == ExitCode.NOT_FOUND
    assert "no pod for step node rank 7 (pods: node 0)" in r.stderr


def test_logs_unknown_job_and_bad_step(srv, kc, cli) -> None:
    missing = cli("job", "logs", "ghost", "--kubeconfig", kc)
    bad = cli("job", "logs", "ghost", "--kubeconfig", kc, "--step", "trainer")
    assert missing.exit_code == ExitCode.NOT_FOUND and 'job "ghost" not found' in missing.stderr
    assert bad.exit_code == ExitCode.USAGE and "--step 'trainer'" in bad.stderr


def test_follow_waits_for_a_pod_that_starts_later_and_survives_a_restart(srv, kc, cli) -> None:
    js = seed(srv, "demo", nodes=1)
    name = "demo-node-0-0-x1"

    def finish() -> None:
        srv.append_log(name, "done\n")
        srv.terminate_container(name)
        srv.set_status("jobsets", "demo", {"conditions": [COMPLETED], "terminalState": "Completed"})

    worker = later(
        lambda: pod(srv, js, rank=0, phase="Pending"),
        lambda: (set_pod_status(srv, name, start), srv.append_log(name, "epoch 1\n")),
        lambda: srv.append_log(name, "epoch 2\n"),
        lambda: set_pod_status(srv, name, crash),
        lambda: (restart(srv, name), srv.append_log(name, "resumed from checkpoint\n")),
        finish,
        srv=srv,
    )
    r = cli("job", "logs", "demo", "--kubeconfig", kc, "-f")
    worker.join()

    assert r.exit_code == 0, r.stderr
    assert r.stdout == "epoch 1\nepoch 2\nresumed from checkpoint\ndone\n"
    assert "waiting for the pods of job demo" in r.stderr
    assert "is Pending" in r.stderr and "waiting for it to start" in r.stderr
    assert "restarted" in r.stderr


def test_follow_all_picks_up_pods_recreated_after_a_jobset_restart(srv, kc, cli) -> None:
    js = seed(srv, "demo", nodes=1)
    first = pod(srv, js, rank=0, suffix="aaaaa")["metadata"]["name"]
    srv.append_log(first, "attempt 1\n")

    def fail_first() -> None:
        srv.terminate_container(first, exit_code=1)

    def recreate() -> None:
        second = pod(srv, js, rank=0, suffix="bbbbb")["metadata"]["name"]
        srv.append_log(second, "attempt 2\n")

    def finish() -> None:
        srv.terminate_container("demo-node-0-0-bbbbb")
        srv.set_status("jobsets", "demo", {"conditions": [COMPLETED]})

    worker = later(fail_first, recreate, finish, srv=srv)
    r = cli("job", "logs", "demo", "--kubeconfig", kc, "-f", "--all")
    worker.join()

    assert r.exit_code == 0, r.stderr
    assert r.stdout == "[node-0] attempt 1\n[node-0] attempt 2\n"


def test_follow_of_a_finished_job_prints_and_returns(srv, kc, cli) -> None:
    js = seed(srv, "demo", nodes=1)
    p0 = pod(srv, js, rank=0)["metadata"]["name"]
    srv.append_log(p0, "all done\n")
    srv.terminate_container(p0)
    srv.set_status("jobsets", "demo", {"conditions": [COMPLETED]})
    r = cli("job", "logs", "demo", "--kubeconfig", kc, "-f")
    assert (r.exit_code, r.stdout) == (0, "all done\n")


# --- wait -----------------------------------------------------------------------------------------


def test_wait_for_complete_returns_when_the_job_completes(srv, kc, cli) -> None:
    seed(srv, "demo")
    worker = later(lambda: srv.set_status("jobsets", "demo", {"conditions": [COMPLETED]}), srv=srv)
    r = cli("job", "wait", "demo", "--kubeconfig", kc, "--for", "complete", "--timeout", "10s")
    worker.join()
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/demo complete\n")


def test_wait_for_running_counts_trainer_pods(srv, kc, cli) -> None:
    js = seed(srv, "demo", nodes=2)
    pod(srv, js, rank=0)
    worker = later(lambda: pod(srv, js, rank=1), srv=srv)
    r = cli("job", "wait", "demo", "--kubeconfig", kc, "--for", "running", "--timeout", "10s")
    worker.join()
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/demo running\n")


def test_wait_for_complete_on_a_failed_job_exits_1_with_the_reason(srv, kc, cli) -> None:
    seed(srv, "demo")
    srv.set_status("jobsets", "demo", {"conditions": [FAILED]})
    r = cli("job", "wait", "demo", "--kubeconfig", kc, "--for", "complete")
    assert r.exit_code == 1
    assert r.stderr == (
        "error: job demo is Failed, it will not become Complete "
        "(FailedJobs: jobset failed due to one or more job failures)\n"
    )


def test_wait_for_failed_succeeds_on_a_failed_job(srv, kc, cli) -> None:
    seed(srv, "demo")
    srv.set_status("jobsets", "demo", {"conditions": [FAILED]})
    assert cli("job", "wait", "demo", "--kubeconfig", kc, "--for", "failed").exit_code == 0


def test_wait_timeout_has_its_own_exit_code(srv, kc, cli) -> None:
    seed(srv, "demo")
    started = time.monotonic()
    r = cli("job", "wait", "demo", "--kubeconfig", kc, "--timeout", "300ms")
    assert r.exit_code == ExitCode.TIMEOUT == 124
    assert time.monotonic() - started < 5
    assert r.stderr == "error: timed out after 0.3s waiting for job demo to be Complete (it is Created)\n"


def test_wait_ends_when_the_job_is_deleted(srv, kc, cli) -> None:
    seed(srv, "demo")
    worker = later(lambda: srv.delete_object("jobsets", "demo", group="jobset.x-k8s.io"), srv=srv)
    r = cli("job", "wait", "demo", "--kubeconfig", kc, "--timeout", "10s")
    worker.join()
    assert r.exit_code == ExitCode.NOT_FOUND and 'job "demo" not found' in r.stderr


def test_wait_bad_arguments_and_unknown_job(srv, kc, cli) -> None:
    assert cli("job", "wait", "demo", "--kubeconfig", kc, "--for", "done").exit_code == ExitCode.USAGE
    assert cli("job", "wait", "demo", "--kubeconfig", kc, "--timeout", "soon").exit_code == ExitCode.USAGE
    assert cli("job", "wait", "demo", "--kubeconfig", kc).exit_code == ExitCode.NOT_FOUND


# --- formatting helpers ---------------------------------------------------------------------------


def test_all_prefixes_are_coloured_per_pod_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from ktrain.cli.commands.job_logs import LogPrinter
    from ktrain.cluster.job_state import PodSummary

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    rank0 = PodSummary(name="a", step="node", rank=0, phase="Running", node=None, restarts=0)
    rank1 = PodSummary(name="b", step="node", rank=1, phase="Running", node=None, restarts=0)
    for stream, coloured in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stdout", stream)
        printer = LogPrinter(prefixed=True)
        printer.emit(rank0, "x")
        printer.emit(rank1, "y")
        printer.emit(rank0, "z")
        monkeypatch.undo()
        lines = stream.getvalue().splitlines()
        if coloured:
            assert lines[0] == "\x1b[36m[node-0]\x1b[0m x" and lines[1] == "\x1b[33m[node-1]\x1b[0m y"
            assert lines[2].startswith("\x1b[36m")  # one colour per pod
        else:
            assert lines == ["[node-0] x", "[node-1] y", "[node-0] z"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("30s", 30), ("10m", 600), ("1h30m", 5400), ("500ms", 0.5), ("2d", 172800)]
)
def test_durations_read_like_kubectl(text: str, seconds: float) -> None:
    from ktrain.cli.common import parse_duration

    assert parse_duration(text, "--timeout") == seconds


def test_since_limits_the_lines_by_age(srv, kc, cli) -> None:
    import datetime as dt

    js = seed(srv, "demo", nodes=1)
    name = pod(srv, js)["metadata"]["name"]
    old = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)
    srv.append_log(name, "old line\n", timestamp=old)
    srv.append_log(name, "new line\n")
    assert cli("job", "logs", "demo", "--kubeconfig", kc, "--since", "1h").stdout == "new line\n"
    assert cli("job", "logs", "demo", "--kubeconfig", kc).stdout == "old line\nnew line\n"
    assert cli("job", "logs", "demo", "--kubeconfig", kc, "--since", "soon").exit_code == ExitCode.USAGE


def owned_by_trainjob(srv: ApiServerDouble, name: str, runtime: str, nodes: int, conditions: list[JSON]) -> JSON:
    trainjob = srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"runtimeRef": {"name": runtime}, "trainer": {"numNodes": nodes}},
        }
    )
    srv.set_status("trainjobs", name, {"conditions": conditions})
    jobset = seed(srv, name, nodes=nodes)
    jobset["metadata"]["ownerReferences"] = [
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "name": name,
            "uid": trainjob["metadata"]["uid"],
            "controller": True,
        }
    ]
    return srv.put_object(jobset)


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


def test_logs_container_flag_and_default_container(srv, kc, cli) -> None:
    js = seed(srv, "demo", nodes=1)
    name = pod(srv, js, containers=["sidecar", "node"])["metadata"]["name"]
    srv.append_log(name, "trainer\n", container="node")
    srv.append_log(name, "proxy\n", container="sidecar")

    assert cli("job", "logs", "demo", "--kubeconfig", kc).stdout == "trainer\n"
    assert cli("job", "logs", "demo", "--kubeconfig", kc, "-c", "sidecar").stdout == "proxy\n"
    bad = cli("job", "logs", "demo", "--kubeconfig", kc, "-c", "nope")
    assert bad.exit_code == ExitCode.USAGE
    assert "has no container 'nope' (containers: sidecar, node)" in bad.stderr


def test_pods_listed_after_a_read_that_missed_their_jobset_wait_for_it(srv, kc, cli, monkeypatch) -> None:
    """The race behind a flaky run: the follower reads the TrainJob (no JobSet yet), the controller
    creates the JobSet and its pods, then the follower lists pods. It must not pick the `node`
    step for an MPI job whose JobSet it has not seen: the next look decides (the launcher)."""
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "mpi", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}},
        }
    )
    js = seed(srv, "mpi", runtime="deepspeed-distributed", nodes=2)
    for rjob, text in (("node", "sshd listening\n"), ("launcher", "mpirun: rank 0 and 1 done\n")):
        srv.append_log(pod(srv, js, rjob=rjob, phase="Succeeded")["metadata"]["name"], text)
    real_find_job = observe.find_job
    looks = []

    def first_look_misses_the_jobset(*args: Any, **kwargs: Any) -> Any:
        trainjob, jobset = real_find_job(*args, **kwargs)
        looks.append(jobset is not None)
        return (trainjob, None) if len(looks) <= 2 else (trainjob, jobset)  # the command's look, the first poll

    monkeypatch.setattr(observe, "find_job", first_look_misses_the_jobset)
    srv.set_status("trainjobs", "mpi", {"conditions": [{"type": "Complete", "status": "True", "reason": "Done"}]})
    r = cli("job", "logs", "mpi", "--kubeconfig", kc, "-f")
    assert (r.exit_code, r.stdout) == (0, "mpirun: rank 0 and 1 done\n"), r.stderr
    assert len(looks) >= 3


def test_follow_of_a_trainjob_picks_the_launcher_once_its_jobset_appears(srv, kc, cli) -> None:
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "mpi", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}},
        }
    )
    complete = {
        "type": "Complete",
        "status": "True",
        "reason": "AllJobsCompleted",
        "message": "done",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }

    def controller_creates_the_jobset() -> None:
        js = seed(srv, "mpi", runtime="deepspeed-distributed", nodes=2)
        srv.append_log(pod(srv, js, rjob="node")["metadata"]["name"], "sshd listening\n")
        srv.append_log(pod(srv, js, rjob="launcher")["metadata"]["name"], "mpirun: rank 0 and 1 done\n")

    def training_ends() -> None:
        srv.terminate_container("mpi-launcher-0-0-x1")
        srv.terminate_container("mpi-node-0-0-x1")
        srv.set_status("trainjobs", "mpi", {"conditions": [complete]})

    worker = later(controller_creates_the_jobset, training_ends, srv=srv)
    r = cli("job", "logs", "mpi", "--kubeconfig", kc, "-f")
    worker.join()
    assert (r.exit_code, r.stdout) == (0, "mpirun: rank 0 and 1 done\n")
