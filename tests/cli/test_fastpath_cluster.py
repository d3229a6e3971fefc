"""The cluster commands on the fast path (`job create | list | get | logs | wait | delete`)
behave exactly as their typer commands, against the API-server double.

Each case runs twice, each time on a fresh double (same port, same kubeconfig file, same
seeded objects): once through the fast path (`try_fast`, what the console script calls first)
and once through the typer app (`main`, what KTRAIN_NO_FASTPATH=1 runs). stdout, stderr, the
exit code, the requests the command made and what is left on the cluster must be the same.

Normalised before comparing, and only because they differ from run to run whatever parsed
argv: uids, RFC 3339 timestamps, resourceVersions and generated key material the double or
ktrain make up, event-name suffixes, and (for `job list` / `job get`, flagged per case) the
AGE cells, which count seconds since the seeded objects were stored.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from unit.cli.test_fastpath import TABLES, _ktrain, _typer_calls

from ktrain import constants as c
from ktrain.cli import main
from ktrain.cli.common import registry_from
from ktrain.cli.fastpath import COMMANDS, Parser, command_node, command_path, parse_command, try_fast
from ktrain.cluster import reads
from ktrain.service import job_logs
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"
JSON = dict[str, Any]
REPO = Path(__file__).resolve().parents[2]
OLD = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)


@dataclass
class Case:
    argv: Callable[[dict[str, str]], list[str]]  # from the paths of the case's files (and "kc": the kubeconfig)
    setup: Callable[[ApiServerDouble], Any] = lambda srv: None  # the cluster before the command
    during: Callable[[ApiServerDouble], Any] | None = None  # the cluster moving on while it runs
    stdin: str = ""
    tty: bool = False  # stdin is a terminal (delete asks before deleting several jobs)
    hook: Callable[[pytest.MonkeyPatch], Any] | None = None  # a failure injected into both runs
    ages: bool = False  # the output has AGE cells


# --- the cluster before each command -----------------------------------------------------------
def seed(
    srv: ApiServerDouble,
    name: str,
    runtime: str = "torch-distributed",
    nodes: int = 2,
    labels: dict[str, str] | None = None,
    namespace: str = NS,
) -> JSON:
    """A bundled runtime rendered and stored as a cluster would hold it; returns the JobSet."""
    overrides = JobOverrides(runtime=runtime, name=name, nodes=nodes, namespace=namespace, labels=dict(labels or {}))
    ssh_secret = "keys" if runtime.startswith(("deepspeed", "mpi")) else None  # no generated key in the seed
    outcome = render_request(RenderRequest(overrides=overrides, ssh_secret=ssh_secret), registry_from(None, None))
    jobset: JSON = {}
    for obj in outcome.result.objects:
        stored = srv.put_object(obj)
        if obj["kind"] == "JobSet":
            jobset = stored
    return jobset


def add_pod(srv: ApiServerDouble, jobset: JSON, rank: int, phase: str = "Running", rjob: str = "node") -> str:
    name = jobset["metadata"]["name"]
    pod = f"{name}-{rjob}-0-{rank}-abcde"
    srv.add_pod(
        pod,
        jobset["metadata"]["namespace"],
        phase=phase,
        containers=["node"],
        owner=jobset,
        labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: rjob, c.JOBSET_JOB_INDEX_LABEL: "0"},
        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank)},
    )
    return pod


def finish(srv: ApiServerDouble, name: str, condition: str = "Completed", namespace: str = NS) -> None:
    srv.set_status(
        "jobsets",
        name,
        {
            "conditions": [
                {
                    "type": condition,
                    "status": "True",
                    "reason": "AllJobsCompleted" if condition == "Completed" else "FailedJobs",
                    "message": "done",
                    "lastTransitionTime": "2025-01-01T00:00:00Z",
                }
            ]
        },
        namespace,
    )


def jobs(srv: ApiServerDouble) -> None:
    """Running, completed and failed jobs in team-a (two labelled team=ml), one elsewhere, with pods,
    logs (a restarted rank 0 has a previous log) and a warning event."""
    srv.add_namespace("other")
    demo = seed(srv, "demo", labels={"team": "ml"})
    for rank in (0, 1):
        pod = add_pod(srv, demo, rank)
        for n in (1, 2, 3):
            srv.append_log(pod, f"rank {rank} step {n}\n", namespace=NS, timestamp=OLD + dt.timedelta(seconds=n))
    srv.append_log("demo-node-0-0-abcde", "before the restart\n", namespace=NS, previous=True, timestamp=OLD)
    srv.add_event(demo, "FailedScheduling", "0/3 nodes are available", type="Warning", namespace=NS, timestamp=OLD)
    done = seed(srv, "done", nodes=1, labels={"team": "ml"})
    srv.append_log(add_pod(srv, done, 0, phase="Succeeded"), "all done\n", namespace=NS, timestamp=OLD)
    finish(srv, "done")
    seed(srv, "broken", nodes=1)
    finish(srv, "broken", "Failed")
    seed(srv, "ds", runtime="deepspeed-distributed", nodes=2)
    seed(srv, "elsewhere", nodes=1, namespace="other")


def down(srv: ApiServerDouble) -> None:
    srv.stop()


def finish_once_watched(name: str) -> Callable[[ApiServerDouble], None]:
    """The job finishing while `job wait` watches it: only once its watch has started, so that
    both parsers (the typer one starts later) make the same requests, however loaded the machine."""

    def run(srv: ApiServerDouble) -> None:
        for _ in range(1000):
            if srv.requests_for(verb="watch"):
                break
            threading.Event().wait(0.02)
        finish(srv, name)

    return run


def complete_when_resumed(name: str, condition: str = "Completed") -> Callable[[ApiServerDouble], None]:
    """The JobSet controller finishing the job once ktrain has resumed it (for --wait)."""

    def run(srv: ApiServerDouble) -> None:
        for _ in range(500):
            jobset = srv.get_object("jobsets", name, NS)
            if jobset is not None and jobset["spec"]["suspend"] is False:
                break
            threading.Event().wait(0.02)
        else:
            return
        for _ in range(250):  # and once ktrain has looked for its pods, so it always sees them come
            if srv.requests_for(verb="list", resource="pods"):
                break
            threading.Event().wait(0.02)
        pod = add_pod(srv, jobset, 0)
        srv.append_log(pod, "epoch 1 loss 0.5\n", namespace=NS, timestamp=OLD)
        threading.Event().wait(0.3)
        finish(srv, name, condition)

    return run


def interrupt_second_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the second object is being stored: create must roll the first one back."""
    import ktrain.cluster.client as client

    real = client.apply
    calls = {"stored": 0}

    def apply(cluster: Any, obj: JSON, dry_run: bool = False) -> Any:
        if not dry_run:
            calls["stored"] += 1
            if calls["stored"] == 2:
                raise KeyboardInterrupt
        return real(cluster, obj, dry_run=dry_run)

    monkeypatch.setattr(client, "apply", apply)


