"""`job why` for gangs and schedulers: a PodGroup the nodes cannot hold, pods no scheduler looks at
(a `schedulerName` that is not running). Reads: the PodGroup (`POD_GROUP`).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs.why.facts import (
    SCHEDULER_GRACE,
    SERVED,
    Facts,
    Read,
    Verdict,
    age_of,
    ago_of,
    condition_of,
    container_statuses,
    meta,
    need,
    pod_name,
    pod_where,
    read_kind,
    spec_of,
    status_of,
)
from ktrain.jobs.why.nodes import NodeView, matches_node, one_of, untolerated, with_usage
from ktrain.jobs.why.queues import QUEUED

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt

    from ktrain.engine.quantity import Quantity
    from ktrain.util.jsondata import Obj


NO_SCHEDULER = "NoScheduler"
GANG = "GangUnschedulable"


POD_GROUP = read_kind("pod-group", "PodGroup {name} ({api_version})")


def pod_group(f: Facts, pod: Obj) -> tuple[str, str] | None:
    """(apiVersion, name) of the PodGroup the pod belongs to: coscheduling's label, Volcano's annotation."""
    labels = meta(pod).get("labels") or {}
    annotations = meta(pod).get("annotations") or {}
    if labels.get(c.COSCHEDULING_POD_GROUP_LABEL):
        return c.COSCHEDULING_API_VERSION, str(labels[c.COSCHEDULING_POD_GROUP_LABEL])
    if annotations.get(c.VOLCANO_GROUP_NAME_ANNOTATION) and spec_of(pod).get("schedulerName") == "volcano":
        return c.VOLCANO_API_VERSION, str(annotations[c.VOLCANO_GROUP_NAME_ANNOTATION])
    return None


# --- gangs ---
# Volcano: PodGroup condition Unschedulable (reason NotEnoughResources), message "<pending>/<tasks>
# tasks in gang unschedulable: ..." (volcano pkg/scheduler/cache/cache.go RecordJobStatusEvent; the
# types in volcano.sh/apis pkg/apis/scheduling/v1beta1/types.go). scheduler-plugins coscheduling:
# "pre-filter pod <p> cannot find enough sibling pods, current pods number: <n>, minMember of group:
# <m>" (pkg/coscheduling/core/core.go PreFilter).


def _room_for(pod: Obj, ask: dict[str, Quantity], nodes: list[NodeView]) -> tuple[int, bool]:
    """(pods like this one the nodes could take at once, whether counted from free room)."""
    from ktrain.engine.quantity import ZERO

    total = 0
    exact = True
    for node in nodes:
        if node.cordoned or not matches_node(pod, node) or untolerated(pod, node):
            continue
        fits: int | None = None
        for resource, want in {**ask, "pods": one_of()}.items():
            have = node.free(resource)
            if have is None:
                exact = False
                have = node.allocatable.get(resource, ZERO) if resource != "pods" else node.allocatable.get("pods")
                if have is None:
                    continue
            if want.is_zero():
                continue
            n = max(0, int(have.amount // want.amount))
            fits = n if fits is None else min(fits, n)
        total += fits if fits is not None else 0
    return total, exact


def gang_of(
    f: Facts,
    pod: Obj,
    group: tuple[str, str],
    nodes: list[Obj],
    ask: dict[str, Quantity],
    evidence: list[str],
    live: list[Obj],
) -> Verdict | None:
    api_version, name = group
    pg = need(f, Read(POD_GROUP, name=name, api_version=api_version))
    if not isinstance(pg, dict):
        return None
    min_member = int(spec_of(pg).get("minMember") or 0)
    if not min_member:
        return None
    extra = [f"PodGroup {f.namespace}/{name}: minMember {min_member}, phase {status_of(pg).get('phase') or '-'}"]
    cond = condition_of(pg, "Unschedulable")
    if cond is not None and cond.get("message"):
        extra.append(f"PodGroup condition Unschedulable: {cond.get('message')}")
    if len(live) < min_member:
        return Verdict(
            GANG,
            f"the gang needs {min_member} pods (PodGroup {name} minMember) but only {len(live)} exist",
            evidence + extra,
            "the missing pods are not created: see `ktrain job get` and the namespace's quota",
        )
    room, exact = _room_for(pod, ask, with_usage(f, nodes))
    if room < min_member:
        how = (
            "" if exact else " (counted from what the nodes have, not what is free: the pods on them could not be read)"
        )
        return Verdict(
            GANG,
            f"the gang needs {min_member} pods placed at once (PodGroup {name} minMember {min_member}); "
            f"the nodes have room for {room}{how}",
            evidence + extra,
            f"run on fewer nodes (--nodes {room})" if room else "ask for less per pod, or wait for room",
        )
    return None


# --- pods no scheduler looks at ---


def unscheduled(f: Facts, pod: Obj, now: dt.datetime) -> Verdict | None:
    status = status_of(pod)
    if status.get("phase") != "Pending" or spec_of(pod).get("nodeName") or container_statuses(pod):
        return None  # bound to a node: a kubelet has it
    if any(cond.get("type") == "PodScheduled" for cond in status.get("conditions") or [] if isinstance(cond, dict)):
        return None
    waited = age_of(pod, now)
    if waited < SCHEDULER_GRACE:
        return None
    scheduler = str(spec_of(pod).get("schedulerName") or "default-scheduler")
    evidence = [
        f"{pod_where(pod)}: Pending for {ago_of(waited)}, no PodScheduled condition, schedulerName {scheduler}",
    ]
    if scheduler == "volcano":
        served = need(f, Read(SERVED, api_version=c.VOLCANO_API_VERSION))
        if served is False:
            return Verdict(
                NO_SCHEDULER,
                "the pods name scheduler volcano, and the cluster does not serve Volcano (scheduling.volcano.sh): "
                "nothing will schedule them, nor write an event",
                evidence,
                "install Volcano (https://volcano.sh/en/docs/installation/), "
                "or create the job without --scheduler volcano",
            )
        group = pod_group(f, pod)
        if group is not None:
            pg = need(f, Read(POD_GROUP, name=group[1], api_version=group[0]))
            if isinstance(pg, dict):
                phase = status_of(pg).get("phase") or "-"
                cond = condition_of(pg, "Unschedulable")
                if cond is not None and str(cond.get("status")) == "True":
                    return Verdict(
                        GANG,
                        f"Volcano cannot place the gang of PodGroup {group[1]}: "
                        f"{cond.get('message') or cond.get('reason')}",
                        [
                            *evidence,
                            f"PodGroup {f.namespace}/{group[1]}: phase {phase}, "
                            f"minMember {spec_of(pg).get('minMember')}",
                        ],
                        "ask for less per pod or fewer pods (--nodes), or wait for room in the queue",
                    )
                if phase == "Pending":
                    queue = spec_of(pg).get("queue") or "default"
                    return Verdict(
                        QUEUED,
                        f"Volcano has not admitted PodGroup {group[1]} to queue {queue} (phase Pending)",
                        evidence,
                        f"`kubectl get queue {queue} -o yaml` shows its capacity and what it holds",
                    )
    who = "the default scheduler" if scheduler == "default-scheduler" else f"scheduler {scheduler}"
    return Verdict(
        NO_SCHEDULER,
        f"{who} has not looked at pod {pod_name(pod)} in {ago_of(waited)}: is it running?",
        evidence,
        f"`kubectl get pods -A | grep {scheduler}` shows whether it runs; `--scheduler` names another",
    )
