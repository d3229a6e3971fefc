"""Every cluster command against a hostile server (issue #25), through both transports: broken
HTTP, slow answers, JSON of the wrong shape, server text holding terminal escapes, TLS where none
is expected. Each run must end in one clear error with the cluster's exit code: never an internal
error, never exit 0 on garbage, never past its deadline by more than a second, never a terminal
escape from the server on the user's screen. (Memory: tests/cli/test_hostile_memory.py.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from apiserver.hostile import HUGE, SCENARIOS, SLOW, HostileServer, json_answer, raw

from ktrain.errors import ExitCode

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

DEADLINE = 1.0  # --request-timeout of every run
COMMANDS = {
    "job list": ["job", "list"],
    "job get": ["job", "get", "x"],
    "job logs": ["job", "logs", "x"],
    "job delete": ["job", "delete", "x", "--yes"],
}
# The other cluster commands, against the scenarios that fail at once (the slow ones cost a
# deadline each and test the same transport code).
MORE_COMMANDS = {
    "job list -A": ["job", "list", "-A"],
    "job wait": ["job", "wait", "x", "--timeout", "5s"],
    "job suspend": ["job", "suspend", "x"],
    "job logs -f": ["job", "logs", "x", "-f"],
    "runtime list": ["runtime", "list", "--source", "cluster"],
    "runtime show": ["runtime", "show", "torch-distributed", "--source", "cluster"],
    "job create": ["job", "create", "--runtime", "torch-distributed", "--name", "x"],
    "job create --dry-run server": [
        "job",
        "create",
        "--runtime",
        "torch-distributed",
        "--name",
        "x",
        "--dry-run",
        "server",
    ],
}


@pytest.fixture(autouse=True)
def _client_imported(kube_transport: str) -> None:
    """The kubernetes client's import (0.3-0.5 s, once per process) is not a run's time."""
    if kube_transport == "kubernetes":
        import kubernetes.client  # noqa: F401


def run_against(cli, tmp_path: Path, srv: HostileServer, args: list[str], **kubeconfig) -> tuple[object, float]:  # type: ignore[no-untyped-def]
    kc = srv.write_kubeconfig(tmp_path / "kc", **kubeconfig)
    started = time.monotonic()
    result = cli(*args, "--kubeconfig", str(kc), "--request-timeout", str(DEADLINE))
    return result, time.monotonic() - started


def assert_one_clear_error(result, took: float) -> None:  # type: ignore[no-untyped-def]
    out = result.stdout + result.stderr
    assert result.exit_code == ExitCode.CLUSTER, (result.exit_code, result.stdout, result.stderr)
    assert result.stderr.startswith("error: "), result.stderr
    assert "internal error" not in out and "Traceback" not in out, result.stderr
    assert "\x1b" not in out and "\x07" not in out, result.stderr
    assert took <= DEADLINE + 1.0, (took, result.stderr)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s not in HUGE])
def test_the_four_read_and_delete_commands_answer_garbage_with_one_clear_error(
    cli, tmp_path, scenario, command
) -> None:
    with HostileServer(SCENARIOS[scenario]) as srv:
        result, took = run_against(cli, tmp_path, srv, COMMANDS[command])
    assert_one_clear_error(result, took)


@pytest.mark.parametrize("command", list(MORE_COMMANDS))
@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s not in HUGE and s not in SLOW])
def test_every_other_cluster_command_too(cli, tmp_path, scenario, command) -> None:
    with HostileServer(SCENARIOS[scenario]) as srv:
        result, took = run_against(cli, tmp_path, srv, MORE_COMMANDS[command])
    assert_one_clear_error(result, took)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("mismatch", ["tls-to-plain", "plain-to-tls", "other-ca"])
def test_tls_mismatches_are_clear_errors(cli, tmp_path, mismatch, command) -> None:
    scenario = json_answer({"kind": "JobSetList", "items": []})
    with HostileServer(scenario, tls=mismatch != "tls-to-plain") as srv:
        kubeconfig: dict = {}
        if mismatch == "tls-to-plain":
            kubeconfig["scheme"] = "https"
        elif mismatch == "plain-to-tls":
            kubeconfig["scheme"] = "http"
        else:
            kubeconfig["ca"] = _other_ca()
        result, took = run_against(cli, tmp_path, srv, COMMANDS[command], **kubeconfig)
    assert_one_clear_error(result, took)


def _other_ca() -> bytes:
    from apiserver.tls import Authority

    return Authority("another-ca").ca_pem


def test_a_get_answered_with_a_non_object_never_makes_up_a_job(cli, tmp_path) -> None:
    for body in (5, [], "x", None, {"kind": "ConfigMap", "metadata": {"name": "x"}}):
        with HostileServer(json_answer(body)) as srv:
            result, _ = run_against(cli, tmp_path, srv, ["job", "get", "x"])
        assert result.exit_code == ExitCode.CLUSTER, (body, result.stdout)
        assert result.stdout == "" and "State" not in result.stdout
        assert "not a TrainJob" in result.stderr or "not a JobSet" in result.stderr, result.stderr


def test_the_message_says_what_was_asked_and_what_came_back(cli, tmp_path) -> None:
    with HostileServer(SCENARIOS["status-superscript-digits"]) as srv:
        result, _ = run_against(cli, tmp_path, srv, ["job", "list"])
    assert "answered jobsets.jobset.x-k8s.io in team-a with a broken HTTP answer (not an HTTP/1.x status line)" in (
        result.stderr
    )
    with HostileServer(SCENARIOS["drip-head"]) as srv:
        result, _ = run_against(cli, tmp_path, srv, ["job", "list"])
    assert f"did not answer within {DEADLINE:g}s (jobsets.jobset.x-k8s.io in team-a)" in result.stderr


def test_server_text_is_printed_with_its_escapes_visible(cli, tmp_path) -> None:
    with HostileServer(SCENARIOS["status-with-escapes"]) as srv:
        result, _ = run_against(cli, tmp_path, srv, ["job", "get", "x"])
    assert "boom \\x1b[2J\\x1b]0;pwned\\x07 boom" in result.stderr


def test_names_from_the_server_are_printed_escaped_in_tables(cli, tmp_path) -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": "evil\x1b[2J",
            "namespace": "team-a",
            "annotations": {"ktrain.io/runtime": "r\x1b]0;x\x07"},
        },
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "replicas": 1,
                    "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}},
                }
            ]
        },
        "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "X\x1b[31m", "message": "m\x9b2J"}]},
    }

    def answer(request):  # type: ignore[no-untyped-def]
        if "/jobsets" in request.path:
            return raw_list([jobset])(request)
        return raw_list([])(request)

    with HostileServer(answer) as srv:
        result, _ = run_against(cli, tmp_path, srv, ["job", "list", "-o", "wide"])
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x9b" not in result.stdout and "\x07" not in result.stdout
    assert "evil\\x1b[2J" in result.stdout


def raw_list(items: list) -> object:
    import json

    body = json.dumps({"kind": "List", "metadata": {}, "items": items}).encode()
    return raw(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body, close=False)


@pytest.mark.parametrize("interim", [b"HTTP/1.1 103 Early Hints\r\n\r\n", b"HTTP/1.1 100 Continue\r\n\r\n"])
def test_more_than_five_interim_answers_are_refused_and_five_are_not(
    cli, tmp_path, kube_transport, interim: bytes
) -> None:
    """Go's client (kubectl) allows 5; http.client (under urllib3 too) skips any number of 100s
    and takes a 103 as the final answer: both transports read answers through ktrain's checks."""
    body = b'{"kind": "JobSetList", "items": []}'
    ok = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    with HostileServer(raw(interim * 5 + ok, close=False)) as srv:
        five, _ = run_against(cli, tmp_path, srv, ["job", "list"])
    assert five.exit_code == 0, five.stderr
    with HostileServer(raw(interim * 6 + ok)) as srv:
        six, _ = run_against(cli, tmp_path, srv, ["job", "list"])
    assert six.exit_code == ExitCode.CLUSTER and "more than 5 interim (1xx) answers" in six.stderr