def interrupt_once_following(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while `logs -f` follows a running job, once rank 0's lines are out: the open log
    streams must be shut down (not waited for) and the command end with 130."""
    real = job_logs.job_pods
    calls = {"n": 0}

    def job_pods(cluster: Any, name: str, namespace: str) -> Any:
        calls["n"] += 1
        if calls["n"] > 1:
            deadline = time.monotonic() + 5
            while "rank 0 step 3" not in sys.stdout.getvalue() and time.monotonic() < deadline:
                time.sleep(0.01)
            raise KeyboardInterrupt
        return real(cluster, name, namespace)

    monkeypatch.setattr(job_logs, "job_pods", job_pods)


def _runtime_files(tmp: Path) -> dict[str, str]:
    runtime = (REPO / "runtimes" / "torch-distributed.yaml").read_text()
    (tmp / "mine.yaml").write_text(runtime.replace("name: torch-distributed", "name: my-torch", 1))
    (tmp / "rtdir").mkdir()
    (tmp / "rtdir" / "r.yaml").write_text(runtime.replace("name: torch-distributed", "name: dir-torch", 1))
    (tmp / "job.yaml").write_text(
        "kind: TrainJob\nmetadata:\n  name: from-file\nspec:\n  runtimeRef: "
        "{name: torch-distributed}\n  trainer:\n    command: [python, t.py]\n"
    )
    (tmp / "job.yaml.j2").write_text(
        "kind: TrainJob\nmetadata:\n  name: {{ name }}\nspec:\n  runtimeRef:\n"
        "    name: torch-distributed\n  trainer:\n    numNodes: {{ nodes }}\n"
    )
    (tmp / "values.yaml").write_text("name: tmpl\nnodes: 2\n")
    (tmp / "patch.yaml").write_text(
        "manager: acme.io/tuning\ntrainingRuntimeSpec:\n  template:\n    metadata:\n      labels: {tuned: 'yes'}\n"
    )
    return {p.name: str(p) for p in tmp.iterdir()}


TORCH = ["--runtime", "torch-distributed"]


def create(*args: str) -> Callable[[dict[str, str]], list[str]]:
    return lambda f: ["job", "create", "--kubeconfig", f["kc"], *args]


CREATE_CASES = [
    Case(create(*TORCH, "--name", "t1", "--nodes", "2", "--", "torchrun", "x.py")),
    # the controller's TrainJobStatus gate: its CA Secret is not there, so ca.crt stays empty (a warning)
    Case(create(*TORCH, "--name", "fg", "--feature-gates", "TrainJobStatus=true", "--status-server", "t.ops:8443")),
    Case(
        create("--runtime", "deepspeed-distributed", "--name", "ds", "--nodes", "3", "--", "mpirun", "python", "t.py")
    ),
    Case(create("-r", "deepspeed-distributed", "--name", "ds", "-o", "yaml")),  # warns: the output holds the key
    Case(create(*TORCH, "--name", "rk", "--runtime-kind", "ClusterTrainingRuntime")),
    Case(create(*TORCH, "--name", "j", "--output=json", "--nproc-per-node", "4", "--image", "reg/t:1")),
    Case(create(*TORCH, "--name", "n", "-oname", "--label", "team=ml", "-l", "tier=gold", "--annotation", "a=b")),
    Case(
        create(
            *TORCH,
            "--name",
            "c",
            "--dry-run",
            "client",
            "--env",
            "LR=1",
            "-e",
            "B=2",
            "--cpu",
            "2",
            "--memory",
            "4Gi",
            "--resource",
            "nvidia.com/gpu=1",
        )
    ),
    Case(create(*TORCH, "--name", "s", "--dry-run=server", "-n", NS, "--queue", "gpu", "--suspend")),
    Case(create(*TORCH, "--name", "s", "--dry-run", "bogus")),  # the body's usage error
    Case(create(*TORCH, "--name", "s", "-o", "xml")),
    Case(
        lambda f: [
            "job",
            "create",
            "--kubeconfig",
            f["kc"],
            "--runtime-file",
            f["mine.yaml"],
            "--runtime",
            "my-torch",
            "--runtimes-dir",
            f["rtdir"],
            "--name",
            "mine",
            "--patch",
            f["patch.yaml"],
            "--no-suspend",
        ]
    ),
    Case(lambda f: ["job", "create", "--kubeconfig", f["kc"], "-f", f["job.yaml"], "--set", "trainer.numNodes=3"]),
    Case(
        lambda f: [
            "job",
            "create",
            "--kubeconfig",
            f["kc"],
            "--filename",
            f["job.yaml.j2"],
            "--values",
            f["values.yaml"],
            "--set=nodes=3",
        ]
    ),
    Case(
        lambda f: ["job", "create", "--kubeconfig", f["kc"], "-f", "-", "--name", "piped"],
        stdin="kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n",
    ),
    Case(
        create(
            "--runtime",
            "torchtune-llama3.2-1b",
            "--name",
            "tune",
            "--dataset",
            "hf://org/ds",
            "--model",
            "hf://org/m",
            "--dataset-secret",
            "d",
            "--model-secret",
            "m",
            "--dry-run",
            "client",
        )
    ),
    Case(
        create(
            "--runtime",
            "deepspeed-distributed",
            "--name",
            "mpi",
            "--ssh-secret",
            "keys",
            "--allow-extensions",
            "--",
            "mpirun",
            "x",
        )
    ),
    Case(create("--runtime", "deepspeed-distributed", "--name", "tj", "--target", "trainjob", "--show-render")),
    # Fine-tuning, placement, queues and code (issues #15, #16).
    Case(
        create(
            "--runtime",
            "torchtune-llama3.2-1b",
            "--name",
            "ft",
            "--epochs",
            "2",
            "--batch-size",
            "4",
            "--dtype",
            "bf16",
            "--loss",
            "CEWithChunkedOutputLoss",
            "--lora",
            "rank=8",
            "--dataset-source",
            "json",
            "--dataset-split",
            "train",
            "--dataset-column-map",
            "input=q,output=a",
            "--train-on-input",
            "--system-prompt",
            "Be terse.",
            "--dry-run",
            "client",
        )
    ),
    Case(create("--runtime", "torchtune-llama3.2-1b", "--name", "q", "--qlora", "default", "--dry-run", "client")),
    Case(create("--runtime", "torchtune-llama3.2-1b", "--name", "d", "--dora", "rank=x")),  # the body's usage error
    Case(
        create(
            *TORCH,
            "--name",
            "pl",
            "--kueue-queue",
            "q",
            "--kueue-priority-class",
            "batch-high",
            "--priority-class",
            "high",
            "--node-selector",
            "pool=a",
            "--toleration",
            "gpu:NoSchedule",
            "--gpus",
            "1",
            "--gpu-type",
            "A100",
            "--gpu-type-label",
            "gpu/model",
        )
    ),
    Case(
        create(
            *TORCH,
            "--name",
            "el",
            "--scheduler",
            "kai",
            "--elastic",
            "1:2",
            "--max-restarts",
            "1",
            "--allow-extensions",
            "--",
            "torchrun",
            "t.py",
        )
    ),
    Case(
        create(
            *TORCH,
            "--name",
            "fp",
            "--max-restarts",
            "2",
            "--restart-on-preemption",
            "--fail-on-exit-code",
            "2",
            "--restart-strategy",
            "recreate",
            "--ttl",
            "1h",
            "--checkpoint",
            "missing-claim",
            "--",
            "torchrun",
            "t.py",
        )
    ),
    Case(
        lambda f: [
            "job",
            "create",
            "--kubeconfig",
            f["kc"],
            *TORCH,
            "--name",
            "code",
            "--code",
            f["job.yaml"],
            "--code-include",
            "*.yaml",
            "--pip",
            "numpy",
            "--pip-index-url",
            "https://pypi.example/simple",
            "--requirements",
            f["job.yaml"],
            "--",
            "python",
            "job.yaml",
        ]
    ),
    Case(create(*TORCH, "--name", "tj", "--show-render")),  # only with --target trainjob
    Case(create(*TORCH, "--name", "demo"), setup=jobs),  # exists: 409-style conflict, exit 5
    Case(create(*TORCH, "--name", "demo", "--overwrite", "--nodes", "1"), setup=jobs),
    Case(
        create("-r", "deepspeed-distributed", "--name", "ds"),  # a 409 on the real apply: rolled back
        setup=lambda srv: srv.fail_nth("apply", "configmaps", 2, code=409),
    ),
    Case(create("-r", "deepspeed-distributed", "--name", "ds"), hook=interrupt_second_apply),  # Ctrl-C: rolled back
    Case(create(*TORCH, "--name", "t"), setup=down),  # server down
    Case(create(*TORCH, "--name", "t", "--request-timeout", "0.5"), setup=lambda srv: srv.slow(3.0, verb="apply")),
    Case(create(*TORCH, "--name", "t", "--context", "nowhere")),
    Case(create(*TORCH, "--name", "w", "--wait", "--timeout", "20s"), during=complete_when_resumed("w")),
    Case(create(*TORCH, "--name", "w", "--wait", "--timeout", "20s"), during=complete_when_resumed("w", "Failed")),
    Case(create(*TORCH, "--name", "w", "--wait", "--timeout", "0.5s")),  # exit 124
    Case(create(*TORCH, "--name", "w", "--wait", "--timeout", "soon")),
    Case(create(*TORCH, "--name", "f", "--follow", "--wait", "--timeout", "30s"), during=complete_when_resumed("f")),
    Case(create(*TORCH, "--name", "n", "--nodes", "0")),
]


def cmd(command: str, *args: str) -> Callable[[dict[str, str]], list[str]]:
    return lambda f: ["job", command, "--kubeconfig", f["kc"], *args]


LIST_CASES = [
    Case(cmd("list"), setup=jobs, ages=True),
    Case(cmd("list", "-o", "wide"), setup=jobs, ages=True),
    Case(cmd("list", "-A"), setup=jobs, ages=True),
    Case(cmd("list", "--all-namespaces", "-oname"), setup=jobs),
    Case(cmd("list", "-l", "team=ml", "--output=json"), setup=jobs),
    Case(cmd("list", "--selector=team=ml", "-o", "yaml"), setup=jobs),
    Case(cmd("list", "-n", "other", "--namespace=empty", "--request-timeout", "5"), setup=jobs),  # the last -n wins
    Case(cmd("list", "-n", "other", "--context", "nowhere"), setup=jobs),
    Case(cmd("list"), setup=down),
    Case(cmd("list", "-A", "-o", "wide"), ages=True),  # nothing anywhere
]

GET_CASES = [
    Case(cmd("get", "demo"), setup=jobs, ages=True),
    Case(cmd("get", "-o", "yaml", "demo"), setup=jobs),
    Case(cmd("get", "done", "--output=json", "-n", NS), setup=jobs),
    Case(cmd("get", "broken", "-otext", "--request-timeout=5"), setup=jobs, ages=True),
    Case(cmd("get", "missing"), setup=jobs),  # exit 4
    Case(cmd("get", "elsewhere", "--namespace", "other", "--context", "nowhere"), setup=jobs),
    Case(cmd("get", "demo"), setup=down),
    Case(cmd("get", "--", "demo"), setup=jobs, ages=True),
]

LOGS_CASES = [
    Case(cmd("logs", "demo"), setup=jobs),
    Case(cmd("logs", "demo", "--node", "1", "--timestamps"), setup=jobs),
    Case(cmd("logs", "demo", "--all", "--tail", "1"), setup=jobs),
    Case(cmd("logs", "demo", "--step", "node", "-c", "node", "--since", "5m"), setup=jobs),
    Case(cmd("logs", "demo", "-p"), setup=jobs),
    Case(cmd("logs", "demo", "--previous", "--container=node", "--node=0"), setup=jobs),
    Case(cmd("logs", "done", "-f"), setup=jobs),  # the job has ended: following stops at once
    Case(cmd("logs", "done", "--follow", "--all", "--tail=0", "-n", NS, "--request-timeout", "5"), setup=jobs),
    Case(cmd("logs", "demo", "--node", "01", "--tail", "2"), setup=jobs),  # leading zeros read as typer reads them
    Case(cmd("logs", "demo", "--all", "--node", "1"), setup=jobs),  # usage error
    Case(cmd("logs", "demo", "--step", "launcher"), setup=jobs),  # no such pod
    Case(cmd("logs", "demo", "--since", "later"), setup=jobs),
    Case(cmd("logs", "missing"), setup=jobs),
    Case(cmd("logs", "demo", "--context", "nowhere"), setup=jobs),
    Case(cmd("logs", "demo"), setup=down),
    Case(cmd("logs", "ds", "-pf"), setup=jobs),  # short flags run together
    Case(cmd("logs", "demo", "-f"), setup=jobs, hook=interrupt_once_following),  # Ctrl-C: 130, streams closed
]

WAIT_CASES = [
    Case(cmd("wait", "done"), setup=jobs),
    Case(cmd("wait", "broken", "--for", "complete"), setup=jobs),  # exit 1: it failed
    Case(cmd("wait", "broken", "--for=failed", "-n", NS), setup=jobs),
    Case(cmd("wait", "done", "--for", "running", "--request-timeout", "5"), setup=jobs),
    Case(cmd("wait", "demo", "--timeout", "0.3s"), setup=jobs),  # exit 124
    Case(cmd("wait", "demo", "--timeout", "soon"), setup=jobs),
    Case(cmd("wait", "missing", "--timeout", "5s"), setup=jobs),
    Case(cmd("wait", "demo", "--context", "nowhere"), setup=jobs),
    Case(cmd("wait", "demo"), setup=down),
    Case(cmd("wait", "demo", "--timeout", "20s"), setup=jobs, during=finish_once_watched("demo")),
]


def _stuck(srv: ApiServerDouble) -> None:
    """A job whose pods ask more GPUs than any node has (issue #29's first example)."""
    jobset = seed(srv, "big")
    srv.put_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "gpu-0"},
            "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}},
        }
    )
    pod = add_pod(srv, jobset, 0, phase="Pending")
    with srv.cluster.lock:
        stored = srv.get_object("pods", pod, NS)
        assert stored is not None
        stored["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "16"}}
        stored["status"] = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
                }
            ],
        }
        srv.put_object(stored)


