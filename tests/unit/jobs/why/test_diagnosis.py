"""`ktrain.jobs.why.diagnosis.diagnose`: the verdict on a job from plain objects (no cluster, no clock).

Each case gives the objects a cluster would hold and the answers to the reads the diagnosis asks
for; the test plays the reader (`settle`), so it also checks which reads a case costs. The texts
are their writers' (kube-scheduler, kubelet, Kueue, Volcano, quota admission): see the comments
at each parser in ktrain/jobs/why/ and tests/apiserver/scheduling.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from apiserver.scheduling import RECORDED

from ktrain import constants as c
from ktrain.jobs.why.controllers import JOBS, NO_JOBSET_CONTROLLER, NO_TRAINER_CONTROLLER, POD_CREATION_FAILED
from ktrain.jobs.why.diagnosis import diagnose
from ktrain.jobs.why.facts import (
    EVENTS,
    LOG,
    NOT_SERVED,
    RUNNING,
    SERVED,
    SUCCEEDED,
    UNKNOWN,
    Facts,
    Verdict,
    document,
    main_container,
)
from ktrain.jobs.why.gangs import GANG, NO_SCHEDULER, POD_GROUP
from ktrain.jobs.why.nodes import (
    NODE_PODS,
    NODES,
    amount,
    matches_node,
    node_views,
    parse_fit_error,
    pod_ask,
)
from ktrain.jobs.why.nodes import (
    untolerated as why_untolerated,
)
from ktrain.jobs.why.placement import EXCLUSIVE_PLACEMENT, POD_AFFINITY
from ktrain.jobs.why.pods import CONTAINER_ERROR, CRASH_LOOP, FAILED, IMAGE_PULL, POD_FAILED, STARTING
from ktrain.jobs.why.queues import (
    LOCAL_QUEUE,
    NO_KUEUE,
    NO_WORKLOAD,
    NOT_ADMITTED,
    SUSPENDED,
    WORKLOADS,
    parse_quota_refusal,
)
from ktrain.jobs.why.queues import (
    QUEUED as why_QUEUED,
)
from ktrain.jobs.why.rendezvous import RENDEZVOUS_WAIT, rendezvous_wait
from ktrain.jobs.why.scheduling import (
    INSUFFICIENT,
    NO_MATCHING_NODE,
    NO_NODES,
    NODES_CORDONED,
    TOO_LARGE,
    UNSCHEDULABLE,
)
from ktrain.jobs.why.volumes import CLAIM_NOT_FOUND, CLAIM_PENDING, CLAIM_UNUSABLE, CLAIMS, VOLUME_NODE_CONFLICT

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


# --- the scheduler's message ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message, nodes, reasons",
    [
        (RECORDED["gpu16"], 8, [(8, "Insufficient nvidia.com/gpu")]),
        (RECORDED["mem"], 8, [(8, "Insufficient memory")]),
        (RECORDED["selector-event"], 8, [(8, "node(s) didn't match Pod's node affinity/selector")]),
        (
            RECORDED["selector-condition"],
            8,
            [(3, "node(s) didn't match Pod's node affinity/selector"), (5, "node(s) had untolerated taint(s)")],
        ),
        # before 1.32 the taint was named, with a ", " inside the reason
        (
            "0/3 nodes are available: 1 node(s) had taint {a: b}, that the pod didn't tolerate, 2 Too many pods.",
            3,
            [(1, "node(s) had taint {a: b}, that the pod didn't tolerate"), (2, "Too many pods")],
        ),
        # a PreFilter rejection (coscheduling) carries no counts
        (
            "0/4 nodes are available: pre-filter pod p cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 3.",
            4,
            [
                (
                    None,
                    "pre-filter pod p cannot find enough sibling pods, current pods number: 2, minMember of group: 3",
                )
            ],
        ),
        ("0/3 nodes are unavailable: 3 Insufficient nvidia.com/gpu.", 3, [(3, "Insufficient nvidia.com/gpu")]),
    ],
)
def test_parse_fit_error_reads_the_histogram(message: str, nodes: int, reasons: list[Any]) -> None:
    fit = parse_fit_error(message)
    assert fit is not None
    assert (fit.nodes, fit.reasons) == (nodes, reasons)


@pytest.mark.parametrize(
    "message", ["", "pod has unbound immediate PersistentVolumeClaims", "0/x nodes are available: 1 a."]
)
def test_parse_fit_error_declines_other_texts(message: str) -> None:
    assert parse_fit_error(message) is None


def test_parse_quota_refusal() -> None:
    message = (
        'Error creating: pods "p" is forbidden: exceeded quota: q, requested: limits.cpu=2,requests.cpu=2, '
        "used: limits.cpu=4,requests.cpu=4, limited: limits.cpu=4,requests.cpu=4"
    )
    assert parse_quota_refusal(message) == (
        "q",
        {"limits.cpu": "2", "requests.cpu": "2"},
        {"limits.cpu": "4", "requests.cpu": "4"},
        {"limits.cpu": "4", "requests.cpu": "4"},
    )
    assert parse_quota_refusal("exceeded quota: q") is None


# --- nodes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "toleration, taint, tolerated",
    [
        ({"operator": "Exists"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, True),
        ({"key": "a", "operator": "Exists"}, {"key": "a", "value": "b", "effect": "NoExecute"}, True),
        ({"key": "a", "value": "b"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, True),
        ({"key": "a", "value": "c"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, False),
        ({"key": "a", "operator": "Exists", "effect": "NoExecute"}, {"key": "a", "effect": "NoSchedule"}, False),
        ({"key": "b", "operator": "Exists"}, {"key": "a", "effect": "NoSchedule"}, False),
        ({"value": "b"}, {"key": "a", "value": "b", "effect": "NoSchedule"}, False),  # no key: only Exists
        ({"key": "n", "operator": "Gt", "value": "3"}, {"key": "n", "value": "5", "effect": "NoSchedule"}, True),
        ({"key": "n", "operator": "Lt", "value": "3"}, {"key": "n", "value": "5", "effect": "NoSchedule"}, False),
    ],
)
def test_tolerations_follow_component_helpers(toleration: JSON, taint: JSON, tolerated: bool) -> None:
    view = node_views([node("n", taints=[taint])], None)[0]
    assert (why_untolerated(pod(0, spec={"tolerations": [toleration]}), view) == []) is tolerated


def test_prefer_no_schedule_taints_never_block() -> None:
    view = node_views([node("n", taints=[{"key": "a", "effect": "PreferNoSchedule"}])], None)[0]
    assert why_untolerated(pod(0), view) == []


def _affinity(*terms: JSON) -> JSON:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


@pytest.mark.parametrize(
    "spec, matches",
    [
        ({"nodeSelector": {"zone": "a"}}, True),
        ({"nodeSelector": {"zone": "b"}}, False),
        (_affinity({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}), True),
        (_affinity({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}), False),
        (_affinity({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}), True),
        (_affinity({"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["4"]}]}), True),
        (_affinity({"matchExpressions": [{"key": "size", "operator": "Lt", "values": ["4"]}]}), False),
        (_affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), True),
        (_affinity({}), False),  # an empty term selects nothing
        (_affinity({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {"matchExpressions": []}), False),
        (
            _affinity(
                {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
                {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
            ),
            True,
        ),  # terms are ORed
    ],
)
def test_node_selector_and_required_affinity(spec: JSON, matches: bool) -> None:
    view = node_views([node("n1", labels={"zone": "a", "size": "8"})], None)[0]
    assert matches_node(pod(0, spec=spec), view) is matches


def test_pod_ask_defaults_requests_from_limits_and_takes_init_peaks() -> None:
    spec = {
        "containers": [
            {
                "name": "a",
                "resources": {"limits": {"nvidia.com/gpu": "8", "memory": "2Gi"}, "requests": {"memory": "1Gi"}},
            },
            {"name": "b", "resources": {"requests": {"cpu": "500m"}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
    }
    ask = pod_ask({"spec": spec})
    assert {k: amount(k, v) for k, v in ask.items()} == {"nvidia.com/gpu": "8", "memory": "1Gi", "cpu": "4"}


@pytest.mark.parametrize(
    "resource, text, shown",
    [
        ("memory", "900Gi", "900Gi"),
        ("memory", "263921340Ki", "251.7Gi"),
        ("memory", "512Mi", "512Mi"),
        ("cpu", "2500m", "2500m"),
        ("cpu", "4", "4"),
        ("nvidia.com/gpu", "16", "16"),
    ],
)
def test_amounts_read_as_people_write_them(resource: str, text: str, shown: str) -> None:
    from ktrain.engine.quantity import Quantity

    assert amount(resource, Quantity.parse(text)) == shown


def test_the_main_container_is_kubectls_default_else_node() -> None:
    p = pod(0)
    p["spec"]["containers"] = [{"name": "sidecar"}, {"name": "node"}]
    assert main_container(p) == "node"
    p["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] = "sidecar"
    assert main_container(p) == "sidecar"


# --- rendezvous ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines, waited",
    [
        ([(at(9), "starting"), (at(8), "[default] Rendezvous'ing worker group")], 8 * 60),
        (
            [
                (at(9), "Waiting in store based barrier to initialize process group for rank: 0"),
                (at(8), "Waiting in store based barrier to initialize process group for rank: 0"),
                (at(8), "*****"),
            ],
            9 * 60,
        ),
        ([(at(9), "[default] Rendezvous'ing worker group"), (at(1), "epoch 1 loss 0.5")], None),
        ([(at(9), "epoch 1 loss 0.5")], None),
        ([("", "[default] Rendezvous'ing worker group")], None),  # no timestamp: cannot say how long
    ],
)
def test_rendezvous_wait(lines: list[tuple[str, str]], waited: float | None) -> None:
    assert rendezvous_wait(lines, NOW) == waited


# --- verdicts: one row per state ------------------------------------------------------------------------

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


CASES: list[tuple[str, Any, dict[str, Any], str, str, list[str]]] = [
    # (id, facts, answers, code, message (start), reads)
    (
        "succeeded",
        lambda: facts(jobset(status={"conditions": [_cond("Completed", "True", "AllJobsCompleted")]}), []),
        {},
        SUCCEEDED,
        "job demo completed (AllJobsCompleted)",
        [],
    ),
    (
        "failed-oom",
        lambda: facts(
            jobset(status={"conditions": [_cond("Failed", "True", "FailedJobs", "jobset failed")]}),
            [
                pod(
                    0,
                    "Failed",
                    limits={"memory": "8Gi"},
                    statuses=running({"terminated": {"exitCode": 137, "reason": "OOMKilled"}}),
                )
            ],
        ),
        {},
        FAILED,
        "job demo failed: container node was OOMKilled: it used more than its memory limit 8Gi (exit code 137)",
        [],
    ),
    ("suspended", lambda: facts(jobset(suspend=True), []), {}, SUSPENDED, "job demo is suspended", []),
    (
        "no-kueue",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {WORKLOADS: NOT_SERVED},
        NO_KUEUE,
        "job demo is suspended for Kueue queue q, but the cluster does not serve Kueue",
        [WORKLOADS],
    ),
    (
        "kueue-workloads-forbidden",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {WORKLOADS: FORBIDDEN},
        why_QUEUED,
        "job demo is suspended, waiting for Kueue queue q to admit it",
        [WORKLOADS],
    ),
    (
        "kueue-no-workload-yet",
        lambda: facts(jobset(suspend=True, labels=QUEUED, created=0.1), []),
        {WORKLOADS: []},
        why_QUEUED,
        "job demo is suspended; Kueue has not made its Workload yet",
        [WORKLOADS],
    ),
    (
        "kueue-never-made-a-workload",
        lambda: facts(jobset(suspend=True, labels=QUEUED, created=10), []),
        {WORKLOADS: []},
        NO_WORKLOAD,
        "job demo is suspended for Kueue queue q, but Kueue made no Workload for it in 10m",
        [WORKLOADS],
    ),
    (
        "kueue-pending-local-queue-missing",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [_workload([_cond("QuotaReserved", "False", "Inadmissible", "LocalQueue q doesn't exist")])],
            LOCAL_QUEUE: None,
        },
        NOT_ADMITTED,
        "Kueue has not admitted job demo (queue q): Inadmissible: LocalQueue q doesn't exist",
        [WORKLOADS, LOCAL_QUEUE],
    ),
    (
        "kueue-pending-in-cluster-queue",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [_workload([_cond("QuotaReserved", "False", "Pending", PENDING)])],
            LOCAL_QUEUE: {"spec": {"clusterQueue": "cq"}},
        },
        NOT_ADMITTED,
        f"Kueue has not admitted job demo to ClusterQueue cq: Pending: {PENDING}",
        [WORKLOADS, LOCAL_QUEUE],
    ),
    (
        "kueue-admission-check",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [
                _workload(
                    [_cond("QuotaReserved", "True", "QuotaReserved"), _cond("Admitted", "False", "NoChecks")],
                    {"clusterQueue": "cq"},
                    [{"name": "prov", "state": "Pending", "message": "waiting for capacity"}],
                )
            ]
        },
        NOT_ADMITTED,
        "Kueue reserved quota for job demo in ClusterQueue cq, waiting for prov",
        [WORKLOADS],
    ),
    (
        "kueue-deactivated",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {
            WORKLOADS: [
                {
                    **_workload([_cond("Evicted", "True", "Deactivated", "The workload is deactivated")]),
                    "spec": {"active": False},
                }
            ]
        },
        NOT_ADMITTED,
        "Kueue's Workload jobset-demo-1 for job demo is deactivated (spec.active: false): it will not be admitted",
        [WORKLOADS],
    ),
    (
        "kueue-admitted",
        lambda: facts(jobset(suspend=True, labels=QUEUED), []),
        {WORKLOADS: [_workload([_cond("QuotaReserved", "True"), _cond("Admitted", "True")], {"clusterQueue": "cq"})]},
        why_QUEUED,
        "Kueue admitted job demo to ClusterQueue cq; it is being resumed",
        [WORKLOADS],
    ),
    (
        "trainer-starting",
        lambda: facts(
            None, [], trainjob={"kind": "TrainJob", "metadata": {"name": "demo", "creationTimestamp": at(0.1)}}
        ),
        {EVENTS: []},
        STARTING,
        "waiting for the Trainer controller to make the JobSet of TrainJob demo",
        [EVENTS],
    ),
    (
        "trainer-says-why",
        lambda: facts(
            None, [], trainjob={"kind": "TrainJob", "metadata": {"name": "demo", "creationTimestamp": at(0.1)}}
        ),
        {
            EVENTS: [
                {
                    "involvedObject": {"kind": "TrainJob", "name": "demo"},
                    "reason": "TrainJobResumed",
                    "message": 'runtime "x" not found',
                    "lastTimestamp": at(0),
                }
            ]
        },
        NO_TRAINER_CONTROLLER,
        'the Trainer controller has not made a JobSet for TrainJob demo: runtime "x" not found',
        [EVENTS],
    ),
    (
        "no-jobset-controller",
        lambda: facts(jobset(created=20), []),
        {JOBS: [], EVENTS: []},
        NO_JOBSET_CONTROLLER,
        "JobSet demo has no Jobs after 20m: is the JobSet controller running?",
        [JOBS, EVENTS],
    ),
    (
        "webhook-refuses-pods",
        lambda: facts(jobset(), []),
        {
            JOBS: [{"metadata": {"name": "demo-node-0"}}],
            EVENTS: [
                {
                    "involvedObject": {"kind": "Job", "name": "demo-node-0"},
                    "reason": "FailedCreate",
                    "message": 'Error creating: admission webhook "policy.example" denied the request: no GPUs here',
                }
            ],
        },
        POD_CREATION_FAILED,
        'the Job controller cannot create the pods of job demo: admission webhook "policy.example" denied the request',
        [JOBS, EVENTS],
    ),
    (
        "too-large",
        lambda: facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {NODES: NODES8},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; the largest node has 8 (8 nodes)",
        [NODES],
    ),
    (
        "too-large-mixed-nodes",
        lambda: facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {NODES: [node("a", gpus=8), node("b", gpus=4), node("c", gpus=0)]},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; the largest node has 8 (1 of 3 nodes)",
        [NODES],
    ),
    (
        "no-gpus-at-all",
        lambda: facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))]),
        {NODES: [{"metadata": {"name": "cpu"}, "status": {"allocatable": {"cpu": "8", "pods": "110"}}}]},
        TOO_LARGE,
        "each pod asks 16 nvidia.com/gpu; no node has any nvidia.com/gpu (1 node)",
        [NODES],
    ),
    (
        "busy-gpus",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    limits={"nvidia.com/gpu": "4"},
                    conditions=refused("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."),
                )
            ],
        ),
        {
            NODES: [node("a"), node("b")],
            NODE_PODS: [
                {
                    "spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "6"}}}]},
                    "status": {"phase": "Running"},
                },
                {
                    "spec": {"nodeName": "b", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "7"}}}]},
                    "status": {"phase": "Running"},
                },
            ],
        },
        INSUFFICIENT,
        "each pod asks 4 nvidia.com/gpu; the most free on any node is 2 (a); nodes have up to 8, "
        "other pods hold the rest",
        [NODES, NODE_PODS],
    ),
    (
        "each-node-short-of-something-else",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    requests={"cpu": "20", "nvidia.com/gpu": "4"},
                    conditions=refused("0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu."),
                )
            ],
        ),
        {
            NODES: [node("a"), node("b")],
            NODE_PODS: [
                {
                    "spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"cpu": "30"}}}]},
                    "status": {"phase": "Running"},
                },
                {
                    "spec": {"nodeName": "b", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "8"}}}]},
                    "status": {"phase": "Running"},
                },
            ],
        },
        INSUFFICIENT,
        "each pod asks 20 cpu; the most free on any node is 32 (b)",  # cpu first on a tie: the scheduler's order
        [NODES, NODE_PODS],
    ),
    (
        "selector",
        lambda: facts(
            jobset(),
            [pod(0, spec={"nodeSelector": {"gpu-type": "a100"}}, conditions=refused(RECORDED["selector-event"]))],
        ),
        {NODES: [node("h", labels={"gpu-type": "h100"}), node("t1", labels={"gpu-type": "t4"}), node("x")]},
        NO_MATCHING_NODE,
        "no node matches nodeSelector gpu-type=a100 (nodes have gpu-type: h100 ×1, t4 ×1, (none) ×1)",
        [NODES],
    ),
    (
        "selector-label-nowhere",
        lambda: facts(
            jobset(), [pod(0, spec={"nodeSelector": {"pool": "big"}}, conditions=refused(RECORDED["selector-event"]))]
        ),
        {NODES: NODES8},
        NO_MATCHING_NODE,
        "no node matches nodeSelector pool=big (no node has label pool)",
        [NODES],
    ),
    (
        "selector-labels-never-together",
        lambda: facts(
            jobset(),
            [pod(0, spec={"nodeSelector": {"a": "1", "b": "1"}}, conditions=refused(RECORDED["selector-event"]))],
        ),
        {NODES: [node("x", labels={"a": "1"}), node("y", labels={"b": "1"})]},
        NO_MATCHING_NODE,
        "no node matches nodeSelector a=1, b=1 (each label is on some node, never all on one)",
        [NODES],
    ),
    (
        "affinity",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec=_affinity({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]}),
                    conditions=refused(RECORDED["selector-event"]),
                )
            ],
        ),
        {NODES: [node("x", labels={"zone": "a"})]},
        NO_MATCHING_NODE,
        "no node matches the pod's required node affinity (nodes have zone: a ×1)",
        [NODES],
    ),
    (
        "cordoned",
        lambda: facts(jobset(), [pod(0, conditions=refused("0/1 nodes are available: 1 node(s) were unschedulable."))]),
        {NODES: [{**node("x"), "spec": {"unschedulable": True}}]},
        NODES_CORDONED,
        "every node pod demo-node-0-0-x may use is cordoned (1 node, spec.unschedulable)",
        [NODES],
    ),
    (
        "no-nodes",
        lambda: facts(jobset(), [pod(0, conditions=refused("0/0 nodes are available: ."))]),
        {NODES: []},
        NO_NODES,
        "the cluster has no nodes for pod demo-node-0-0-x",
        [NODES],
    ),
    (
        "nodes-forbidden-selector",
        lambda: facts(
            jobset(),
            [pod(0, spec={"nodeSelector": {"gpu-type": "a100"}}, conditions=refused(RECORDED["selector-condition"]))],
        ),
        {NODES: FORBIDDEN},
        NO_MATCHING_NODE,
        "3 of 8 nodes do not match the pod's node selector/affinity (gpu-type=a100); 5 of 8 nodes have taints "
        "the pod does not tolerate (the nodes could not be read to say more)",
        [NODES],
    ),
    (
        "scheduler-fits-now",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    conditions=refused(
                        # volumerestrictions/volume_restrictions.go ErrReasonDiskConflict: not decoded
                        "0/2 nodes are available: 2 node(s) had no available disk."
                    ),
                )
            ],
        ),
        {NODES: [node("a"), node("b")], NODE_PODS: []},
        UNSCHEDULABLE,
        "the scheduler cannot place pod demo-node-0-0-x: 0/2 nodes are available: 2 node(s) had no available disk",
        [NODES, NODE_PODS],
    ),
    (
        "unscheduled-default-scheduler",
        lambda: facts(jobset(), [pod(0, created=3)]),
        {},
        NO_SCHEDULER,
        "the default scheduler has not looked at pod demo-node-0-0-x in 3m: is it running?",
        [],
    ),
    (
        "young-pod-is-starting",
        lambda: facts(jobset(), [pod(0, created=0.05), pod(1, created=0.05)]),
        {},
        STARTING,
        "job demo is starting: 0 of 2 trainer pods are running",
        [],
    ),
    (
        "volcano-queue-pending",
        lambda: facts(
            jobset(),
            [pod(0, spec={"schedulerName": "volcano"}, annotations={c.VOLCANO_GROUP_NAME_ANNOTATION: "pg"}, created=3)],
        ),
        {SERVED: True, POD_GROUP: {"spec": {"minMember": 2, "queue": "research"}, "status": {"phase": "Pending"}}},
        why_QUEUED,
        "Volcano has not admitted PodGroup pg to queue research (phase Pending)",
        [SERVED, POD_GROUP],
    ),
    (
        "gang-missing-members",
        lambda: facts(
            jobset(replicas=3),
            [
                pod(
                    0,
                    labels={c.COSCHEDULING_POD_GROUP_LABEL: "pg"},
                    conditions=refused(
                        "0/2 nodes are available: pre-filter pod demo-node-0-0-x cannot find enough sibling pods, "
                        "current pods number: 1, minMember of group: 3."
                    ),
                )
            ],
        ),
        {NODES: [node("a")], POD_GROUP: {"spec": {"minMember": 3}}},
        GANG,
        "the gang needs 3 pods (PodGroup pg minMember) but only 1 exist",
        [NODES, POD_GROUP],
    ),
    (
        "image-pull",
        lambda: facts(
            jobset(),
            [pod(0, statuses=running({"waiting": {"reason": "ErrImagePull", "message": "rpc error: not found"}}))],
        ),
        {},
        IMAGE_PULL,
        "image trainer:1 cannot be pulled: rpc error: not found",
        [],
    ),
    (
        "image-pull-back-off-reads-the-event",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    statuses=running(
                        {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "trainer:1"'}}
                    ),
                )
            ],
        ),
        {
            EVENTS: [
                {
                    "involvedObject": {"kind": "Pod", "name": "demo-node-0-0-x"},
                    "reason": "Failed",
                    "message": 'Failed to pull image "trainer:1": denied',
                }
            ]
        },
        IMAGE_PULL,
        "image trainer:1 cannot be pulled: denied",
        [EVENTS],
    ),
    (
        "image-pull-back-off-1.33-message",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    statuses=running(
                        {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": 'Back-off pulling image "trainer:1": ErrImagePull: unauthorized',
                            }
                        }
                    ),
                )
            ],
        ),
        {},
        IMAGE_PULL,
        "image trainer:1 cannot be pulled: unauthorized",
        [],
    ),
    (
        "config-error",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    statuses=running(
                        {"waiting": {"reason": "CreateContainerConfigError", "message": 'secret "hf" not found'}}
                    ),
                )
            ],
        ),
        {},
        CONTAINER_ERROR,
        "container node of pod demo-node-0-0-x (node rank 0) cannot start: CreateContainerConfigError: "
        'secret "hf" not found',
        [],
    ),
    (
        "crash-loop-log-forbidden",
        lambda: facts(
            jobset(),
            [pod(0, "Running", statuses=running({"waiting": {"reason": "CrashLoopBackOff"}}, {"exitCode": 2}, 5))],
        ),
        {LOG: FORBIDDEN},
        CRASH_LOOP,
        "container node of pod demo-node-0-0-x (node rank 0) keeps crashing (5 restarts, last exit code 2)",
        [LOG],
    ),
    (
        "recovered-oom-is-history",
        lambda: facts(
            jobset(replicas=1),
            [pod(0, "Running", statuses=running(last={"exitCode": 137, "reason": "OOMKilled"}, restarts=1))],
        ),
        {LOG: [(at(0.1), "step 9")]},
        RUNNING,
        "job demo is running (1 of 1 trainer pods)",
        [LOG],
    ),
    (
        "pod-failed",
        lambda: facts(
            jobset(), [pod(0, "Failed", statuses=running({"terminated": {"exitCode": 3, "reason": "Error"}}))]
        ),
        {LOG: [(at(1), "boom")]},
        POD_FAILED,
        "container node of pod demo-node-0-0-x (node rank 0) failed with exit code 3",
        [LOG],
    ),
    (
        "running-no-log-yet",
        lambda: facts(jobset(replicas=1), [pod(0, "Running", statuses=running())]),
        {LOG: []},
        RUNNING,
        "job demo is running (1 of 1 trainer pods)",
        [LOG],
    ),
    (
        "rendezvous",
        lambda: facts(jobset(replicas=1), [pod(0, "Running", statuses=running())]),
        {LOG: [(at(4), "[default] Rendezvous'ing worker group")]},
        RENDEZVOUS_WAIT,
        "job demo runs but is stuck: rank 0 has waited 4m at the rendezvous for its peers",
        [LOG],
    ),
    (
        "rendezvous-too-young-to-call",
        lambda: facts(jobset(replicas=1), [pod(0, "Running", statuses=running())]),
        {LOG: [(at(0.5), "[default] Rendezvous'ing worker group")]},
        RUNNING,
        "job demo is running",
        [LOG],
    ),
    (
        "volume-never-mounts",
        lambda: facts(
            jobset(replicas=1),
            [pod(0, statuses=running({"waiting": {"reason": "ContainerCreating"}}), created=5)],
        ),
        {
            EVENTS: [
                {
                    "involvedObject": {"kind": "Pod", "name": "demo-node-0-0-x"},
                    "reason": "FailedMount",
                    "message": 'MountVolume.SetUp failed for volume "data" : configmap "cfg" not found',
                    "count": 4,
                }
            ]
        },
        CONTAINER_ERROR,
        "pod demo-node-0-0-x (node rank 0) cannot start on node n0: FailedMount: MountVolume.SetUp failed",
        [EVENTS],
    ),
    (
        "young-container-creating-is-starting",
        lambda: facts(
            jobset(replicas=1), [pod(0, statuses=running({"waiting": {"reason": "ContainerCreating"}}), created=0.5)]
        ),
        {},
        STARTING,
        "job demo is starting: 0 of 1 trainer pods are running; pod demo-node-0-0-x (node rank 0) is Pending "
        "(ContainerCreating)",
        [],
    ),
    (
        "pods-unreadable",
        lambda: facts(jobset(), None),
        {},
        UNKNOWN,
        "job demo is Created; its pods could not be read",
        [],
    ),
    # --- volumes: volumebinding/volume_binding.go (PreFilter) and binder.go; pv_controller.go ---
    (
        "claim-lost",
        lambda: facts(jobset(), [pod(0, spec=MOUNTS_DATA, conditions=refused(LOST))]),
        {CLAIMS: [claim("data", "Lost", volume="pv-9")]},
        CLAIM_UNUSABLE,
        "PersistentVolumeClaim data that pod demo-node-0-0-x (node rank 0) mounts lost its volume pv-9 (phase Lost)",
        [CLAIMS],
    ),
    (
        "claim-being-deleted",
        lambda: facts(jobset(), [pod(0, spec=MOUNTS_DATA, conditions=refused(DELETING))]),
        {CLAIMS: [claim("data", "Bound", deleting=True)]},
        CLAIM_UNUSABLE,
        "PersistentVolumeClaim data that pod demo-node-0-0-x (node rank 0) mounts is being deleted",
        [CLAIMS],
    ),
    (
        "ephemeral-claim-not-made-yet",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec={"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]},
                    conditions=refused(
                        "0/2 nodes are available: waiting for ephemeral volume controller to create the "
                        'persistentvolumeclaim "demo-node-0-0-x-scratch".'
                    ),
                )
            ],
        ),
        {CLAIMS: []},
        CLAIM_PENDING,
        "pod demo-node-0-0-x (node rank 0) waits for the ephemeral volume controller to create claim "
        "demo-node-0-0-x-scratch (volume scratch)",
        [CLAIMS],
    ),
    (
        "provisioning-failed-quotes-the-provisioner",
        lambda: facts(jobset(), [pod(0, spec=MOUNTS_DATA, conditions=refused(UNBOUND))]),
        {
            CLAIMS: [claim("data", "Pending", cls="fsx")],
            EVENTS: [
                {
                    "involvedObject": {"kind": "PersistentVolumeClaim", "name": "data"},
                    "reason": "ProvisioningFailed",
                    "message": 'failed to provision volume with StorageClass "fsx": rpc error: code = '
                    "ResourceExhausted desc = quota exceeded",
                    "lastTimestamp": at(1),
                }
            ],
        },
        CLAIM_PENDING,
        "PersistentVolumeClaim data (volume data of pod demo-node-0-0-x (node rank 0)) is not bound: "
        'ProvisioningFailed: failed to provision volume with StorageClass "fsx": rpc error',
        [CLAIMS, EVENTS],
    ),
    (
        "bound-volume-in-another-zone",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec=MOUNTS_DATA,
                    conditions=refused(
                        "0/3 nodes are available: 3 node(s) had volume node affinity conflict. preemption: 0/3 "
                        "nodes are available: 3 Preemption is not helpful for scheduling."
                    ),
                )
            ],
        ),
        {CLAIMS: [claim("data", "Bound", volume="pv-1", cls="gp3")]},
        VOLUME_NODE_CONFLICT,
        "the volumes of pod demo-node-0-0-x (node rank 0) are pinned (PersistentVolume node affinity, e.g. a zone)",
        [CLAIMS],
    ),
    (
        "missing-claim-with-claims-forbidden",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec=MOUNTS_DATA,
                    conditions=refused('0/2 nodes are available: persistentvolumeclaim "data" not found.'),
                )
            ],
        ),
        {CLAIMS: FORBIDDEN},
        CLAIM_NOT_FOUND,
        "pod demo-node-0-0-x (node rank 0) mounts PersistentVolumeClaim data, which does not exist",
        [CLAIMS],
    ),
    # --- interpodaffinity/filtering.go, podtopologyspread, JobSet's exclusive placement ---
    (
        "pod-anti-affinity-names-the-rule",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [ANTI]}}},
                    conditions=refused("0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."),
                )
            ],
        ),
        {NODES: [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})], NODE_PODS: []},
        POD_AFFINITY,
        "pod demo-node-0-0-x's required anti-affinity keeps it out of 2 of 2 nodes (topologyKey zone, pods "
        "matching app=db,tier in (a,b)): pods it must not share a domain with run there",
        [NODES, NODE_PODS],
    ),
    (
        "exclusive-placement-with-node-pods-forbidden",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    annotations={c.JOBSET_EXCLUSIVE_ANNOTATION: "zone"},
                    conditions=refused("0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."),
                )
            ],
        ),
        {NODES: [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})], NODE_PODS: FORBIDDEN},
        EXCLUSIVE_PLACEMENT,
        "JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology: zone) puts each Job in a zone "
        "domain of its own; no zone domain of 2 is free for it (which Jobs hold them could not be read",
        [NODES, NODE_PODS],
    ),
    (
        "exclusive-placement-on-nodes-without-the-label",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    annotations={c.JOBSET_EXCLUSIVE_ANNOTATION: "rack"},
                    conditions=refused("0/2 nodes are available: 2 node(s) didn't match pod affinity rules."),
                )
            ],
        ),
        {NODES: [node("a"), node("b")], NODE_PODS: []},
        EXCLUSIVE_PLACEMENT,
        "JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology: rack) puts each Job in a rack "
        "domain of its own, and no node has label rack",
        [NODES, NODE_PODS],
    ),
    (
        "anti-affinity-with-nodes-forbidden",
        lambda: facts(
            jobset(),
            [
                pod(
                    0,
                    annotations={c.JOBSET_EXCLUSIVE_ANNOTATION: "zone"},
                    conditions=refused(
                        "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match pod "
                        "anti-affinity rules."
                    ),
                )
            ],
        ),
        {NODES: FORBIDDEN},
        INSUFFICIENT,
        "1 of 4 nodes lack that much nvidia.com/gpu; 3 of 4 nodes are in zone domains other Jobs hold "
        "(JobSet exclusive placement, alpha.jobset.sigs.k8s.io/exclusive-topology: zone)",
        [NODES],
    ),
]


@pytest.mark.parametrize(
    "make, answers, code, message, reads", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verdicts(make: Any, answers: dict[str, Any], code: str, message: str, reads: list[str]) -> None:
    verdict, made = settle(make(), answers)
    assert verdict.code == code, verdict
    assert verdict.message.startswith(message), verdict.message
    assert made == reads
    assert verdict.ok is (code in (RUNNING, SUCCEEDED))


def test_a_refused_read_is_listed_and_never_asked_again() -> None:
    f = facts(jobset(limits=GPU16), [pod(0, limits=GPU16, conditions=refused(RECORDED["gpu16"]))])
    verdict, made = settle(f, {NODES: FORBIDDEN})
    assert made == [NODES]
    assert verdict.code == INSUFFICIENT
    assert verdict.unread == ['nodes: forbidden: User "u" cannot list resource']
    assert diagnose(f, NOW).needs is None  # decided: no read left to make


def test_base_notes_are_listed_with_the_refused_reads() -> None:
    f = facts(jobset(suspend=True), [])
    f.notes.append('trainjobs.trainer.kubeflow.org "demo" is forbidden: User "u" cannot get resource')
    verdict, _ = settle(f, {})
    assert verdict.unread == ['trainjobs.trainer.kubeflow.org "demo" is forbidden: User "u" cannot get resource']


def test_the_document_has_a_fixed_key_order() -> None:
    verdict, _ = settle(facts(jobset(suspend=True), []), {})
    assert list(document(verdict)) == ["reason", "message", "evidence", "next", "unread"]
