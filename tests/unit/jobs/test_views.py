"""`ktrain.jobs.views`: what `job get` and `job why` print as data (`-o yaml|json`, the Python API's
`get` and `why`): the derived view in a fixed key order, the pods and warnings as rows."""

from __future__ import annotations

from typing import Any

from ktrain.jobs import state as status
from ktrain.jobs.views import JobDetails, details_document, why_document
from ktrain.jobs.why.diagnosis import diagnose

from .why.objects import NOW, facts, jobset, pod, running

HEAD = ["name", "namespace", "kind", "runtime", "nodes", "state", "reason", "message", "waiting", "trainerPods"]


def details(**extra: Any) -> JobDetails:
    js = jobset(replicas=2)
    pods = [pod(0, "Running", statuses=running(restarts=2)), pod(1)]
    return JobDetails(status.summarize(None, js, pods), None, js, pods=pods, **extra)


def test_the_document_leads_with_the_job_and_keeps_its_key_order() -> None:
    doc = details_document(details())
    assert list(doc)[: len(HEAD)] == HEAD
    assert [k for k in doc if k in ("conditions", "replicatedJobs", "pods", "progress", "warnings")] == [
        "conditions",
        "replicatedJobs",
        "pods",
        "progress",
        "warnings",
    ]
    assert (doc["name"], doc["namespace"], doc["kind"]) == ("demo", "ns", "JobSet")
    assert doc["trainerPods"] == {"ready": 1, "expected": 2}
    assert "why" not in doc and doc["progress"] is None  # neither was asked for


def test_pods_are_rows_with_their_rank_phase_and_restarts() -> None:
    rows = details_document(details())["pods"]
    assert [(r["name"], r["step"], r["rank"], r["phase"], r["restarts"]) for r in rows] == [
        ("demo-node-0-0-x", "node", 0, "Running", 2),
        ("demo-node-0-1-x", "node", 1, "Pending", 0),
    ]


def test_warnings_name_their_object() -> None:
    event = {
        "involvedObject": {"kind": "Pod", "name": "demo-node-0-1-x"},
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available",
        "count": 4,
        "lastTimestamp": "2026-06-01T11:59:00Z",
    }
    (warning,) = details_document(details(warnings=[event]))["warnings"]
    assert warning == {
        "object": "Pod/demo-node-0-1-x",
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available",
        "count": 4,
        "lastTimestamp": "2026-06-01T11:59:00Z",
    }


def test_a_verdict_asked_for_is_shown_as_why() -> None:
    f = facts(jobset(suspend=True), [])
    doc = details_document(details(verdict=diagnose(f, NOW)))
    assert doc["why"]["running"] is False and doc["why"]["reason"] == "Suspended"


def test_the_why_document_is_the_job_its_state_and_the_verdict() -> None:
    f = facts(jobset(suspend=True), [])
    doc = why_document(f, diagnose(f, NOW))
    assert list(doc) == ["name", "namespace", "state", "running", "reason", "message", "evidence", "next", "unread"]
    assert (doc["name"], doc["namespace"], doc["state"], doc["running"], doc["reason"]) == (
        "demo",
        "ns",
        "Suspended",
        False,
        "Suspended",
    )