WHY_CASES = [
    Case(cmd("why", "demo"), setup=jobs),  # running: exit 0
    Case(cmd("why", "big"), setup=_stuck),  # exit 1, the reason on stdout
    Case(cmd("why", "big", "-o", "json"), setup=_stuck),
    Case(cmd("why", "done", "--output=yaml", "-n", NS, "--request-timeout", "5"), setup=jobs),
    Case(cmd("why", "broken", "--namespace", NS), setup=jobs),  # failed: exit 1
    Case(cmd("why", "missing"), setup=jobs),  # exit 4
    Case(cmd("why", "demo", "--context", "nowhere"), setup=jobs),
    Case(cmd("why", "demo"), setup=down),  # exit 5
]


def _two_jobs(srv: ApiServerDouble) -> None:
    seed(srv, "a", labels={"team": "ml"})
    seed(srv, "b", labels={"team": "ml"})
    seed(srv, "c", labels={"team": "infra"})


DELETE_CASES = [
    Case(cmd("delete", "a"), setup=_two_jobs),
    Case(cmd("delete", "a", "b", "a"), setup=_two_jobs),  # not a terminal: no question
    Case(cmd("delete", "-l", "team=ml", "--cascade", "orphan"), setup=_two_jobs),
    Case(cmd("delete", "--selector=team=infra", "--cascade=foreground", "-n", NS), setup=_two_jobs),
    Case(cmd("delete", "--all", "--dry-run", "server"), setup=_two_jobs),
    Case(cmd("delete", "a", "--wait", "--timeout", "10s", "--request-timeout", "5"), setup=_two_jobs),
    Case(cmd("delete", "a", "missing", "nope"), setup=_two_jobs),  # exit 4 after deleting a
    Case(cmd("delete", "a", "--cascade", "bogus"), setup=_two_jobs),
    Case(cmd("delete", "a", "--dry-run", "client"), setup=_two_jobs),
    Case(cmd("delete"), setup=_two_jobs),
    Case(cmd("delete", "a", "--all"), setup=_two_jobs),
    Case(cmd("delete", "-l", "team=none"), setup=_two_jobs),  # nothing matches
    Case(cmd("delete", "a", "b"), setup=_two_jobs, tty=True, stdin="n\n"),  # asked, declined: aborted, 1
    Case(cmd("delete", "a", "b"), setup=_two_jobs, tty=True, stdin="yes\n"),
    Case(cmd("delete", "a", "b"), setup=_two_jobs, tty=True, stdin=""),  # end of input declines
    Case(cmd("delete", "--all", "-y"), setup=_two_jobs, tty=True),
    Case(cmd("delete", "--all", "--yes", "--context", "nowhere"), setup=_two_jobs),
    Case(cmd("delete", "a"), setup=down),
    Case(cmd("delete", "--", "a"), setup=_two_jobs),
    Case(cmd("delete", "a", "--force"), setup=_two_jobs),
]

