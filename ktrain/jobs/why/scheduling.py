"""`job why` for pods the scheduler refused: the FailedScheduling message decoded against the pod's
ask and the nodes (too large, insufficient now, no matching node, taints, cordoned nodes). Reads: the nodes
and what they have free (`ktrain.jobs.why.nodes.NODES`, `NODE_PODS`).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs.why.facts import Facts, Read, Verdict, condition_of, need, plural, pod_name, pod_where, spec_of
from ktrain.jobs.why.gangs import gang_of, pod_group
from ktrain.jobs.why.nodes import (
    NODES,
    NodeView,
    amount,
    asks_of,
    insufficient,
    is_cordoned,
    is_selector,
    is_taint,
    label_census,
    matches_node,
    node_views,
    one_of,
    parse_fit_error,
    pod_ask,
    required_terms,
    taint_text,
    untolerated,
    with_usage,
)
from ktrain.jobs.why.placement import (
    AFFINITY,
    ANTI_AFFINITY,
    EXCLUSIVE_PLACEMENT,
    EXISTING_ANTI,
    HOST_PORTS,
    POD_AFFINITY,
    PORTS,
    SPREAD,
    TOPOLOGY_SPREAD,
    exclusive_key,
    placement_verdict,
)
from ktrain.jobs.why.volumes import volume_verdict

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt

    from ktrain.engine.quantity import Quantity
    from ktrain.util.jsondata import Obj


TOO_LARGE = "TooLarge"
INSUFFICIENT = "Insufficient"
NO_MATCHING_NODE = "NoMatchingNode"
UNTOLERATED_TAINTS = "UntoleratedTaints"
NODES_CORDONED = "NodesCordoned"
UNSCHEDULABLE = "Unschedulable"
NO_NODES = "NoNodes"


def _schedule_failure(f: Facts, pod: Obj) -> str | None:
    """The scheduler's latest word on a pod it refused: PodScheduled=False, else a FailedScheduling event."""
    cond = condition_of(pod, "PodScheduled")
    if cond is not None and str(cond.get("status")) == "False" and cond.get("reason") in ("Unschedulable", None, ""):
        return str(cond.get("message") or cond.get("reason") or "")
    return None


def unschedulable_of(f: Facts, pod: Obj, live: list[Obj], now: dt.datetime) -> Verdict | None:
    message = _schedule_failure(f, pod)
    if message is None:
        return None
    ask = pod_ask(pod)
    same = [p for p in live if p is not pod and _schedule_failure(f, p) is not None]
    evidence = [f"{pod_where(pod)}: {message}", f"each pod asks {asks_of(ask)}"]
    if same:
        evidence.append(
            f"{plural(len(same), 'more pod')} of the job {'waits' if len(same) == 1 else 'wait'} the same way"
        )
    verdict = volume_verdict(f, pod, message, evidence, now)
    if verdict is not None:
        return verdict
    nodes = need(f, Read(NODES))
    if nodes is None:
        return _decode_without_nodes(f, pod, message, ask, evidence)
    group = pod_group(f, pod)
    if group is not None:
        verdict = gang_of(f, pod, group, nodes, ask, evidence, live)
        if verdict is not None:
            return verdict
    return _decode(f, pod, message, ask, nodes, evidence)


def _order(resource: str) -> tuple[bool, str]:
    return resource not in ("cpu", "memory"), resource


