"""The convert report says one true thing about a PyTorchJob Master's pod template (issue #37,
item 9c): kept when the Master runs on node 0 of the Worker's step (the templates are the same but
for the command), dropped when they differ and the job is put onto a bundled runtime anyway (the
Worker's template runs on every node, node 0 included). It used to say both."""

from __future__ import annotations

from typing import Any

import yaml

from ktrain.convert import convert_documents
from ktrain.convert.report import DROPPED, KEPT
from ktrain.inputs.documents import load_documents

MASTER = ("spec", "pytorchReplicaSpecs", "Master")


def pytorchjob(master_image: str, master_command: list[str]) -> str:
    def replica(n: int, image: str, command: list[str]) -> dict[str, Any]:
        container = {"name": "pytorch", "image": image, "command": command}
        return {"replicas": n, "template": {"spec": {"containers": [container]}}}

    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": replica(1, master_image, master_command),
                "Worker": replica(2, "img:1", ["python", "train.py"]),
            }
        },
    }
    return yaml.safe_dump(job)


def statuses(text: str, runtime: str | None) -> dict[str, set[str]]:
    (conv,) = convert_documents(load_documents(text, "job.yaml"), runtime=runtime)
    out: dict[str, set[str]] = {}
    for row in conv.rows:
        out.setdefault(row.field, set()).add(row.status)
    return out


def test_a_master_template_unlike_the_workers_is_reported_dropped_not_kept() -> None:
    rows = statuses(pytorchjob("img:other", ["python", "train.py"]), runtime="torch-distributed")
    master, template = ".".join(MASTER), ".".join((*MASTER, "template"))
    assert rows[master] == {DROPPED}
    assert KEPT not in rows.get(template, set())  # it was "kept: TrainJob (same template as the Worker)"


def test_a_master_template_like_the_workers_is_reported_kept_on_node_0() -> None:
    for command in (["python", "train.py"], ["python", "master.py"]):  # the same, or a shell switch on node 0
        rows = statuses(pytorchjob("img:1", command), runtime=None)
        assert rows[".".join((*MASTER, "template"))] == {KEPT}
        assert DROPPED not in rows.get(".".join(MASTER), set())