WATCH_CASES = [
    Case(cmd("watch", "done", "--interval", "0.2s"), setup=jobs),
    Case(cmd("watch", "broken", "--interval=0.2s", "-n", NS), setup=jobs),  # exit 1: it failed
    Case(cmd("watch", "demo", "--interval", "0.2s", "--timeout", "0.5s", "--request-timeout", "5"), setup=jobs),
    Case(cmd("watch", "demo", "--interval", "0s"), setup=jobs),  # too short
    Case(cmd("watch", "missing"), setup=jobs),
    Case(cmd("watch", "demo", "--context", "nowhere"), setup=jobs),
    Case(cmd("watch", "demo"), setup=down),
]

CLUSTER_TABLES = {
    "ktrain.cli.commands.job_create:submit_job": CREATE_CASES,
    "ktrain.cli.commands.job_list:list_jobs": LIST_CASES,
    "ktrain.cli.commands.job_get:show_job": GET_CASES,
    "ktrain.cli.commands.job_logs:print_logs": LOGS_CASES,
    "ktrain.cli.commands.job_wait:wait_job": WAIT_CASES,
    "ktrain.cli.commands.job_watch:watch_job": WATCH_CASES,
    "ktrain.cli.commands.job_why:explain_job": WHY_CASES,
    "ktrain.cli.commands.job_delete:delete_jobs": DELETE_CASES,
}
CASES = [(body, case) for body, table in CLUSTER_TABLES.items() for case in table]


