"""What pods ask and what nodes offer, for the scheduling verdicts: quantities, node views (free
resources, labels, taints), node affinity, and the scheduler's FitError message. Reads: the nodes
(`NODES`) and every pod bound to one (`NODE_PODS`: what the nodes have free), for the scheduling,
placement and gang verdicts.
"""

from __future__ import annotations

from ktrain.jobs.why.facts import Facts, Read, meta, need, read_kind, spec_of, status_of
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.engine.quantity import Quantity
    from ktrain.util.jsondata import Obj


NODES = read_kind("nodes", "nodes")
# Every pod bound to a node, any namespace: what the nodes have free.
NODE_PODS = read_kind("node-pods", "the pods on the nodes (what they have free)")


# --- quantities ---------------------------------------------------------------------------------------


def q_of(value: Any) -> Quantity | None:
    from ktrain.engine.quantity import Quantity, QuantityError

    try:
        return Quantity.from_json(value)
    except (QuantityError, TypeError, ValueError):
        return None


def resources_of(raw: Any) -> dict[str, Quantity]:
    out = {}
    for name, value in (raw or {}).items() if isinstance(raw, dict) else ():
        q = q_of(value)
        if q is not None:
            out[str(name)] = q
    return out


def _defaulted(container: Any) -> Any:
    """A container's requests as the API server stores them: a limit without a request is also
    the request (pkg/apis/core/v1/defaults.go, SetDefaults_Pod). Pods read back already have it;
    a JobSet's pod template does not."""
    if not isinstance(container, dict):
        return container
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    if not isinstance(limits, dict) or not isinstance(requests, dict) or set(limits) <= set(requests):
        return container
    return {**container, "resources": {**resources, "requests": {**limits, **requests}}}


def pod_ask(pod: Obj) -> dict[str, Quantity]:
    """What the scheduler reserves for the pod (component-helpers PodRequests), zero entries left out."""
    from ktrain.engine.quantity import pod_requests

    spec = dict(spec_of(pod))
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            spec[key] = [_defaulted(ct) for ct in spec[key]]
    try:
        asked = pod_requests(spec)
    except (ValueError, TypeError):
        return {}
    return {name: q for name, q in asked.items() if not q.is_zero()}


_BYTES = ("memory", "ephemeral-storage")


def amount(resource: str, q: Quantity) -> str:
    """A quantity for people: `16`, `1.5 cpu`… memory in Gi/Mi with one decimal where it helps."""
    from decimal import Decimal

    if resource in _BYTES or resource.startswith("hugepages-"):
        value = q.amount
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if abs(value) >= size:
                scaled = value / Decimal(size)
                text = f"{scaled:.1f}".rstrip("0").rstrip(".")
                return f"{text}{unit}"
        return str(int(value))
    if resource == "cpu":
        milli = q.milli_value()
        return f"{milli}m" if milli % 1000 else str(milli // 1000)
    return q.canonical()


def asks_of(ask: dict[str, Quantity]) -> str:
    return ", ".join(f"{name} {amount(name, q)}" for name, q in sorted(ask.items())) or "nothing"


# --- nodes --------------------------------------------------------------------------------------------


@struct(frozen=True)
class NodeView:
    name: str
    labels: dict[str, str]
    taints: list[Obj]
    cordoned: bool
    allocatable: dict[str, Quantity]
    used: dict[str, Quantity] | None  # None: what runs there is not known
    pods: int | None

    def free(self, resource: str) -> Quantity | None:
        from ktrain.engine.quantity import ZERO

        if self.used is None:
            return None
        if resource == "pods":
            from ktrain.engine.quantity import Quantity

            room = self.allocatable.get("pods")
            return None if room is None else room - Quantity.of(self.pods or 0)
        return self.allocatable.get(resource, ZERO) - self.used.get(resource, ZERO)


def node_views(nodes: list[Obj], node_pods: list[Obj] | None) -> list[NodeView]:
    """Each node with what the scheduler counts as taken on it: the requests of its pods that
    have not ended (noderesources/fit.go works from the same sums)."""
    used: dict[str, dict[str, Quantity]] = {}
    counts: dict[str, int] = {}
    for pod in node_pods or []:
        node = spec_of(pod).get("nodeName")
        if not node or status_of(pod).get("phase") in ("Succeeded", "Failed"):
            continue
        counts[node] = counts.get(node, 0) + 1
        sums = used.setdefault(node, {})
        for name, q in pod_ask(pod).items():
            sums[name] = sums[name] + q if name in sums else q
    views = []
    for node in nodes:
        name = str(meta(node).get("name") or "")
        views.append(
            NodeView(
                name=name,
                labels={str(k): str(v) for k, v in (meta(node).get("labels") or {}).items()},
                taints=[t for t in spec_of(node).get("taints") or [] if isinstance(t, dict)],
                cordoned=bool(spec_of(node).get("unschedulable")),
                allocatable=resources_of(status_of(node).get("allocatable") or status_of(node).get("capacity")),
                used=None if node_pods is None else used.get(name, {}),
                pods=None if node_pods is None else counts.get(name, 0),
            )
        )
    return views


def _tolerates(toleration: Obj, taint: Obj) -> bool:
    """k8s.io/component-helpers/scheduling/corev1 (v1.Toleration.ToleratesTaint)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if not key and operator != "Exists":
        return False
    if operator == "Exists":
        return True
    if operator == "Equal":
        return str(toleration.get("value") or "") == str(taint.get("value") or "")
    if operator in ("Gt", "Lt"):  # KEP-5471: numeric comparison of the taint's value
        try:
            have, bound = int(str(taint.get("value"))), int(str(toleration.get("value")))
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def untolerated(pod: Obj, node: NodeView) -> list[Obj]:
    """The node's NoSchedule/NoExecute taints the pod does not tolerate (tainttoleration plugin)."""
    tolerations = [t for t in spec_of(pod).get("tolerations") or [] if isinstance(t, dict)]
    return [
        taint
        for taint in node.taints
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(_tolerates(t, taint) for t in tolerations)
    ]


def taint_text(taint: Obj) -> str:
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + str(value) if value else ''}:{taint.get('effect')}"