def _decode(
    f: Facts, pod: Obj, message: str, ask: dict[str, Quantity], nodes: list[Obj], evidence: list[str]
) -> Verdict:
    """The scheduler's verdict, redone against the nodes in its filter order: node affinity and
    selector, cordons, taints, then room (allocatable first, then what is free now)."""
    views = node_views(nodes, None)
    fit = parse_fit_error(message)
    if not views and fit is not None and fit.nodes:  # the scheduler saw nodes we do not: trust its words
        return _decode_without_nodes(f, pod, message, ask, evidence, "no node was listed")
    if not views:
        return Verdict(
            NO_NODES,
            f"the cluster has no nodes for pod {pod_name(pod)}",
            evidence,
            "ask the cluster admin: no node has joined the cluster",
        )
    total = len(views)
    matching = [n for n in views if matches_node(pod, n)]
    if not matching:
        return _selector_verdict(f, pod, views, evidence)
    open_nodes = [n for n in matching if not n.cordoned]
    if not open_nodes:
        return Verdict(
            NODES_CORDONED,
            f"every node pod {pod_name(pod)} may use is cordoned ({plural(len(matching), 'node')}, spec.unschedulable)",
            [*evidence, "cordoned: " + ", ".join(n.name for n in matching[:8])],
            "wait for the nodes to be uncordoned (`kubectl uncordon`), or ask the cluster admin",
        )
    tolerated = [n for n in open_nodes if not untolerated(pod, n)]
    if not tolerated:
        return _taint_verdict(f, pod, open_nodes, evidence)
    for resource, want in sorted(ask.items(), key=lambda kv: _order(kv[0])):
        sizes = [n.allocatable[resource] for n in tolerated if resource in n.allocatable]
        best = max(sizes) if sizes else None
        if best is None or want > best:
            return _too_large(resource, want, best, tolerated, total, evidence)
    usage = {n.name: n for n in with_usage(f, nodes)}
    known = [usage[n.name] for n in tolerated if n.name in usage and usage[n.name].used is not None]
    if known:
        wants = {**ask, "pods": one_of()}
        short: dict[str, int] = {}
        fitting = 0
        for node in known:
            lacking = [r for r, want in wants.items() if (free := node.free(r)) is not None and free < want]
            fitting += not lacking
            for r in lacking:
                short[r] = short.get(r, 0) + 1
        if not fitting and short:
            resource = min(short, key=lambda r: (-short[r], _order(r)))
            room = [(node.free(resource), node) for node in known]
            most, where = max(((q, n) for q, n in room if q is not None), key=lambda qn: qn[0])
            return _insufficient_now(pod, resource, wants[resource], most, where, tolerated, evidence)
    else:
        for _, reason in fit.reasons if fit else []:
            named = insufficient(reason)
            if named and named in ask:
                best = max(n.allocatable[named] for n in tolerated if named in n.allocatable)
                return Verdict(
                    INSUFFICIENT,
                    f"each pod asks {amount(named, ask[named])} {named}; nodes have up to "
                    f"{amount(named, best)}, but other pods hold it now (what they hold could not be read)",
                    evidence,
                    f"wait for other pods to end, or ask for less ({_FLAGS.get(named, '--resource')})",
                )
    placed = placement_verdict(f, pod, fit, views, evidence)
    if placed is not None:
        return placed
    return Verdict(
        UNSCHEDULABLE,
        f"the scheduler cannot place pod {pod_name(pod)}: {message}",
        evidence,
        f"its message says what holds it (`kubectl describe pod {pod_name(pod)} -n {f.namespace}` shows "
        "the scheduler's latest attempt)",
    )