# --- running one case on a fresh double ---------------------------------------------------------
_VARIABLE = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uid>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), "<time>"),
    (re.compile(r"""(resourceVersion["']?:\s*)["']?\d+["']?"""), r"\1<rv>"),
    (re.compile(r"\.[0-9a-f]{16}\b"), ".<event>"),
    (re.compile(r"[A-Za-z0-9+/]{60,}={0,2}"), "<key material>"),  # base64 of generated SSH keys
]
_AGE = re.compile(r"(?<![\w.-])\d+[smhdy](?![\w.-])")


def normalise(text: str, ages: bool) -> str:
    for pattern, replacement in _VARIABLE:
        text = pattern.sub(replacement, text)
    return _AGE.sub("<age>", text) if ages else text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


STATE_TYPES = [
    ("jobsets", None),
    ("trainjobs", None),
    ("configmaps", None),
    ("secrets", None),
    ("pods", None),
    ("podgroups", "scheduling.x-k8s.io"),
    ("podgroups", "scheduling.volcano.sh"),
]


def _run(
    case: Case,
    call: Callable[[list[str]], int | None],
    port: int,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, Any]:
    srv = ApiServerDouble(port=port).start()
    try:
        srv.add_namespace(NS)
        srv.write_kubeconfig(Path(files["kc"]), namespace=NS)
        case.setup(srv)
        thread = None
        if case.during is not None:
            thread = threading.Thread(target=case.during, args=(srv,), daemon=True)
            thread.start()
        argv = case.argv(files)
        out, err = io.StringIO(), io.StringIO()
        with monkeypatch.context() as m:
            m.setattr(sys, "stdout", out)
            m.setattr(sys, "stderr", err)
            m.setattr(sys, "stdin", (Terminal if case.tty else io.StringIO)(case.stdin))
            if case.hook is not None:
                case.hook(m)
            code = call(argv)
        if thread is not None:
            thread.join(timeout=30)
        requests = sorted(
            {
                (
                    r.verb,
                    r.resource,
                    r.namespace,
                    r.name,
                    r.param("dryRun"),
                    r.param("fieldManager"),
                    r.param("propagationPolicy") or (r.json() or {}).get("propagationPolicy")
                    if r.method == "DELETE"
                    else None,
                )
                for r in srv.requests
            },
            key=repr,
        )
        left = {}
        if srv.running:
            for plural, group in STATE_TYPES:
                left[f"{plural}.{group}"] = sorted(
                    f"{o['metadata'].get('namespace')}/{o['metadata']['name']}"
                    for o in srv.objects(plural, None, group)
                )
        result = (code, normalise(out.getvalue(), case.ages), normalise(err.getvalue(), case.ages), requests, left)
        return srv.port, result
    finally:
        srv.stop()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return {**_runtime_files(tmp_path), "kc": str(tmp_path / "kubeconfig")}


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "POLL_INTERVAL", 0.05)


