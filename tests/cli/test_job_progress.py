"""A TrainJob whose `status.trainerStatus` is written through the status subresource (as the Trainer
controller's status server applies it) shows its 45%, ETA and loss in `job list`, `job get`,
`job why`, `job wait`, `job watch`, `TrainerClient.get_job` and `ktrain.Client().get`; a JobSet-only
job shows its rank-0 log's progress. On the API-server double."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble

import ktrain
from ktrain import constants as c
from ktrain.cli.common import registry_from
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

JSON = dict[str, Any]
NOW = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
TRAINER_STATUS = {
    "progressPercentage": 45,
    "estimatedRemainingSeconds": 3600,
    "metrics": [{"name": "loss", "value": "0.2347"}, {"name": "accuracy", "value": "0.9876"}],
    "lastUpdatedTime": NOW,
}
COMPLETED = {"type": "Complete", "status": "True", "reason": "JobSetCompleted", "message": "done"}


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


def running_trainjob(srv: ApiServerDouble, name: str = "demo", nodes: int = 2) -> JSON:
    """A TrainJob, the JobSet its controller made and its trainer pods, all running."""
    trainjob = srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": nodes}},
        }
    )
    overrides = JobOverrides(runtime="torch-distributed", name=name, nodes=nodes)
    for obj in render_request(RenderRequest(overrides=overrides), registry_from(None, None)).result.objects:
        if obj["kind"] == "JobSet":
            obj["metadata"]["ownerReferences"] = [
                {"apiVersion": c.TRAINER_API_VERSION, "kind": "TrainJob", "name": name}
                | {"uid": trainjob["metadata"]["uid"], "controller": True}
            ]
        jobset = srv.put_object(obj)
    for rank in range(nodes):
        srv.add_pod(
            f"{name}-node-0-{rank}-x{rank}",
            labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
            annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
            phase="Running",
            containers=["node"],
            owner=jobset,
        )
    return trainjob


def apply_trainer_status(srv: ApiServerDouble, name: str, trainer_status: JSON) -> JSON:
    """What the controller's status server does: a server-side apply of status.trainerStatus to the
    status subresource, field manager trainer-status, forced."""
    api = srv.api_client()
    try:
        body = {"apiVersion": c.TRAINER_API_VERSION, "kind": "TrainJob", "metadata": {"name": name}}
        body["status"] = {"trainerStatus": trainer_status}
        answer = api.call_api(
            f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/{name}/status",
            "PATCH",
            query_params=[("fieldManager", "trainer-status"), ("force", "true")],
            header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
            body=body,
            _preload_content=False,
        )
        return json.loads(answer[0].data)  # type: ignore[no-any-return]
    finally:
        api.close()


def test_job_list_shows_progress_eta_and_in_wide_the_metrics(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    running_trainjob(srv, "quiet")
    stored = apply_trainer_status(srv, "demo", TRAINER_STATUS)
    assert stored["status"]["trainerStatus"] == TRAINER_STATUS
    table = cli("job", "list", "--kubeconfig", kc)
    wide = cli("job", "list", "--kubeconfig", kc, "-o", "wide")
    assert table.exit_code == wide.exit_code == 0, table.stderr + wide.stderr
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines()[1:]}
    assert table.stdout.splitlines()[0].split()[-2:] == ["PROGRESS", "ETA"]
    assert rows["demo"][3] == "Running" and rows["demo"][-2:] == ["45%", "1h00m"]
    assert rows["quiet"][-2:] == ["-", "-"]
    assert "loss=0.2347,accuracy=0.9876" in wide.stdout
    as_json = cli("job", "list", "--kubeconfig", kc, "-o", "json")
    items = {i["metadata"]["name"]: i for i in json.loads(as_json.stdout)["items"]}
    assert items["demo"]["status"]["trainerStatus"] == TRAINER_STATUS


def test_job_get_has_a_progress_section_and_json_carries_it(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    text = cli("job", "get", "demo", "--kubeconfig", kc)
    assert text.exit_code == 0, text.stderr
    section = text.stdout.split("Progress:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[0] == "  [#########-----------] 45%"
    assert "  ETA:          1h00m" in section and "  Source:       status" in section
    assert any(line.split() == ["loss", "0.2347"] for line in section)
    document = json.loads(cli("job", "get", "demo", "--kubeconfig", kc, "-o", "json").stdout)
    assert document["progress"]["progressPercentage"] == 45 and document["progress"]["source"] == "status"


def test_a_stale_status_while_pods_run_is_warned(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", {**TRAINER_STATUS, "lastUpdatedTime": "2020-01-01T00:00:00Z"})
    text = cli("job", "get", "demo", "--kubeconfig", kc).stdout
    assert "Warning:      no update for" in text


def test_job_why_on_a_running_job_says_how_far_it_is(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    result = cli("job", "why", "demo", "--kubeconfig", kc)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "progress: 45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)" in result.stdout


def _complete_later(srv: ApiServerDouble, name: str, after: float = 1.5) -> threading.Thread:
    def finish() -> None:
        time.sleep(after)
        apply_trainer_status(srv, name, {**TRAINER_STATUS, "progressPercentage": 100, "estimatedRemainingSeconds": 0})
        time.sleep(0.5)
        srv.set_status("trainjobs", name, {"conditions": [COMPLETED]}, group="trainer.kubeflow.org")

    thread = threading.Thread(target=finish, daemon=True)
    thread.start()
    return thread


def test_job_wait_prints_one_plain_progress_line_per_change(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    thread = _complete_later(srv, "demo")
    result = cli("job", "wait", "demo", "--kubeconfig", kc, "--timeout", "60s")
    thread.join()
    assert result.exit_code == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("progress: ")]
    assert progress[0] == "progress: 45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)"
    assert len(progress) == len(set(progress))  # one line per change, not per look


def test_job_watch_follows_to_the_end_and_exits_as_job_wait(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    thread = _complete_later(srv, "demo")
    result = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "0.2s", "--timeout", "60s")
    thread.join()
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "demo Running pods 2/2 restarts 0 progress 45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)"
    assert lines[-1].startswith("demo Complete") and len(lines) == len(set(lines))


def test_job_watch_of_a_failed_job_exits_1_and_a_timeout_124(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    timed_out = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "0.2s", "--timeout", "0.5s")
    assert timed_out.exit_code == 124
    failed = {"type": "Failed", "status": "True", "reason": "JobSetFailed", "message": "a pod failed"}
    srv.set_status("trainjobs", "demo", {"conditions": [failed]}, group="trainer.kubeflow.org")
    result = cli("job", "watch", "demo", "--kubeconfig", kc, "--interval", "0.2s")
    assert result.exit_code == 1 and "demo Failed" in result.stdout


def test_the_python_apis_see_the_trainer_status(srv: ApiServerDouble, tmp_path: Path) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    path = str(srv.write_kubeconfig(tmp_path / "kubeconfig"))
    job = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=path)).get_job("demo")
    assert job.trainer_status is not None
    assert job.trainer_status.progress_percentage == 45
    assert job.trainer_status.estimated_remaining_seconds == 3600
    assert job.trainer_status.metrics == {"loss": "0.2347", "accuracy": "0.9876"}
    assert job.trainer_status.last_updated_time is not None
    assert ktrain.Client(kubeconfig=path).get("demo")["progress"]["progressPercentage"] == 45


def test_a_jobset_only_job_shows_its_rank_zero_logs_progress(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    overrides = JobOverrides(runtime="torch-distributed", name="plain", nodes=1)
    for obj in render_request(RenderRequest(overrides=overrides), registry_from(None, None)).result.objects:
        jobset = srv.put_object(obj)
    srv.add_pod(
        "plain-node-0-0-x0",
        labels={c.JOBSET_NAME_LABEL: "plain", c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: "0"},
        phase="Running",
        containers=["node"],
        owner=jobset,
    )
    srv.append_log("plain-node-0-0-x0", "starting\n 45%|####5     | 45/100 [00:04<00:05,  9.98it/s, loss=0.235]\n")
    text = cli("job", "get", "plain", "--kubeconfig", kc)
    assert text.exit_code == 0, text.stderr
    assert "[#########-----------] 45%" in text.stdout and "Source:       log (tqdm)" in text.stdout


def test_create_with_the_gate_copies_the_controllers_ca_as_the_controller_does(
    srv: ApiServerDouble, kc: str, cli: Any
) -> None:
    import base64

    pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    srv.add_namespace("kubeflow-system")
    srv.put_object(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "kubeflow-trainer-webhook-cert", "namespace": "kubeflow-system"},
            "data": {"ca.crt": base64.b64encode(pem.encode()).decode()},
        }
    )
    created = cli(
        *["job", "create", "--kubeconfig", kc, "-r", "torch-distributed", "--name", "gated"],
        *["--feature-gates", "TrainJobStatus=true", "--", "python", "train.py"],
    )
    assert created.exit_code == 0, created.stderr
    assert "only the cluster knows" not in created.stderr and "ca.crt is left empty" not in created.stderr
    config_map = srv.get_object("configmaps", "gated-tls-config")
    assert config_map is not None and config_map["data"] == {"ca.crt": pem}
    missing = cli(
        *["job", "create", "--kubeconfig", kc, "-r", "torch-distributed", "--name", "elsewhere"],
        *["--feature-gates", "TrainJobStatus=true", "--status-server", "kft.other-ns:10443", "--", "python", "t.py"],
    )
    assert missing.exit_code == 0, missing.stderr
    assert "Secret other-ns/kubeflow-trainer-webhook-cert does not exist" in missing.stderr