def _taint_verdict(f: Facts, pod: Obj, nodes: list[NodeView], evidence: list[str]) -> Verdict:
    counts: dict[str, int] = {}
    for node in nodes:
        for taint in untolerated(pod, node):
            counts[taint_text(taint)] = counts.get(taint_text(taint), 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ", ".join(f"{text} ({plural(n, 'node')})" for text, n in ranked)
    return Verdict(
        UNTOLERATED_TAINTS,
        f"pod {pod_name(pod)} does not tolerate the taints of the nodes it may use: {listed}",
        evidence,
        f"add a toleration (--toleration {ranked[0][0]}) if the job belongs on those nodes, or ask the cluster admin",
    )


_FLAGS = {"cpu": "--cpu", "memory": "--memory", "nvidia.com/gpu": "--gpus", "amd.com/gpu": "--gpus"}


def _too_large(
    resource: str,
    want: Quantity,
    best: Quantity | None,
    nodes: list[NodeView],
    total: int,
    evidence: list[str],
) -> Verdict:
    if best is None or best.is_zero():
        return Verdict(
            TOO_LARGE,
            f"each pod asks {amount(resource, want)} {resource}; no node has any {resource} ({plural(total, 'node')})",
            evidence,
            f"ask for none (drop {_FLAGS.get(resource, '--resource')}), or use a cluster whose nodes have {resource}",
        )
    having = sum(1 for n in nodes if n.allocatable.get(resource) == best)
    count = plural(having, "node") if having == total else f"{having} of {total} nodes"
    flag = _FLAGS.get(resource, "--resource")
    more = " and more nodes (--nodes)" if flag == "--gpus" else ""
    return Verdict(
        TOO_LARGE,
        f"each pod asks {amount(resource, want)} {resource}; the largest node has {amount(resource, best)} ({count})",
        [*evidence, f"nodes: {_capacity_census(nodes, resource)}"],
        f"ask for at most {amount(resource, best)} {resource} per pod ({flag}){more}",
    )


def _capacity_census(nodes: list[NodeView], resource: str) -> str:
    counts: dict[str, int] = {}
    for node in nodes:
        q = node.allocatable.get(resource)
        text = amount(resource, q) if q is not None else "none"
        counts[text] = counts.get(text, 0) + 1
    return ", ".join(f"{plural(n, 'node')} with {text} {resource}" for text, n in sorted(counts.items()))


def _insufficient_now(
    pod: Obj,
    resource: str,
    want: Quantity,
    most: Quantity,
    where: NodeView,
    nodes: list[NodeView],
    evidence: list[str],
) -> Verdict:
    if resource == "pods":
        return Verdict(
            INSUFFICIENT,
            f"every node pod {pod_name(pod)} may use is full (its pod limit reached)",
            evidence,
            "wait for other pods to end",
        )
    best = max(n.allocatable.get(resource) or most for n in nodes)
    from ktrain.engine.quantity import ZERO

    shown = most if most > ZERO else ZERO
    return Verdict(
        INSUFFICIENT,
        f"each pod asks {amount(resource, want)} {resource}; the most free on any node is "
        f"{amount(resource, shown)} ({where.name}); nodes have up to {amount(resource, best)}, "
        "other pods hold the rest",
        evidence,
        f"wait for other pods to end, or ask for at most {amount(resource, shown)} {resource} "
        f"({_FLAGS.get(resource, '--resource')})",
    )


def _selector_verdict(f: Facts, pod: Obj, views: list[NodeView], evidence: list[str]) -> Verdict:
    selector = {str(k): str(v) for k, v in (spec_of(pod).get("nodeSelector") or {}).items()}
    lacking = [(k, v) for k, v in sorted(selector.items()) if not any(n.labels.get(k) == v for n in views)]
    if lacking:
        key, value = lacking[0]
        return Verdict(
            NO_MATCHING_NODE,
            f"no node matches nodeSelector {key}={value} ({label_census(views, key)})",
            evidence,
            "use a value the nodes have (--gpu-type, --node-selector), or ask the cluster admin to label nodes",
        )
    if selector and not any(all(n.labels.get(k) == v for k, v in selector.items()) for n in views):
        shown = ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return Verdict(
            NO_MATCHING_NODE,
            f"no node matches nodeSelector {shown} (each label is on some node, never all on one)",
            evidence + [label_census(views, k) for k in sorted(selector)],
            "drop one of the labels, or ask the cluster admin",
        )
    terms = required_terms(pod) or []
    keys = sorted({str(e.get("key")) for t in terms for e in t.get("matchExpressions") or [] if isinstance(e, dict)})
    return Verdict(
        NO_MATCHING_NODE,
        "no node matches the pod's required node affinity"
        + (f" ({'; '.join(label_census(views, k) for k in keys)})" if keys else ""),
        evidence,
        "change the node affinity of the runtime or job, or ask the cluster admin",
    )


def _decode_without_nodes(
    f: Facts,
    pod: Obj,
    message: str,
    ask: dict[str, Quantity],
    evidence: list[str],
    why: str = "the nodes could not be read",
) -> Verdict:
    """Nodes could not be read: decode the scheduler's histogram with the pod's own spec. Every
    reason it gives is said, the one the job can act on first: room, then the node selector
    (the user's choice), then taints and cordons (the admin's); the code is that first one's."""
    fit = parse_fit_error(message)
    if fit is None or not fit.reasons:
        return Verdict(UNSCHEDULABLE, f"the scheduler cannot place pod {pod_name(pod)}: {message}", evidence)
    of = f"{{}} of {fit.nodes} nodes" if fit.nodes else "{} nodes"
    said: list[tuple[int, str, str, str]] = []  # (priority, code, phrase, next step)
    for count, reason in fit.reasons:
        nodes = of.format(count) if count is not None else "the nodes"
        resource = insufficient(reason)
        if resource:
            want = ask.get(resource)
            asked = f"each pod asks {amount(resource, want)} {resource}; " if want is not None and not said else ""
            flag = _FLAGS.get(resource, "--resource")
            step = f"ask for less ({flag}) or wait for other pods to end"
            said.append((0, INSUFFICIENT, f"{asked}{nodes} lack that much {resource}", step))
        elif is_selector(reason):
            selector = ", ".join(f"{k}={v}" for k, v in sorted((spec_of(pod).get("nodeSelector") or {}).items()))
            phrase = f"{nodes} do not match the pod's node selector/affinity" + (f" ({selector})" if selector else "")
            said.append((1, NO_MATCHING_NODE, phrase, "use a value the nodes have (--gpu-type, --node-selector)"))
        elif is_taint(reason):
            step = "`kubectl describe nodes | grep Taints` names them; add a toleration (--toleration)"
            said.append((2, UNTOLERATED_TAINTS, f"{nodes} have taints the pod does not tolerate", step))
        elif is_cordoned(reason):
            said.append((3, NODES_CORDONED, f"{nodes} are cordoned", "wait for the nodes to be uncordoned"))
        elif reason.startswith((AFFINITY, ANTI_AFFINITY, EXISTING_ANTI)):
            exclusive = exclusive_key(f, pod)
            if exclusive and not reason.startswith(EXISTING_ANTI):
                phrase = (
                    f"{nodes} are in {exclusive} domains other Jobs hold "
                    f"(JobSet exclusive placement, {c.JOBSET_EXCLUSIVE_ANNOTATION}: {exclusive})"
                )
                step = "wait for the Jobs holding the domains to end, or run without exclusive placement"
                said.append((1, EXCLUSIVE_PLACEMENT, phrase, step))
            else:
                step = "wait for the pods the rule names to end or start, or make the rule preferred"
                said.append((1, POD_AFFINITY, f"{nodes}: {reason}", step))
        elif reason.startswith(SPREAD):
            step = "raise maxSkew or use whenUnsatisfiable: ScheduleAnyway"
            said.append((1, TOPOLOGY_SPREAD, f"{nodes}: {reason}", step))
        elif reason.startswith(PORTS):
            said.append((1, HOST_PORTS, f"{nodes}: {reason}", "use another port, or run without hostPort/hostNetwork"))
        else:
            said.append((4, UNSCHEDULABLE, f"{nodes}: {reason}", "the scheduler's message says what holds it"))
    said.sort(key=lambda item: item[0])
    _, code, _, step = said[0]
    return Verdict(code, "; ".join(item[2] for item in said) + f" ({why} to say more)", evidence, step)
