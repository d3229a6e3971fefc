"""A TrainJob whose `status.trainerStatus` is written through the status subresource (as the Trainer
controller's status server applies it) shows its 45%, ETA and loss in `job list`, `job get`,
`job why`, `job wait`, `job watch`, `TrainerClient.get_job` and `ktrain.Client().get`; a JobSet-only
job shows its rank-0 log's progress. On the API-server double."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from progress_jobs import TRAINER_STATUS, apply_trainer_status, complete_later, running_trainjob

import ktrain
from ktrain import constants as c
from ktrain.cli.common import registry_from
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


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


def test_job_wait_prints_one_plain_progress_line_per_change(srv: ApiServerDouble, kc: str, cli: Any) -> None:
    running_trainjob(srv)
    apply_trainer_status(srv, "demo", TRAINER_STATUS)
    thread = complete_later(srv, "demo")
    result = cli("job", "wait", "demo", "--kubeconfig", kc, "--timeout", "60s")
    thread.join()
    assert result.exit_code == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("progress: ")]
    assert progress[0] == "progress: 45% ETA 1h00m loss=0.2347 accuracy=0.9876 (status)"
    assert len(progress) == len(set(progress))  # one line per change, not per look


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
