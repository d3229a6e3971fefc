"""`ktrain.Client` and `ktrain.train` against the API-server double: the same submission (with
rollback), reads and deletion as the CLI; and `job create --code` through the CLI."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cli.jobs_double import pod

import ktrain
from ktrain import constants as c
from ktrain.errors import ArgumentTypeError, ConflictError, KtrainError, NotFoundError, UsageError
from ktrain.python_api.client import job_name

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"


def train_fn(lr):  # type: ignore[no-untyped-def]
    print("learning rate", lr)  # noqa: T201 - runs in the pod


def _client(kube: Any) -> ktrain.Client:
    return ktrain.Client(kubeconfig=kube.kubeconfig)


def test_train_creates_the_job_with_its_code_and_logs_stream(kube: Any) -> None:
    name = ktrain.train(
        train_fn, runtime="torch-distributed", num_nodes=2, func_args={"lr": 0.1}, name="nb", kubeconfig=kube.kubeconfig
    )
    assert name == "nb"
    jobset = kube.srv.get_object("jobsets", "nb", NS)
    assert jobset is not None and jobset["spec"]["suspend"] is False
    maps = [m for m in kube.srv.objects("configmaps", NS) if m["metadata"]["name"].startswith("nb-code-")]
    assert len(maps) == 1
    assert maps[0]["metadata"]["ownerReferences"][0]["name"] == "nb"  # collected with the JobSet
    assert "train_fn(**{'lr': 0.1})" in next(iter(maps[0]["data"].values()))

    client = _client(kube)
    assert [o["metadata"]["name"] for o in client.list()] == ["nb"]
    assert client.get("nb")["state"] in ("Created", "Running")

    worker = pod(kube.srv, jobset, rank=0)
    kube.srv.append_log(worker["metadata"]["name"], "learning rate 0.1\n", namespace=NS)
    assert list(client.logs("nb")) == ["learning rate 0.1"]

    # follow: a line written later arrives, and the stream ends with the job
    stream = client.logs("nb", follow=True)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.extend(stream), daemon=True)
    reader.start()
    time.sleep(0.5)
    kube.srv.append_log(worker["metadata"]["name"], "epoch 2\n", namespace=NS)
    with kube.srv.cluster.lock:
        stored = kube.srv.get_object("jobsets", "nb", NS)
        stored.setdefault("status", {})["conditions"] = [
            {"type": "Completed", "status": "True", "reason": "AllJobsCompleted", "message": "done"}
        ]
        kube.srv.put_object(stored)
    reader.join(timeout=20)
    assert not reader.is_alive() and got[-1] == "epoch 2"
    assert client.wait("nb", timeout=5) == "Complete"

    client.delete("nb")
    assert kube.srv.get_object("jobsets", "nb", NS) is None
    assert not [m for m in kube.srv.objects("configmaps", NS) if m["metadata"]["name"].startswith("nb-code-")]
    with pytest.raises(NotFoundError):
        client.delete("nb")


def test_a_rerun_is_a_new_job(kube: Any) -> None:
    """The same inputs twice are two jobs, named as the Kubeflow SDK names them (issue #24, item 9);
    a job that names itself (name=, metadata.name) is that one job, and a second is a conflict."""
    import re

    runs = [
        ktrain.train(train_fn, runtime="torch-distributed", func_args={"lr": 0.1}, kubeconfig=kube.kubeconfig)
        for _ in range(2)
    ]
    assert runs[0] != runs[1] and all(re.fullmatch(r"[a-z][0-9a-f]{11}", name) for name in runs)
    assert all(kube.srv.get_object("jobsets", name, NS) is not None for name in runs)
    client = _client(kube)
    created = [client.create(runtime="torch-distributed", command=["torchrun", "t.py"]) for _ in range(2)]
    assert created[0] != created[1]
    client.create(runtime="torch-distributed", name="fixed", command=["torchrun", "t.py"])
    with pytest.raises(ConflictError, match="already exists"):
        client.create(runtime="torch-distributed", name="fixed", command=["torchrun", "t.py"])
    # render still names a job from its content: the same input, the same objects
    assert ktrain.render(runtime="torch-distributed", num_nodes=2) == ktrain.render(
        runtime="torch-distributed", num_nodes=2
    )


def test_client_errors_are_the_cli_errors(kube: Any) -> None:
    client = _client(kube)
    with pytest.raises(KtrainError) as err:
        client.get("../x")
    assert "invalid job name" in err.value.message
    kube.srv.inject(verb="apply", resource="configmaps", code=422, dry_run=False)
    with pytest.raises(KtrainError):
        client.create(runtime="torch-distributed", name="x1", code=[str(Path(__file__))], command=["python", "t.py"])
    assert kube.srv.get_object("jobsets", "x1", NS) is None  # rolled back: nothing half-made


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory is a project with a train.py (`--code .`). Not tmp_path itself: it
    holds the kubeconfig, which --code would refuse to send."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('hi')\n")
    monkeypatch.chdir(project)
    return project


def test_cli_create_with_code_then_delete_leaves_nothing(cli: Any, kube: Any, in_project: Path) -> None:
    r = cli(
        "job",
        "create",
        *kube.args(),
        "-r",
        "torch-distributed",
        "--name",
        "cj",
        "--code",
        ".",
        "--",
        "torchrun",
        "train.py",
    )
    assert r.exit_code == 0, r.stderr
    assert any(line.startswith("configmap/cj-code-") for line in r.stdout.splitlines()), r.stdout
    got = cli("job", "get", "cj", *kube.args())
    assert "Code:" in got.stdout, got.stdout
    assert cli("job", "delete", "cj", *kube.args()).exit_code == 0
    assert not [m for m in kube.srv.objects("configmaps", NS) if m["metadata"]["name"].startswith("cj-code-")]


def test_cli_create_trainjob_target_owns_its_code(cli: Any, kube: Any, in_project: Path) -> None:
    r = cli(
        "job",
        "create",
        *kube.args(),
        "-r",
        "torch-distributed",
        "--name",
        "tj",
        "--target",
        "trainjob",
        "--code",
        ".",
        "--",
        "torchrun",
        "train.py",
    )
    assert r.exit_code == 0, r.stderr
    trainjob = kube.srv.get_object("trainjobs", "tj", NS)
    patches = {p["manager"] for p in trainjob["spec"]["runtimePatches"]}
    assert "ktrain.io/cli-code" in patches
    maps = [m for m in kube.srv.objects("configmaps", NS) if m["metadata"]["name"].startswith("tj-code-")]
    assert maps and maps[0]["metadata"]["ownerReferences"][0]["kind"] == c.TRAINJOB_KIND


def test_kueue_queued_job_is_left_for_kueue_to_resume(cli: Any, kube: Any) -> None:
    r = cli("job", "create", *kube.args(), "-r", "torch-distributed", "--name", "kq", "--kueue-queue", "team-q")
    assert r.exit_code == 0, r.stderr
    jobset = kube.srv.get_object("jobsets", "kq", NS)
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-q"
    assert jobset["spec"]["suspend"] is True  # Kueue's JobSet integration resumes it once admitted


def test_client_why_is_the_cli_document(cli: Any, kube: Any) -> None:
    import json

    assert cli("job", "create", *kube.args(), "-r", "torch-distributed", "--name", "s", "--suspend").exit_code == 0
    client = _client(kube)
    doc = client.why("s")
    assert doc == json.loads(cli("job", "why", "s", *kube.args(), "-o", "json").stdout)
    assert (doc["running"], doc["reason"], doc["next"]) == (False, "Suspended", "`ktrain job resume s` resumes it")
    assert client.get("s")["why"]["reason"] == "Suspended"


def test_trainjob_target_refuses_what_a_trainjob_cannot_carry(cli: Any, kube: Any) -> None:
    r = cli("job", "create", *kube.args(), "-r", "torch-distributed", "--target", "trainjob", "--priority-class", "hi")
    assert r.exit_code == 2 and "cannot travel in a TrainJob" in r.stderr, r.stderr


def test_job_list_wide_shows_queue_and_priority(cli: Any, kube: Any) -> None:
    r = cli(
        "job",
        "create",
        *kube.args(),
        "-r",
        "torch-distributed",
        "--name",
        "qp",
        "--kueue-queue",
        "team-q",
        "--priority-class",
        "high",
        "--",
        "torchrun",
        "t.py",
    )
    assert r.exit_code == 0, r.stderr
    listed = cli("job", "list", *kube.args(), "-o", "wide")
    header, row = listed.stdout.splitlines()[:2]
    column = {name: row[header.index(name) :].split()[0] for name in ("QUEUE", "PRIORITY")}
    assert column == {"QUEUE": "team-q", "PRIORITY": "high"}, listed.stdout


def test_a_job_name_is_checked_as_the_api_server_checks_it_before_any_request() -> None:
    assert job_name("exp-1.a") == "exp-1.a"
    with pytest.raises(UsageError, match=r'invalid job name "Bad_Name": a lowercase RFC 1123 subdomain'):
        job_name("Bad_Name")
    with pytest.raises(ArgumentTypeError, match=r"^job must be a string, not int$"):
        job_name(3, "job")