def test_a_stream_has_no_total_deadline_but_an_idle_limit(tmp_path, kube_transport) -> None:
    """A log follow or watch may last for ever (exempt from --request-timeout), but a stream that
    goes silent is cut after the idle limit: here a chunk every 0.3 s for 2 s outlives a 1 s
    deadline, and then 1 s of silence ends it."""
    from apiserver.hostile import CLOSE

    from ktrain.cluster import client as k
    from ktrain.cluster.connection import ConnectionOptions
    from ktrain.cluster.kube import connect
    from ktrain.cluster.transport import TransportError

    def trickle(_):  # type: ignore[no-untyped-def]
        yield b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in range(7):
            yield b"2\r\nx\n\r\n"
            yield 0.3
        yield 5.0  # silence
        yield CLOSE

    with HostileServer(trickle) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        cluster = connect(ConnectionOptions(kubeconfig=str(kc), request_timeout=1.0))
        started = time.monotonic()
        response = k.open_get(cluster, "/api/v1/namespaces/team-a/pods/p/log", _request_timeout=(1.0, 1.0))
        got = b""
        with pytest.raises(TransportError) as info:
            for piece in response.chunks(4096):
                got += piece
        took = time.monotonic() - started
    assert got == b"x\n" * 7
    assert info.value.kind == "read-timeout"
    assert 2.0 < took < 2.1 + 1.0 + 1.0, took
