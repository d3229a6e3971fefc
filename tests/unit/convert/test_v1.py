"""ktrain/convert/v1.py: the job's kind and apiVersion, its name (generateName), and the queue labels
that reach the JobSet. Each golden case names the v1 code it was checked against by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from v1convert import TF_FULL, kind_of, one, pytorch, rendered, rows

from ktrain.convert.report import APPROXIMATED, KEPT
from ktrain.errors import InputError


def test_unknown_kind_lists_the_supported_ones() -> None:
    with pytest.raises(InputError) as exc:
        one("apiVersion: kubeflow.org/v1\nkind: CaffeJob\nmetadata: {name: x}\nspec: {}\n")
    assert "unsupported kind 'CaffeJob'" in exc.value.message and "PyTorchJob (kubeflow.org/v1)" in exc.value.message
    assert (exc.value.line, exc.value.column) == (2, 7)


def test_unknown_api_version() -> None:
    with pytest.raises(InputError, match=re.escape("unsupported apiVersion 'kubeflow.org/v1beta2' for TFJob")) as exc:
        one(TF_FULL.replace("kubeflow.org/v1", "kubeflow.org/v1beta2"))
    assert exc.value.line == 1


QUEUED = {"kueue.x-k8s.io/queue-name": "team-q", "kueue.x-k8s.io/priority-class": "high"}


@pytest.mark.parametrize("restart", [None, "Never"], ids=["bundled", "generated"])
def test_kueue_labels_reach_the_jobset_and_suspend_is_kept(restart: str | None, tmp_path: Path) -> None:
    """Kueue's guide for v1 jobs ("Run a Kubeflow job", kueue.sigs.k8s.io): the queue and priority
    labels on the job, runPolicy.suspend true. With --target jobset the JobSet is what Kueue
    admits, so it carries both labels (ENGINE.md §4.1: labels reach the JobSet through a runtime
    patch) and stays suspended until Kueue resumes it."""
    job = pytorch(QUEUED, {"suspend": True}, restart)
    objects = rendered(job, tmp_path)
    jobset = kind_of(objects, "JobSet")
    assert jobset["metadata"]["labels"] == QUEUED
    assert jobset["spec"]["suspend"] is True
    conv = one(job)
    assert conv.trainjob["metadata"]["labels"] == QUEUED  # --target trainjob: Kueue reads the TrainJob
    for key in QUEUED:
        assert rows(conv)[f"metadata.labels.{key}"][0] == KEPT


def test_kai_queue_label_reaches_the_jobset(tmp_path: Path) -> None:
    """KAI's pod-grouper reads the queue from the top owner's labels (kai-scheduler
    pkg/podgrouper): the JobSet with --target jobset."""
    objects = rendered(pytorch({"kai.scheduler/queue": "research", "team": "a"}), tmp_path)
    assert kind_of(objects, "JobSet")["metadata"]["labels"] == {"kai.scheduler/queue": "research"}


def test_kai_legacy_queue_label_reaches_the_jobset(tmp_path: Path) -> None:
    """KAI-Scheduler's pod-grouper read the queue from the top owner's `runai/queue` label before it
    was renamed `kai.scheduler/queue` (its docs' elastic PyTorchJob sets only that one). Left on the
    TrainJob alone, the JobSet (the top owner with --target jobset) had no queue."""
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "el", "labels": {"runai/queue": "test", "team": "a"}},
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {
                            "schedulerName": "kai-scheduler",
                            "containers": [{"name": "pytorch", "image": "t:1", "command": ["torchrun", "x.py"]}],
                        }
                    },
                }
            }
        },
    }
    jobset = next(o for o in rendered(job, tmp_path) if o["kind"] == "JobSet")
    assert jobset["metadata"]["labels"] == {"runai/queue": "test"}
    assert rows(one(job))["metadata.labels.runai/queue"][0] == KEPT


def test_generate_name_gives_a_name_derived_from_the_spec() -> None:
    job = pytorch()
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "run-"
    a, b = one(job), one(job)
    assert a.name == b.name and a.name.startswith("run-") and len(a.name) == len("run-") + 5
    assert rows(a)["metadata.generateName"][0] == APPROXIMATED


def test_derived_name_is_the_prefix_and_five_characters_of_the_specs_digest() -> None:
    from ktrain.convert.v1 import derived_name

    spec = {"a": 1, "b": [2]}
    name = derived_name("run-", spec)
    assert name == derived_name("run-", {"b": [2], "a": 1})  # key order does not matter
    assert name.startswith("run-") and len(name) == 9 and name != derived_name("run-", {"a": 2})
    assert len(derived_name("x" * 80, spec)) == 63  # a DNS label, as the API server's generateName
