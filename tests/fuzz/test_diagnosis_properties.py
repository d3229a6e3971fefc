"""Property-based tests for `job why` (issue #29): whatever the cluster holds and whatever its
reads answer (or refuse), the diagnosis ends in a verdict — a code, a sentence — in a bounded
number of reads, and never raises; the parsers of server text answer or decline.

Objects have the shapes the API server guarantees (it validates core kinds and CRDs); their
values (messages, reasons, quantities, labels, taints, timestamps, counts) are arbitrary.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402 - after the skip
from hypothesis import strategies as st  # noqa: E402

from ktrain import constants as c  # noqa: E402
from ktrain.jobs.why.controllers import JOBS  # noqa: E402
from ktrain.jobs.why.diagnosis import READS, diagnose  # noqa: E402
from ktrain.jobs.why.facts import EVENTS, LOG, NOT_SERVED, SERVED, Facts, Read  # noqa: E402
from ktrain.jobs.why.gangs import POD_GROUP as why_POD_GROUP  # noqa: E402
from ktrain.jobs.why.nodes import NODE_PODS, NODES, parse_fit_error  # noqa: E402
from ktrain.jobs.why.queues import LOCAL_QUEUE, QUOTAS, WORKLOADS, parse_quota_refusal  # noqa: E402
from ktrain.jobs.why.volumes import CLAIMS  # noqa: E402

_EXAMPLES = int(os.environ.get("KTRAIN_PROPERTY_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=_EXAMPLES or 150,
    deadline=10_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=not _EXAMPLES,
    database=None,
)
NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.timezone.utc)

TEXT = st.text(max_size=40)
WORDS = st.sampled_from(
    [
        "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.",
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node "
        "affinity/selector.",
        "0/2 nodes are unavailable: 2 Too many pods.",
        "0/1 nodes are available: 1 node(s) were unschedulable. preemption: x",
        "0/4 nodes are available: pre-filter pod p cannot find enough sibling pods, current pods number: 1, "
        "minMember of group: 3.",
        'Error creating: pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=2, '
        "used: requests.cpu=4, limited: requests.cpu=4",
        "exceeded quota: , requested: , used: , limited: ",
        "0/ nodes are available: ",
        "[default] Rendezvous'ing worker group",
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: x",
        '0/3 nodes are available: persistentvolumeclaim "data" not found.',
        'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv"',
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',
        "0/4 nodes are available: 2 node(s) didn't find available persistent volumes to bind, 2 node(s) had "
        "volume node affinity conflict.",
        "0/2 nodes are available: 2 node(s) did not have enough free storage.",
        "0/4 nodes are available: 3 node(s) didn't match pod anti-affinity rules, 1 node(s) didn't match pod "
        "affinity rules.",
        "0/2 nodes are available: 2 node(s) didn't satisfy existing pods anti-affinity rules.",
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints (missing required label).",
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.",
        'Multi-Attach error for volume "pv" Volume is already used by pod(s) demo-node-0-0-1, x',
        'Multi-Attach error for volume "pv" Volume is already used by 2 pod(s) in different namespaces',
        'storageclass.storage.k8s.io "fast" not found',
    ]
)
MESSAGE = st.one_of(TEXT, WORDS, st.builds(lambda a, b: a + b, WORDS, TEXT))
QUANTITY = st.one_of(
    st.sampled_from(["0", "1", "8", "16", "500m", "1Gi", "900Gi", "1e3", "-1", "x", "", "1.5", "263921340Ki"]),
    st.integers(-5, 10**6),
)
RESOURCES = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods", "example.com/x"]), QUANTITY, max_size=4
)
STAMP = st.one_of(
    st.none(),
    st.sampled_from(["", "not a time"]),
    st.integers(0, 10**5).map(lambda s: (NOW - dt.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%SZ")),
)
LABELS = st.dictionaries(
    st.sampled_from(["gpu-type", "zone", "pool", c.COSCHEDULING_POD_GROUP_LABEL]), TEXT, max_size=3
)
TAINT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["a", "nvidia.com/gpu", ""]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule", ""]),
    },
    optional={"value": TEXT},
)
TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["a", "nvidia.com/gpu", ""]),
        "operator": st.sampled_from(["Exists", "Equal", "Gt", "Lt", "Bogus"]),
        "value": st.one_of(TEXT, st.sampled_from(["1", "9"])),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", ""]),
    },
)
EXPRESSION = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["zone", "gpu-type"]),
        "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "X"]),
    },
    optional={"values": st.lists(TEXT, max_size=2)},
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["node", "launcher", "x"])},
    optional={
        "image": TEXT,
        "resources": st.fixed_dictionaries({}, optional={"requests": RESOURCES, "limits": RESOURCES}),
    },
)
STATE = st.one_of(
    st.fixed_dictionaries(
        {
            "waiting": st.fixed_dictionaries(
                {
                    "reason": st.sampled_from(
                        [
                            "ErrImagePull",
                            "ImagePullBackOff",
                            "CrashLoopBackOff",
                            "CreateContainerConfigError",
                            "ContainerCreating",
                            "X",
                        ]
                    )
                },
                optional={"message": MESSAGE},
            )
        }
    ),
    st.fixed_dictionaries({"running": st.fixed_dictionaries({}, optional={"startedAt": STAMP})}),
    st.fixed_dictionaries(
        {
            "terminated": st.fixed_dictionaries(
                {"exitCode": st.integers(0, 255)},
                optional={"reason": st.sampled_from(["OOMKilled", "Error", "Completed"])},
            )
        }
    ),
)
CONTAINER_STATUS = st.fixed_dictionaries(
    {"name": st.sampled_from(["node", "x"]), "state": STATE},
    optional={"lastState": STATE, "restartCount": st.integers(0, 50)},
)
CONDITION = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["PodScheduled", "Ready", "Unschedulable", "QuotaReserved", "Admitted"]),
        "status": st.sampled_from(["True", "False"]),
    },
    optional={"reason": st.sampled_from(["Unschedulable", "Pending", "NotEnoughResources", ""]), "message": MESSAGE},
)

SELECTOR = st.fixed_dictionaries(
    {},
    optional={
        "matchLabels": st.dictionaries(st.sampled_from(["app", c.JOBSET_JOB_KEY_LABEL]), TEXT, max_size=2),
        "matchExpressions": st.lists(EXPRESSION, max_size=2),
    },
)
VOLUME = st.one_of(
    st.builds(
        lambda n, cl: {"name": n, "persistentVolumeClaim": {"claimName": cl}}, TEXT, st.sampled_from(["data", ""])
    ),
    st.builds(lambda n: {"name": n, "ephemeral": {}}, TEXT),
    st.builds(lambda n: {"name": n, "emptyDir": {}}, TEXT),
)
TERM = st.fixed_dictionaries(
    {"topologyKey": st.sampled_from(["zone", "kubernetes.io/hostname", ""])},
    optional={"labelSelector": st.one_of(st.none(), SELECTOR)},
)
POD_AFFINITY = st.fixed_dictionaries(
    {},
    optional={
        kind: st.fixed_dictionaries(
            {}, optional={"requiredDuringSchedulingIgnoredDuringExecution": st.lists(TERM, max_size=2)}
        )
        for kind in ("podAffinity", "podAntiAffinity")
    },
)
SPREAD = st.fixed_dictionaries(
    {"topologyKey": st.sampled_from(["zone", ""]), "maxSkew": st.integers(0, 3)},
    optional={"whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]), "labelSelector": SELECTOR},
)
CLAIM = st.builds(
    lambda name, phase, cls, ann, volume, deleting: {
        "metadata": {
            "name": name,
            "annotations": {"volume.kubernetes.io/storage-provisioner": ann} if ann else {},
            **({"deletionTimestamp": "2026-06-01T00:00:00Z"} if deleting else {}),
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            **({"storageClassName": cls} if cls is not None else {}),
            **({"volumeName": volume} if volume else {}),
        },
        "status": {"phase": phase} if phase else {},
    },
    st.sampled_from(["data", "ckpt", "demo-node-0-0-1-x"]),
    st.sampled_from(["Pending", "Bound", "Lost", None]),
    st.one_of(st.none(), st.sampled_from(["", "fast"])),
    st.one_of(st.none(), TEXT),
    st.one_of(st.none(), st.just("pv")),
    st.booleans(),
)

STEP = st.sampled_from(["node", "launcher", "dataset-initializer"])
# What the scheduler writes on a pod it cannot place (the verdicts that decode it need the most cases).
REFUSED_BY_SCHEDULER = st.builds(
    lambda message: [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}],
    st.one_of(WORDS, MESSAGE),
)


@st.composite
def pods(draw: Any) -> dict[str, Any]:
    rank = draw(st.integers(0, 3))
    spec: dict[str, Any] = {"containers": draw(st.lists(CONTAINER, min_size=1, max_size=2))}
    for key, strategy in (
        ("nodeSelector", LABELS),
        ("tolerations", st.lists(TOLERATION, max_size=2)),
        ("schedulerName", st.sampled_from(["default-scheduler", "volcano", "other"])),
        ("nodeName", st.sampled_from(["n0", "n1"])),
        (
            "affinity",
            st.builds(
                lambda terms: {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
                },
                st.lists(
                    st.fixed_dictionaries({}, optional={"matchExpressions": st.lists(EXPRESSION, max_size=2)}),
                    max_size=2,
                ),
            ),
        ),
        ("volumes", st.lists(VOLUME, max_size=2)),
        ("topologySpreadConstraints", st.lists(SPREAD, max_size=1)),
    ):
        if draw(st.booleans()):
            spec[key] = draw(strategy)
    if draw(st.booleans()):
        spec["affinity"] = {**spec.get("affinity", {}), **draw(POD_AFFINITY)}
    return {
        "metadata": {
            "name": f"demo-{draw(STEP)}-0-{rank}-{draw(st.integers(0, 9))}",
            "creationTimestamp": draw(STAMP),
            "labels": {
                c.JOBSET_NAME_LABEL: "demo",
                c.JOBSET_RJOB_NAME_LABEL: draw(STEP),
                **draw(LABELS),
            },
            "annotations": {
                c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank),
                **({c.VOLCANO_GROUP_NAME_ANNOTATION: "pg"} if draw(st.booleans()) else {}),
                **({c.JOBSET_EXCLUSIVE_ANNOTATION: "zone"} if draw(st.booleans()) else {}),
            },
        },
        "spec": spec,
        "status": {
            "phase": draw(st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown"])),
            "conditions": draw(st.one_of(st.lists(CONDITION, max_size=2), REFUSED_BY_SCHEDULER)),
            "containerStatuses": draw(st.lists(CONTAINER_STATUS, max_size=2)),
        },
    }


NODE = st.builds(
    lambda name, labels, taints, allocatable, cordoned: {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints, **({"unschedulable": True} if cordoned else {})},
        "status": {"allocatable": allocatable},
    },
    st.sampled_from(["n0", "n1", "n2"]),
    LABELS,
    st.lists(TAINT, max_size=2),
    RESOURCES,
    st.booleans(),
)
EVENT = st.builds(
    lambda kind, name, reason, message, count: {
        "involvedObject": {"kind": kind, "name": name},
        "reason": reason,
        "message": message,
        "count": count,
    },
    st.sampled_from(["Pod", "Job", "JobSet", "TrainJob", "PersistentVolumeClaim"]),
    st.sampled_from(["demo", "demo-node-0", "demo-node-0-0-1", "data"]),
    st.sampled_from(
        ["FailedCreate", "FailedScheduling", "Failed", "BackOff", "FailedAttachVolume", "ProvisioningFailed"]
    ),
    MESSAGE,
    st.one_of(st.none(), st.integers(0, 9)),
)
WORKLOAD = st.builds(
    lambda conditions, cq, checks: {
        "metadata": {"name": "wl", "ownerReferences": [{"kind": "JobSet", "name": "demo"}]},
        "spec": {"podSets": [{"name": "node", "count": 2, "template": {"spec": {"containers": [{"name": "node"}]}}}]},
        "status": {
            "conditions": conditions,
            **({"admission": {"clusterQueue": cq}} if cq else {}),
            "admissionChecks": checks,
        },
    },
    st.lists(CONDITION, max_size=2),
    st.one_of(st.none(), TEXT),
    st.lists(
        st.fixed_dictionaries({"name": TEXT, "state": st.sampled_from(["Ready", "Pending", "Retry"])}), max_size=2
    ),
)
POD_GROUP = st.fixed_dictionaries(
    {
        "spec": st.fixed_dictionaries({"minMember": st.integers(0, 6)}, optional={"queue": TEXT}),
        "status": st.fixed_dictionaries(
            {},
            optional={
                "phase": st.sampled_from(["Pending", "Inqueue", "Running"]),
                "conditions": st.lists(CONDITION, max_size=1),
            },
        ),
    }
)
LINES = st.lists(st.tuples(STAMP.map(lambda s: s or ""), MESSAGE), max_size=4)
REFUSED = object()


def _answer(draw: Any, read: Read) -> Any:
    """What a cluster could answer to `read`: a value of the right shape, nothing, or a refusal."""
    if draw(st.integers(0, 5)) == 0:
        return REFUSED
    strategies = {
        EVENTS: st.lists(EVENT, max_size=3),
        JOBS: st.lists(st.just({"metadata": {"name": "demo-node-0"}}), max_size=2),
        NODES: st.lists(NODE, max_size=3),
        NODE_PODS: st.lists(pods(), max_size=3),
        QUOTAS: st.lists(
            st.builds(
                lambda hard, used: {"metadata": {"name": "q"}, "status": {"hard": hard, "used": used}},
                st.dictionaries(
                    st.sampled_from(["requests.cpu", "requests.nvidia.com/gpu", "limits.cpu"]), QUANTITY, max_size=2
                ),
                st.dictionaries(st.sampled_from(["requests.cpu", "requests.nvidia.com/gpu"]), QUANTITY, max_size=2),
            ),
            max_size=2,
        ),
        WORKLOADS: st.one_of(st.just(NOT_SERVED), st.lists(WORKLOAD, max_size=2)),
        LOCAL_QUEUE: st.one_of(st.none(), st.builds(lambda cq: {"spec": {"clusterQueue": cq}}, TEXT)),
        why_POD_GROUP: st.one_of(st.none(), POD_GROUP),
        SERVED: st.booleans(),
        LOG: LINES,
        CLAIMS: st.lists(CLAIM, max_size=3),
    }
    return draw(strategies[read.what])


def _jobset(draw: Any) -> dict[str, Any]:
    labels = {c.KUEUE_QUEUE_LABEL: "q"} if draw(st.booleans()) else {}
    return {
        "apiVersion": c.JOBSET_API_VERSION,
        "kind": "JobSet",
        "metadata": {"name": "demo", "labels": labels, "creationTimestamp": draw(STAMP)},
        "spec": {
            "suspend": draw(st.integers(0, 4)) == 0,
            "replicatedJobs": [
                {
                    "name": draw(st.sampled_from(["node", "launcher"])),
                    "replicas": draw(st.integers(0, 3)),
                    "template": {
                        "spec": {
                            "parallelism": draw(st.integers(0, 3)),
                            "template": {"spec": {"containers": draw(st.lists(CONTAINER, min_size=1, max_size=1))}},
                        }
                    },
                }
            ],
        },
        "status": {
            "conditions": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "type": st.sampled_from(["Completed", "Failed", "Suspended"]),
                            "status": st.sampled_from(["True", "False"]),
                        }
                    ),
                    max_size=1,
                )
            )
        },
    }


@SETTINGS
@given(st.data())
def test_every_job_state_ends_in_a_verdict(data: Any) -> None:
    draw = data.draw
    jobset = _jobset(draw) if draw(st.integers(0, 4)) else None
    trainjob = (
        {
            "kind": "TrainJob",
            "metadata": {"name": "demo", "creationTimestamp": draw(STAMP)},
            "spec": {"trainer": {"numNodes": 2}},
        }
        if jobset is None or draw(st.integers(0, 3)) == 0
        else None
    )
    job_pods = None if draw(st.integers(0, 6)) == 0 else draw(st.lists(pods(), max_size=4))
    facts = Facts("demo", "ns", trainjob, jobset, job_pods)
    reads = 0
    for _ in range(len(READS) + 3):
        verdict = diagnose(facts, NOW)
        if verdict.needs is None:
            break
        assert verdict.needs.key not in facts.values and verdict.needs.key not in facts.unread, "asked twice"
        reads += 1
        value = _answer(draw, verdict.needs)
        if value is REFUSED:
            facts.refuse(verdict.needs, "forbidden")
        else:
            facts.record(verdict.needs, value)
    else:
        raise AssertionError("no verdict within the read budget")
    assert verdict.code and verdict.message
    assert all(isinstance(line, str) for line in verdict.evidence)
    assert len(verdict.unread) == len(facts.unread)
    assert reads <= 12


@SETTINGS
@given(st.one_of(st.text(max_size=300), MESSAGE))
def test_the_parsers_answer_or_decline(text: str) -> None:
    fit = parse_fit_error(text)
    assert fit is None or (fit.nodes is not None and all(isinstance(r, str) for _, r in fit.reasons))
    quota = parse_quota_refusal(text)
    assert quota is None or all(isinstance(part, dict) for part in quota[1:])
