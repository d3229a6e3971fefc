"""Kueue through `job create` (API-server double), and `--dry-run=client` refusing what `create`
refuses (issue #24 item 12).

Kueue's "Run A TrainJob" guide: the TrainJob carries `kueue.x-k8s.io/queue-name` and
`spec.suspend: true`, Kueue resumes it once admitted; a WorkloadPriorityClass is the label
`kueue.x-k8s.io/priority-class` (kubernetes-sigs/kueue `pkg/controller/constants`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"
QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"
RUNTIME_FILE = Path(__file__).resolve().parents[2] / "runtimes" / "torch-distributed.yaml"


def create(cli: Any, kube: Any, *args: str) -> Any:
    return cli("job", "create", *kube.args(), *args)


def test_trainjob_target_with_kueue_queue_is_sent_suspended_with_queue_and_priority(cli: Any, kube: Any) -> None:
    args = ("-r", "torch-distributed", "--name", "kt", "--target", "trainjob")
    kueue = ("--kueue-queue", "team-q", "--kueue-priority-class", "batch-high", "--", "torchrun", "t.py")
    r = create(cli, kube, *args, *kueue)
    assert r.exit_code == 0, r.stderr
    trainjob = kube.srv.get_object("trainjobs", "kt", NS)
    assert trainjob["spec"]["suspend"] is True  # Kueue resumes it once admitted
    assert {k: trainjob["metadata"]["labels"][k] for k in (QUEUE, PRIORITY)} == {
        QUEUE: "team-q",
        PRIORITY: "batch-high",
    }
    flags = next(p for p in trainjob["spec"]["runtimePatches"] if p["manager"] == "ktrain.io/cli-flags")
    # the controller copies these onto the JobSet it builds (runtime-patch metadata, ENGINE.md §4.1)
    assert flags["trainingRuntimeSpec"]["template"]["metadata"]["labels"] == {QUEUE: "team-q", PRIORITY: "batch-high"}


def test_client_dry_run_prints_the_trainjob_create_sends(cli: Any, kube: Any) -> None:
    args = ("-r", "torch-distributed", "--name", "kt", "--target", "trainjob", "--kueue-queue", "q")
    args += ("--kueue-priority-class", "p", "--label", "team=ml", "-o", "yaml")
    dry = create(cli, kube, *args, "--dry-run=client", "--", "torchrun", "t.py")
    assert kube.srv.requests_for("apply") == []
    real = create(cli, kube, *args, "--", "torchrun", "t.py")
    assert dry.exit_code == 0 and real.exit_code == 0, (dry.stderr, real.stderr)
    printed = yaml.safe_load(dry.stdout)
    stored = kube.srv.get_object("trainjobs", "kt", NS)
    assert printed["spec"] == {k: v for k, v in stored["spec"].items() if k in printed["spec"]}
    assert printed["spec"]["suspend"] is True
    assert printed["metadata"]["labels"] == {k: stored["metadata"]["labels"][k] for k in printed["metadata"]["labels"]}
    assert printed["metadata"]["labels"] == {"team": "ml", QUEUE: "q", PRIORITY: "p"}


def test_jobset_target_carries_the_kueue_priority_and_stays_suspended(cli: Any, kube: Any) -> None:
    r = create(
        cli, kube, "-r", "torch-distributed", "--name", "kj", "--kueue-queue", "q", "--kueue-priority-class", "p"
    )
    assert r.exit_code == 0, r.stderr
    jobset = kube.srv.get_object("jobsets", "kj", NS)
    assert {k: jobset["metadata"]["labels"][k] for k in (QUEUE, PRIORITY)} == {QUEUE: "q", PRIORITY: "p"}
    assert jobset["spec"]["suspend"] is True


def test_job_list_wide_shows_the_kueue_priority_before_the_pod_priority(cli: Any, kube: Any) -> None:
    both = ("--kueue-queue", "team-q", "--kueue-priority-class", "batch-high", "--priority-class", "high")
    assert create(cli, kube, "-r", "torch-distributed", "--name", "qp", *both).exit_code == 0
    listed = cli("job", "list", *kube.args(), "-o", "wide")
    header, row = listed.stdout.splitlines()[:2]
    column = {name: row[header.index(name) :].split()[0] for name in ("QUEUE", "PRIORITY")}
    assert column == {"QUEUE": "team-q", "PRIORITY": "batch-high"}, listed.stdout


# Every refusal of `job create` before it sends anything; `--dry-run=client` must refuse each the
# same way (before: `--target trainjob --dry-run client --priority-class high` printed a TrainJob
# without the priority and exited 0).
REFUSALS = [
    ("priority-class on a TrainJob", ["--target", "trainjob", "--priority-class", "high"]),
    ("scheduler on a TrainJob", ["--target", "trainjob", "--scheduler", "kai", "--allow-extensions"]),
    ("elastic on a TrainJob", ["--target", "trainjob", "--elastic", "1:2", "--allow-extensions"]),
    ("JobSet webhook rejection", ["--name", "n" * 50]),  # pod names over 63 characters
    ("show-render on a JobSet", ["--show-render"]),
    ("suspend with wait", ["--suspend", "--wait"]),
    ("no-suspend with a Kueue queue", ["--kueue-queue", "q", "--no-suspend"]),
    ("a Kueue priority no label holds", ["--kueue-priority-class", "not a name"]),
    ("unknown target", ["--target", "pods"]),
    ("unknown output", ["-o", "xml"]),
    ("bad timeout", ["--wait", "--timeout", "soon"]),
    # the cluster has its own torch-distributed: the controller would use that one, not the file
    ("a runtime file for the controller", ["--target", "trainjob", "--runtime-file", str(RUNTIME_FILE)]),
]


@pytest.mark.parametrize("extra", [c[1] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_client_dry_run_refuses_what_create_refuses(cli: Any, kube: Any, extra: list[str]) -> None:
    from test_runtime_list import cluster_runtime

    kube.srv.put_object(cluster_runtime("torch-distributed"))
    args = ["-r", "torch-distributed", "--name", "j", *extra]
    real = create(cli, kube, *args, "--", "torchrun", "t.py")
    dry = create(cli, kube, *args, "--dry-run=client", "--", "torchrun", "t.py")
    assert real.exit_code != 0, real.stdout
    assert dry.exit_code == real.exit_code, (dry.stdout, dry.stderr, real.stderr)
    assert "error:" in real.stderr
    assert dry.stderr[dry.stderr.index("error:") :] == real.stderr[real.stderr.index("error:") :]
    assert dry.stdout == ""
    assert kube.srv.requests_for("apply") == []
