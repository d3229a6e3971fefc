"""What ktrain sends to a cluster, at the edge: names and namespaces checked with the API server's
own rules before any request (issue #12 item 1), and log reads that a real kube-apiserver serves
(issue #18), against the API-server double."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster import names, reads
from ktrain.errors import ExitCode, InternalError
from ktrain.service.connection import ConnectionOptions, connect

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

TRAVERSAL_NS = "../../../../api/v1/namespaces/default/configmaps/victim#"
TRAVERSAL_NAME = "../../../../api/v1/namespaces/default/configmaps/victim#"
LABEL_RULE = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"
SUBDOMAIN_RULE = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
LOG_ACCEPT = "application/json, */*"


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        double.put_object(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "victim", "namespace": "default"}}
        )
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "POLL_INTERVAL", 0.05)


def victim_intact(srv: ApiServerDouble) -> bool:
    return srv.get_object("configmaps", "victim", "default") is not None


# --- names and namespaces (issue #12 item 1) -------------------------------------------------------


def test_namespace_with_path_traversal_is_refused_before_any_request(srv, kc, cli) -> None:
    r = cli("job", "delete", "x", "-n", TRAVERSAL_NS, "--yes", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.USAGE, r.stderr
    assert r.stderr.startswith(f'error: invalid namespace "{TRAVERSAL_NS}": {LABEL_RULE}')
    assert "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'" in r.stderr
    assert "deleted" not in r.stdout and "Traceback" not in r.stderr
    assert victim_intact(srv)
    assert srv.requests == []


@pytest.mark.parametrize(
    "command",
    [
        ["job", "get", "x"],
        ["job", "list"],
        ["job", "logs", "x"],
        ["job", "logs", "x", "-f"],
        ["job", "wait", "x", "--timeout", "1s"],
        ["job", "delete", "x", "--yes"],
        ["job", "delete", "--all", "--yes"],
        ["job", "create", "--runtime", "torch-distributed", "--name", "x"],
        ["job", "create", "--runtime", "torch-distributed", "--name", "x", "--dry-run", "server"],
        ["runtime", "show", "torch-distributed", "--source", "cluster"],
        ["runtime", "list", "--source", "cluster"],
    ],
    ids=lambda cmd: " ".join(cmd[:3]),
)
@pytest.mark.parametrize("namespace", [TRAVERSAL_NS, "Team_A", "a/b", "..", "x" * 64])
def test_every_cluster_command_refuses_a_bad_namespace_before_any_request(srv, kc, cli, command, namespace) -> None:
    r = cli(*command, "-n", namespace, "--kubeconfig", kc)
    assert r.exit_code == ExitCode.USAGE, (r.exit_code, r.stdout, r.stderr)
    assert f"invalid namespace {names._show(namespace)}" in r.stderr
    assert "Traceback" not in r.stderr
    assert srv.requests == []
    assert victim_intact(srv)


@pytest.mark.parametrize(
    "command",
    [
        ["job", "get"],
        ["job", "logs"],
        ["job", "logs", "-f"],
        ["job", "wait", "--timeout", "1s"],
        ["job", "delete", "--yes"],
    ],
    ids=lambda cmd: " ".join(cmd),
)
@pytest.mark.parametrize("name", [TRAVERSAL_NAME, "a/b", "..", "My_Job", "x%2Fy", "a" * 254])
def test_a_job_name_with_path_traversal_is_refused_before_any_request(srv, kc, cli, command, name) -> None:
    r = cli(*command[:2], name, *command[2:], "--kubeconfig", kc)
    assert r.exit_code == ExitCode.USAGE, (r.exit_code, r.stdout, r.stderr)
    assert r.stderr.startswith("error: invalid job name ")
    assert SUBDOMAIN_RULE in r.stderr or "must be no more than 253 characters" in r.stderr
    assert "Traceback" not in r.stderr
    assert srv.requests == []
    assert victim_intact(srv)


def test_a_bad_namespace_in_the_kubeconfig_context_is_refused_too(srv, tmp_path, cli) -> None:
    kc = srv.write_kubeconfig(tmp_path / "kc", namespace="../x")
    r = cli("job", "list", "--kubeconfig", str(kc))
    assert r.exit_code == ExitCode.USAGE and 'invalid namespace "../x"' in r.stderr
    assert srv.requests == []


def test_a_name_too_long_says_so_in_the_server_words(srv, kc, cli) -> None:
    r = cli("job", "get", "a" * 254, "--kubeconfig", kc)
    assert r.exit_code == ExitCode.USAGE
    assert "must be no more than 253 characters" in r.stderr
    long_ns = cli("job", "get", "x", "-n", "a" * 64, "--kubeconfig", kc)
    assert "must be no more than 63 characters" in long_ns.stderr


def test_a_label_selector_travels_as_one_encoded_query_parameter(srv, kc, cli) -> None:
    selector = "team=a&watch=true#x/../../configmaps"
    listed = cli("job", "list", "-l", selector, "--kubeconfig", kc)
    deleted = cli("job", "delete", "-l", selector, "--yes", "--kubeconfig", kc)
    sent = [req for req in srv.requests if req.param("labelSelector") is not None]
    assert sent, srv.requests
    assert all(req.query["labelSelector"] == [selector] and "watch" not in req.query for req in sent)
    assert all(req.path.endswith(("/jobsets", "/trainjobs")) for req in sent)
    assert listed.exit_code != 0 and deleted.exit_code != 0  # the server refuses that selector (400)
    assert "Traceback" not in listed.stderr + deleted.stderr
    assert victim_intact(srv)


def test_valid_names_and_namespaces_pass_unchanged(srv, kc, cli) -> None:
    srv.add_namespace("team-a")
    r = cli("job", "get", "my.job-1", "-n", "team-a", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.NOT_FOUND
    paths = {req.path for req in srv.requests}
    assert "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/my.job-1" in paths


def test_the_client_refuses_a_path_that_was_not_built_from_checked_names(srv, kc) -> None:
    cluster = connect(ConnectionOptions(kubeconfig=kc))
    for path in ("/api/v1/namespaces/../configmaps/victim", "/api/v1/namespaces/a%2Fb/pods", "/api//v1", "/api/v1/x#y"):
        with pytest.raises(InternalError, match="unchecked path"):
            k.open_get(cluster, path)
    assert srv.requests == []


# --- log reads a real API server serves (issue #18) --------------------------------------------------


def seed_pod(srv: ApiServerDouble, name: str = "demo", rank: int = 0, phase: str = "Running") -> str:
    jobset = srv.put_object(
        {
            "apiVersion": c.JOBSET_API_VERSION,
            "kind": "JobSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {}}]},
        }
    )
    pod_name = f"{name}-node-0-{rank}-abc"
    srv.add_pod(
        pod_name,
        labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
        containers=["node"],
        owner=jobset,
        phase=phase,
    )
    return pod_name


def log_requests(srv: ApiServerDouble) -> list[Any]:
    return [req for req in srv.requests if req.path.endswith("/log")]


def test_every_kind_of_log_read_sends_an_accept_the_real_server_serves(srv, kc, cli) -> None:
    pod = seed_pod(srv)
    srv.append_log(pod, "old\n", timestamp=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2))
    srv.append_log(pod, "line 1\nline 2\n")
    runs = {
        "plain": (["job", "logs", "demo"], "old\nline 1\nline 2\n"),
        "tail": (["job", "logs", "demo", "--tail", "1"], "line 2\n"),
        "since": (["job", "logs", "demo", "--since", "1h"], "line 1\nline 2\n"),
        "all": (["job", "logs", "demo", "--all"], None),
    }
    for what, (args, expected) in runs.items():
        r = cli(*args, "--kubeconfig", kc)
        assert r.exit_code == 0, (what, r.stderr)
        if expected is not None:
            assert r.stdout == expected, what
        else:
            assert r.stdout.count("line 2") == 1, what
    srv.terminate_container(pod)  # restart: --previous reads the earlier run
    srv.set_status(
        "jobsets",
        "demo",
        {"conditions": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted", "message": "done"}]},
    )
    follow = cli("job", "logs", "demo", "-f", "--kubeconfig", kc)
    assert (follow.exit_code, follow.stdout) == (0, "old\nline 1\nline 2\n"), follow.stderr
    srv.append_log(pod, "earlier run\n", previous=True)
    previous = cli("job", "logs", "demo", "--previous", "--kubeconfig", kc)
    assert (previous.exit_code, previous.stdout) == (0, "earlier run\n"), previous.stderr
    sent = log_requests(srv)
    assert len(sent) >= 6
    assert {req.headers.get("Accept") for req in sent} == {LOG_ACCEPT}
    assert any(req.param("follow") == "true" for req in sent)


def test_the_double_refuses_the_accept_ktrain_used_to_send(srv, kc) -> None:
    import urllib3

    pod = seed_pod(srv)
    srv.append_log(pod, "x\n")
    url = f"{srv.url}/api/v1/namespaces/default/pods/{pod}/log"
    refused = urllib3.request("GET", url, headers={"Accept": "text/plain"}, retries=False)
    served = urllib3.request("GET", url, headers={"Accept": LOG_ACCEPT}, retries=False)
    assert refused.status == 406 and served.status == 200 and served.data == b"x\n"


def test_a_406_from_an_odd_server_is_a_clear_error(srv, kc, cli) -> None:
    pod = seed_pod(srv)
    srv.append_log(pod, "x\n")
    srv.inject(
        verb="get",
        resource="pods/log",
        code=406,
        message="only the following media types are accepted: application/x-odd",
    )
    r = cli("job", "logs", "demo", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.CLUSTER
    assert "406 Not Acceptable" in r.stderr and "Accept: application/json, */*" in r.stderr
    assert "application/x-odd" in r.stderr
    assert "Traceback" not in r.stderr


def test_job_create_checks_every_object_name_before_writing_or_asking_discovery(srv, kc, cli, monkeypatch) -> None:
    from ktrain.service import job_create

    real = job_create.create_job

    def renderer_let_a_bad_name_through(cluster: Any, objects: list[Any], **kw: Any) -> Any:
        objects[0]["metadata"]["name"] = "x/../../victim"
        return real(cluster, objects, **kw)

    monkeypatch.setattr(job_create, "create_job", renderer_let_a_bad_name_through)
    r = cli("job", "create", "--runtime", "torch-distributed", "--name", "ok", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.USAGE, r.stderr
    assert 'invalid JobSet name "x/../../victim"' in r.stderr and "Traceback" not in r.stderr
    # only the runtime look-ups that precede create_job went out: no discovery, no write
    assert {(req.method, req.resource.split(".")[0]) for req in srv.requests} <= {
        ("GET", "clustertrainingruntimes"),
        ("GET", "trainingruntimes"),
    }
    assert victim_intact(srv)
