"""`ktrain job wait` through the CLI, against the API-server double; its deadline bounds every
request it makes, against a stalling server too (issue #37 item 10b)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from apiserver.hostile import SCENARIOS, HostileServer
from cli import jobs_double
from cli.jobs_double import COMPLETED, FAILED, later, pod, seed

from ktrain.errors import ExitCode

# Both HTTP clients (conftest); the API-server double (conftest `srv`); fast polling.
# The API-server double and its kubeconfig, and fast polling (tests/cli/jobs_double.py).
srv, kc, fast_polling = jobs_double.srv, jobs_double.kc, jobs_double.fast_polling
pytestmark = [pytest.mark.both_transports, pytest.mark.double, pytest.mark.usefixtures("fast_polling")]


@pytest.fixture(autouse=True)
def _client_imported(kube_transport: str) -> None:
    """The kubernetes client's import (0.3-0.5 s, once per process) is not a run's time."""
    if kube_transport == "kubernetes":
        import kubernetes.client  # noqa: F401


@pytest.mark.parametrize("scenario", ["silent", "drip-head"])
def test_wait_timeout_bounds_the_request_in_flight_against_a_stalling_server(cli, tmp_path: Path, scenario) -> None:
    """`--timeout 2s` with the default 30 s request timeout: the wait ends at its deadline (exit
    124, the wait's own message), not when the stalled request's 30 s run out."""
    with HostileServer(SCENARIOS[scenario]) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        started = time.monotonic()
        r = cli("job", "wait", "x", "--timeout", "2s", "--kubeconfig", str(kc))
        took = time.monotonic() - started
    assert r.exit_code == ExitCode.TIMEOUT, r.stderr
    assert r.stderr.startswith("error: timed out after 2s waiting for job x to be Complete"), r.stderr
    assert "did not answer in time" in r.stderr
    assert took < 2 + 1.5, took


def test_wait_without_timeout_keeps_the_request_timeout(cli, tmp_path: Path) -> None:
    """No --timeout: a stalled request ends at --request-timeout, as a cluster error (exit 5)."""
    with HostileServer(SCENARIOS["silent"]) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        started = time.monotonic()
        r = cli("job", "wait", "x", "--kubeconfig", str(kc), "--request-timeout", "1")
        took = time.monotonic() - started
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "did not answer within 1s" in r.stderr, r.stderr
    assert took < 1 + 1.5, took


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


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("30s", 30), ("10m", 600), ("1h30m", 5400), ("500ms", 0.5), ("2d", 172800)]
)
def test_durations_read_like_kubectl(text: str, seconds: float) -> None:
    from ktrain.cli.common import parse_duration

    assert parse_duration(text, "--timeout") == seconds