def _expression_matches(expr: Obj, labels: dict[str, str]) -> bool:
    key, op = str(expr.get("key") or ""), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and values:
        try:
            have, bound = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def _term_matches(term: Obj, node: NodeView) -> bool:
    expressions = [e for e in term.get("matchExpressions") or [] if isinstance(e, dict)]
    fields = [e for e in term.get("matchFields") or [] if isinstance(e, dict)]
    if not expressions and not fields:
        return False  # an empty term selects no node (v1 NodeSelectorTerm)
    by_name = {"metadata.name": node.name}
    return all(_expression_matches(e, node.labels) for e in expressions) and all(
        _expression_matches(e, by_name) for e in fields
    )


def required_terms(pod: Obj) -> list[Obj] | None:
    affinity = ((spec_of(pod).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not isinstance(affinity, dict):
        return None
    return [t for t in affinity.get("nodeSelectorTerms") or [] if isinstance(t, dict)]


def matches_node(pod: Obj, node: NodeView) -> bool:
    """nodeSelector and required node affinity (nodeaffinity plugin)."""
    selector = spec_of(pod).get("nodeSelector") or {}
    if any(node.labels.get(str(k)) != str(v) for k, v in selector.items()):
        return False
    terms = required_terms(pod)
    return terms is None or any(_term_matches(t, node) for t in terms)


def label_census(nodes: list[NodeView], key: str) -> str:
    """`gpu-type: h100 ×2, t4 ×6` (nodes without the label counted as `(none)`)."""
    counts: dict[str, int] = {}
    for node in nodes:
        value = node.labels.get(key)
        counts["(none)" if value is None else value] = counts.get("(none)" if value is None else value, 0) + 1
    if list(counts) == ["(none)"]:
        return f"no node has label {key}"
    parts = [f"{value} ×{n}" for value, n in sorted(counts.items(), key=lambda kv: (kv[0] == "(none)", kv[0]))]
    return f"nodes have {key}: " + ", ".join(parts)


# --- the scheduler's message ------------------------------------------------------------------------
# kube-scheduler, pkg/scheduler/framework/types.go (FitError.Error): "0/<N> nodes are available:
# <count> <reason>, ... ." then " " + the PostFilter message ("preemption: ..."); since 1.32 a PreFilter
# rejection is "0/<N> nodes are available: <message>." without counts. Volcano writes "0/<N> nodes are
# unavailable: ..." (pkg/scheduler/api/unschedule_info.go).


@struct(frozen=True)
class FitError:
    nodes: int | None
    reasons: list[tuple[int | None, str]]


def parse_fit_error(message: str) -> FitError | None:
    """The node count and the (count, reason) histogram of a FailedScheduling message."""
    head, sep, rest = message.partition(" nodes are ")
    if not sep or not head.startswith("0/") or not head[2:].isdigit():
        return None
    for lead in ("available: ", "unavailable: "):
        if rest.startswith(lead):
            rest = rest[len(lead) :]
            break
    else:
        return None
    end = rest.find(". ")
    histogram = rest if end < 0 else rest[:end]
    histogram = histogram.removesuffix(".")
    pieces: list[str] = []
    for part in histogram.split(", "):
        count, _, _ = part.partition(" ")
        if pieces and not count.isdigit():
            pieces[-1] += ", " + part  # a reason holding ", " (older taint texts)
        else:
            pieces.append(part)
    reasons: list[tuple[int | None, str]] = []
    for piece in pieces:
        count, _, text = piece.partition(" ")
        reasons.append((int(count), text) if count.isdigit() and text else (None, piece))
    return FitError(int(head[2:]), reasons)


def insufficient(reason: str) -> str | None:
    """noderesources/fit.go: `Insufficient <resource>`, and `Too many pods`."""
    if reason.startswith("Insufficient "):
        return reason[len("Insufficient ") :].strip()
    if reason == "Too many pods":
        return "pods"
    return None


def is_selector(reason: str) -> bool:
    """nodeaffinity/node_affinity.go ErrReasonPod ("node(s) didn't match Pod's node affinity/selector")."""
    return reason.startswith("node(s) didn't match") and ("selector" in reason or "node affinity" in reason)


def is_taint(reason: str) -> bool:
    """tainttoleration/taint_toleration.go: "node(s) had untolerated taint(s)" (1.32+), before it
    "node(s) had untolerated taint {key: value}"."""
    return reason.startswith(("node(s) had untolerated taint", "node(s) had taint"))


def is_cordoned(reason: str) -> bool:
    """nodeunschedulable/node_unschedulable.go ErrReasonUnschedulable."""
    return reason.startswith("node(s) were unschedulable")


def with_usage(f: Facts, nodes: list[Obj]) -> list[NodeView]:
    """The nodes with what their pods hold (one more read: every pod bound to a node)."""
    return node_views(nodes, need(f, Read(NODE_PODS)))


def one_of() -> Quantity:
    from ktrain.engine.quantity import Quantity

    return Quantity.of(1)
