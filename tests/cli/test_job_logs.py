"""`ktrain job logs` through the CLI, against the API-server double (with `-f`: following pods as
they come, restart and go)."""

from __future__ import annotations

from typing import Any

import pytest
from cli import jobs_double
from cli.jobs_double import COMPLETED, crash, later, pod, restart, seed, set_pod_status, start, unschedulable

from ktrain import constants as c
from ktrain.errors import ExitCode
from ktrain.service import job_logs

# Both HTTP clients (conftest); the API-server double (conftest `srv`); fast polling.
# The API-server double and its kubeconfig, and fast polling (tests/cli/jobs_double.py).
srv, kc, fast_polling = jobs_double.srv, jobs_double.kc, jobs_double.fast_polling
pytestmark = [pytest.mark.both_transports, pytest.mark.double, pytest.mark.usefixtures("fast_polling")]


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


def test_logs_read_the_jobset_the_pods_and_the_log_not_the_trainjob(srv, kc, cli) -> None:
    """`kubectl logs POD` makes two requests (the pod, its log); `job logs` three: the JobSet
    (which step is the trainer's), the job's pods, the log. Its TrainJob would tell only the
    state of a job without pods, so it is not read while the JobSet is there (issue #32)."""
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "demo", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}},
        }
    )
    js = seed(srv, "demo")
    srv.append_log(pod(srv, js, rank=0)["metadata"]["name"], "rank0\n")
    srv.clear_requests()

    r = cli("job", "logs", "demo", "--kubeconfig", kc)

    assert (r.exit_code, r.stdout) == (0, "rank0\n"), r.stderr
    jobsets = f"jobsets.{c.JOBSET_GROUP}"
    assert [(q.verb, q.resource) for q in srv.requests] == [("get", jobsets), ("list", "pods"), ("get", "pods/log")]


def test_logs_of_a_job_without_pods_say_the_state_its_trainjob_gives(srv, kc, cli) -> None:
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "held", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "suspend": True},
        }
    )
    seed(srv, "held")  # its JobSet, not suspended itself: only the TrainJob says so

    r = cli("job", "logs", "held", "--kubeconfig", kc)

    assert r.exit_code == ExitCode.ERROR
    assert "job held has no pods yet (state Suspended)" in r.stderr


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


# --- formatting helpers ---------------------------------------------------------------------------


def test_all_prefixes_are_coloured_per_pod_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from ktrain.cli.commands.job_logs import LogPrinter
    from ktrain.jobs.state import PodSummary

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
    real_find_job = job_logs.find_job
    looks = []

    def first_look_misses_the_jobset(*args: Any, **kwargs: Any) -> Any:
        trainjob, jobset = real_find_job(*args, **kwargs)
        looks.append(jobset is not None)
        return (trainjob, None) if len(looks) <= 2 else (trainjob, jobset)  # the command's look, the first poll

    monkeypatch.setattr(job_logs, "find_job", first_look_misses_the_jobset)
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
