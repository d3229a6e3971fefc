"""A job's objects as a cluster holds them, and the reader the diagnosis asks (`settle`): the
vocabulary of the tests of `ktrain.jobs.why` (one file per area, tests/unit/jobs/why/test_<area>.py).

The texts are their writers' (kube-scheduler, kubelet, Kueue, Volcano, quota admission): see the
comments at each parser in ktrain/jobs/why/ and tests/apiserver/scheduling.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ktrain import constants as c
from ktrain.jobs.why.diagnosis import diagnose
from ktrain.jobs.why.facts import Facts, Verdict

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.timezone.utc)

JSON = dict[str, Any]


def at(minutes_ago: float) -> str:
    return (NOW - dt.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def jobset(
    name: str = "demo",
    *,
    replicas: int = 2,
    suspend: bool = False,
    labels: JSON | None = None,
    status: JSON | None = None,
    created: float = 5,
    requests: JSON | None = None,
    limits: JSON | None = None,
) -> JSON:
    container: JSON = {"name": "node", "image": "trainer:1"}
    if requests or limits:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {
        "apiVersion": c.JOBSET_API_VERSION,
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": "js-uid",
            "labels": labels or {},
            "creationTimestamp": at(created),
        },
        "spec": {
            "suspend": suspend,
            "replicatedJobs": [
                {
                    "name": "node",
                    "replicas": replicas,
                    "template": {
                        "metadata": {"labels": {c.LABEL_ANCESTOR: c.ANCESTOR_TRAINER}},
                        "spec": {"template": {"spec": {"containers": [container]}}},
                    },
                }
            ],
        },
        **({"status": status} if status is not None else {}),
    }


def pod(
    rank: int,
    phase: str = "Pending",
    *,
    requests: JSON | None = None,
    limits: JSON | None = None,
    spec: JSON | None = None,
    conditions: list[JSON] | None = None,
    statuses: list[JSON] | None = None,
    created: float = 5,
    labels: JSON | None = None,
    annotations: JSON | None = None,
) -> JSON:
    container: JSON = {"name": "node", "image": "trainer:1"}
    if requests or limits:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    status: JSON = {"phase": phase}
    if conditions is not None:
        status["conditions"] = conditions
    if statuses is not None:  # a kubelet reports on it: it is bound to a node
        status["containerStatuses"] = statuses
        status.setdefault("conditions", [{"type": "PodScheduled", "status": "True"}])
        spec = {"nodeName": "n0", **(spec or {})}
    return {
        "metadata": {
            "name": f"demo-node-0-{rank}-x",
            "namespace": "ns",
            "creationTimestamp": at(created),
            "labels": {c.JOBSET_NAME_LABEL: "demo", c.JOBSET_RJOB_NAME_LABEL: "node", **(labels or {})},
            "annotations": {c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank), **(annotations or {})},
        },
        "spec": {"containers": [container], "schedulerName": "default-scheduler", **(spec or {})},
        "status": status,
    }


def refused(message: str) -> list[JSON]:
    return [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]


def node(
    name: str, *, gpus: int = 8, memory: str = "256Gi", labels: JSON | None = None, taints: list[JSON] | None = None
) -> JSON:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": "32", "memory": memory, "nvidia.com/gpu": str(gpus), "pods": "110"}},
    }


def running(state: JSON | None = None, last: JSON | None = None, restarts: int = 0) -> list[JSON]:
    cs: JSON = {"name": "node", "state": state or {"running": {"startedAt": at(3)}}, "restartCount": restarts}
    if last is not None:
        cs["lastState"] = {"terminated": last}
    return [cs]


def settle(facts: Facts, answers: dict[str, Any]) -> tuple[Verdict, list[str]]:
    """Play the reader: answer each read from `answers` (by `what`, or by key for a log);
    a value `FORBIDDEN` refuses the read as RBAC would. Returns the verdict and the reads made."""
    made: list[str] = []
    for _ in range(20):
        verdict = diagnose(facts, NOW)
        if verdict.needs is None:
            return verdict, made
        read = verdict.needs
        made.append(read.what)
        value = answers.get(read.key, answers.get(read.what, MISSING))
        assert value is not MISSING, f"unexpected read {read.key}"
        if value is FORBIDDEN:
            facts.refuse(read, 'forbidden: User "u" cannot list resource')
        else:
            facts.record(read, value)
    raise AssertionError("no verdict")


MISSING = object()

FORBIDDEN = object()


def facts(js: JSON | None = None, pods: list[JSON] | None = None, trainjob: JSON | None = None) -> Facts:
    return Facts("demo", "ns", trainjob, js, pods)


GPU16 = {"nvidia.com/gpu": "16"}

NODES8 = [node(f"n{i}") for i in range(8)]


def _workload(conditions: list[JSON], admission: JSON | None = None, checks: list[JSON] | None = None) -> JSON:
    status: JSON = {"conditions": conditions}
    if admission:
        status["admission"] = admission
    if checks:
        status["admissionChecks"] = checks
    return {
        "metadata": {"name": "jobset-demo-1", "ownerReferences": [{"kind": "JobSet", "name": "demo", "uid": "js-uid"}]},
        "spec": {"queueName": "q", "podSets": [{"name": "node", "count": 2}]},
        "status": status,
    }


def _cond(kind: str, status: str, reason: str = "", message: str = "") -> JSON:
    return {"type": kind, "status": status, "reason": reason, "message": message}


QUEUED = {c.KUEUE_QUEUE_LABEL: "q"}

PENDING = "couldn't assign flavors to pod set node: insufficient quota for nvidia.com/gpu in flavor f in ClusterQueue"

MOUNTS_DATA: JSON = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}

UNBOUND = "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."

LOST = '0/2 nodes are available: persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-9".'

DELETING = '0/2 nodes are available: persistentvolumeclaim "data" is being deleted.'

ANTI: JSON = {
    "topologyKey": "zone",
    "labelSelector": {
        "matchLabels": {"app": "db"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
    },
}


def claim(name: str, phase: str, *, cls: str | None = None, volume: str | None = None, deleting: bool = False) -> JSON:
    """A PersistentVolumeClaim as the PV controller keeps it (status.phase)."""
    meta: JSON = {"name": name, "namespace": "ns", "creationTimestamp": at(10)}
    if deleting:
        meta["deletionTimestamp"] = at(1)
    spec: JSON = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume is not None:
        spec["volumeName"] = volume
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def _affinity(*terms: JSON) -> JSON:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


def check_verdict(facts: Facts, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    """One verdict case: its code, the start of its message, the reads it cost, and `ok` only for a
    running or finished job."""
    from ktrain.jobs.why.facts import RUNNING, SUCCEEDED

    verdict, made = settle(facts, answers)
    assert verdict.code == code, verdict
    assert verdict.message.startswith(message), verdict.message
    assert made == reads
    assert verdict.ok is (code in (RUNNING, SUCCEEDED))