@pytest.mark.parametrize("body, case", CASES, ids=[f"{body.split(':')[1]}-{i}" for i, (body, _) in enumerate(CASES)])
def test_cluster_commands_on_the_fast_path_do_what_typer_does(
    body: str, case: Case, files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KTRAIN_NO_FASTPATH", raising=False)
    argv = case.argv(files)
    parsed = parse_command(argv)
    assert parsed is not None, f"the fast path declines {argv}"
    assert COMMANDS[command_path(argv)[0]] == body  # type: ignore[index]
    port, fast = _run(case, try_fast, 0, files, monkeypatch)
    assert fast[0] is not None
    _, typer_path = _run(case, main, port, files, monkeypatch)
    assert fast[:3] == typer_path[:3], argv
    assert fast[3:] == typer_path[3:], f"{argv}: other requests, or another cluster afterwards"


def test_fast_path_passes_each_body_what_the_typer_command_passes(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _typer_calls(monkeypatch)
    for _, case in CASES:
        argv = case.argv(files)
        seen.clear()
        assert main(argv) == 0  # the body only records its arguments: no cluster is contacted
        assert len(seen) == 1, argv
        assert parse_command(argv) == seen[0], argv


def test_every_fast_command_has_a_table(files: dict[str, str]) -> None:
    assert set(TABLES) | set(CLUSTER_TABLES) == set(COMMANDS.values())
    assert not set(TABLES) & set(CLUSTER_TABLES)
    for body, table in CLUSTER_TABLES.items():
        assert {COMMANDS[command_path(case.argv(files))[0]] for case in table} == {body}  # type: ignore[index]


@pytest.mark.parametrize("body", sorted(CLUSTER_TABLES))
def test_each_table_covers_every_option_of_its_command(body: str, files: dict[str, str]) -> None:
    """Every option of the command appears in its equivalence table, spelt some way."""
    path = next(path for path, name in COMMANDS.items() if name == body)
    parser = Parser(command_node(path))
    argvs = [case.argv(files) for case in CLUSTER_TABLES[body]]
    used = {arg.split("=", 1)[0] for argv in argvs for arg in argv}
    for arg in (arg for argv in argvs for arg in argv if arg[:1] == "-" and arg[1:2] not in ("-", "")):
        used.add(arg[:2])
        if all(not (parser.short.get("-" + ch) or {"takes_value": True})["takes_value"] for ch in arg[1:]):
            used |= {"-" + ch for ch in arg[1:]}  # flags run together: -pf
    options = {name: option for name, option in {**parser.long, **parser.short}.items() if option is not None}
    dests = {option["dest"] for option in options.values()}
    covered = {option["dest"] for name, option in options.items() if name in used}
    assert dests == covered, f"options never exercised: {sorted(dests - covered)}"


def test_the_tables_exercise_both_outcomes_and_every_exit_code_the_commands_promise(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only errors: each table has cases that succeed; together they reach 0, 1, 2, 4, 5, 124 and 130."""
    # (the codes come from the fast runs of the equivalence test; here, one cheap run per code)
    wanted = {
        0: CREATE_CASES[0],
        1: WAIT_CASES[1],
        2: DELETE_CASES[7],
        4: GET_CASES[4],
        5: LIST_CASES[8],
        124: WAIT_CASES[4],
        130: LOGS_CASES[16],
    }
    for code, case in wanted.items():
        assert _run(case, try_fast, 0, files, monkeypatch)[1][0] == code, case.argv(files)


@pytest.mark.parametrize(
    "args",
    [
        ["job", "list", "-A", "-o", "json"],
        ["job", "get", "demo", "-o", "yaml"],
        ["job", "logs", "demo", "--all"],
        ["job", "get", "missing"],
    ],
    ids=["list", "get", "logs", "not-found"],
)
def test_the_console_script_takes_the_fast_path_with_identical_results(args: list[str], tmp_path: Path) -> None:
    with ApiServerDouble() as srv:
        srv.add_namespace(NS)
        kubeconfig = str(srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS))
        jobs(srv)
        fast = _ktrain(args, KUBECONFIG=kubeconfig)
        slow = _ktrain(args, KUBECONFIG=kubeconfig, KTRAIN_NO_FASTPATH="1")
    assert fast.stderr.endswith("TYPER False\n") and slow.stderr.endswith("TYPER True\n")
    assert (fast.returncode, fast.stdout, fast.stderr.replace("TYPER False\n", "")) == (
        slow.returncode,
        slow.stdout,
        slow.stderr.replace("TYPER True\n", ""),
    )
    assert fast.stdout or fast.returncode == 4
