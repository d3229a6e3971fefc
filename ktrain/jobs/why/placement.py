"""`job why` for placement: required pod (anti-)affinity, topology spread, JobSet's exclusive
placement and host ports, decoded from the scheduler's message against the nodes.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs.why.facts import Facts, Read, Verdict, meta, plural, pod_name, spec_of, status_of
from ktrain.jobs.why.nodes import NODE_PODS, FitError, NodeView, label_census

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj


POD_AFFINITY = "PodAffinity"  # required pod affinity / anti-affinity (its own, or other pods')
EXCLUSIVE_PLACEMENT = "ExclusivePlacement"  # JobSet's exclusive-topology: no free domain
TOPOLOGY_SPREAD = "TopologySpread"
HOST_PORTS = "HostPortsTaken"


# --- pod affinity, topology spread, host ports -------------------------------------------------------
# kube-scheduler's reasons: interpodaffinity/filtering.go (ErrReasonAffinityRulesNotMatch,
# ErrReasonAntiAffinityRulesNotMatch, ErrReasonExistingAntiAffinityRulesNotMatch),
# podtopologyspread/filtering.go (ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch adds
# " (missing required label)"), nodeports/node_ports.go (ErrReason). Not recomputed: the words and
# the pod's own rules say which rule, the nodes' labels how many domains there are. JobSet's exclusive
# placement (pkg/webhooks/pod_mutating_webhook.go, setExclusiveAffinities) gives the leader pod (index
# 0) a required pod affinity to its own Job (job-key In [its key]) and anti-affinity to every other Job
# (job-key Exists, NotIn [its key]) in the annotation's topology key.

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
PORTS = "node(s) didn't have free ports for the requested pod ports"


def _selector_text(selector: Any) -> str:
    """A label selector as kubectl writes one: `app=x,tier in (a,b),!gone`."""
    if not isinstance(selector, dict):
        return "no pods (no selector)"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            continue
        key, op = expr.get("key"), expr.get("operator")
        values = ",".join(str(v) for v in expr.get("values") or [])
        parts.append(
            {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": f"{key}"}.get(
                str(op), f"!{key}"
            )
        )
    return ",".join(parts) or "every pod (an empty selector)"


def _pod_terms(pod: Obj, kind: str) -> list[Obj]:
    rules = ((spec_of(pod).get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    return [t for t in rules or [] if isinstance(t, dict)]


def _term_text(term: Obj) -> str:
    return f"topologyKey {term.get('topologyKey')}, pods matching {_selector_text(term.get('labelSelector'))}"


def _count(fit: FitError, text: str) -> tuple[int | None, bool]:
    """How many nodes the scheduler refused with `text` (a prefix), and whether it said so at all."""
    for count, reason in fit.reasons:
        if reason.startswith(text):
            return count, True
    return None, False


def _nodes_phrase(fit: FitError, count: int | None) -> str:
    if count is None:
        return "the nodes"
    return f"{count} of {fit.nodes} nodes" if fit.nodes else plural(count, "node")


def exclusive_key(f: Facts, pod: Obj) -> str | None:
    annotations = meta(pod).get("annotations") or {}
    key = annotations.get(c.JOBSET_EXCLUSIVE_ANNOTATION) or (meta(f.jobset).get("annotations") or {}).get(
        c.JOBSET_EXCLUSIVE_ANNOTATION
    )
    return str(key) if key else None


def _affinity_verdict(
    pod: Obj, field: str, said: str, why: str, step: str, views: list[NodeView], evidence: list[str]
) -> Verdict:
    """A required pod (anti-)affinity rule (`field`) the scheduler could not meet: its terms and the
    nodes' values of their topology keys."""
    terms = _pod_terms(pod, field)
    keys = sorted({str(t.get("topologyKey")) for t in terms})
    return Verdict(
        POD_AFFINITY,
        said + (f" ({'; '.join(_term_text(t) for t in terms)})" if terms else "") + why,
        [*evidence, *(label_census(views, k) for k in keys)],
        step,
    )


def placement_verdict(
    f: Facts, pod: Obj, fit: FitError | None, views: list[NodeView], evidence: list[str]
) -> Verdict | None:
    if fit is None:
        return None
    name = pod_name(pod)
    anti_n, anti = _count(fit, ANTI_AFFINITY)
    aff_n, aff = _count(fit, AFFINITY)
    exclusive = exclusive_key(f, pod)
    if exclusive and (anti or aff):
        return _exclusive_verdict(f, pod, exclusive, fit, anti_n if anti else aff_n, views, evidence)
    if anti:
        return _affinity_verdict(
            pod,
            "podAntiAffinity",
            f"pod {name}'s required anti-affinity keeps it out of {_nodes_phrase(fit, anti_n)}",
            ": pods it must not share a domain with run there",
            "wait for those pods to end, or make the rule preferred (preferredDuringSchedulingIgnoredDuringExecution) "
            "or narrower (a smaller topologyKey)",
            views,
            evidence,
        )
    if aff:
        return _affinity_verdict(
            pod,
            "podAffinity",
            f"pod {name}'s required pod affinity is not met on {_nodes_phrase(fit, aff_n)}",
            ": no pod it must join runs in a domain with room",
            "start the pods it must join first, or make the rule preferred "
            "(preferredDuringSchedulingIgnoredDuringExecution)",
            views,
            evidence,
        )
    existing_n, existing = _count(fit, EXISTING_ANTI)
    if existing:
        return Verdict(
            POD_AFFINITY,
            f"pods already running on {_nodes_phrase(fit, existing_n)} have a required anti-affinity that "
            f"matches pod {name}'s labels",
            evidence,
            "`kubectl get pods -A -o wide` shows what runs on those nodes; wait for it to end, or ask its owners",
        )
    spread_n, spread = _count(fit, SPREAD)
    if spread:
        constraints = [
            t
            for t in spec_of(pod).get("topologySpreadConstraints") or []
            if isinstance(t, dict) and (t.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"
        ]
        shown = "; ".join(
            f"topologyKey {t.get('topologyKey')}, maxSkew {t.get('maxSkew')}, "
            f"pods matching {_selector_text(t.get('labelSelector'))}"
            for t in constraints
        )
        label = any(reason.startswith(SPREAD + " (missing required label)") for _, reason in fit.reasons)
        keys = sorted({str(t.get("topologyKey")) for t in constraints})
        return Verdict(
            TOPOLOGY_SPREAD,
            f"pod {name}'s topology spread constraint cannot be met on {_nodes_phrase(fit, spread_n)}"
            + (f" ({shown})" if shown else "")
            + ("; some nodes lack the topology label" if label else ""),
            [*evidence, *(label_census(views, k) for k in keys)],
            "raise maxSkew or use whenUnsatisfiable: ScheduleAnyway, or wait for room in the emptier domains",
        )
    ports_n, ports = _count(fit, PORTS)
    if ports:
        asked = sorted(
            {
                f"{p.get('hostPort')}/{p.get('protocol') or 'TCP'}"
                for ct in spec_of(pod).get("containers") or []
                if isinstance(ct, dict)
                for p in ct.get("ports") or []
                if isinstance(p, dict) and p.get("hostPort")
            }
        )
        host = " (hostNetwork: every container port is a host port)" if spec_of(pod).get("hostNetwork") else ""
        return Verdict(
            HOST_PORTS,
            (
                f"pod {name} asks host port {', '.join(asked)}{host}; other pods hold it"
                if asked
                else f"the host ports pod {name} asks{host} are held by other pods"
            )
            + f" on {_nodes_phrase(fit, ports_n)}",
            evidence,
            "use another port, or run without hostPort/hostNetwork; `kubectl get pods -A -o wide` shows who runs there",
        )
    return None


def _exclusive_verdict(
    f: Facts, pod: Obj, key: str, fit: FitError, count: int | None, views: list[NodeView], evidence: list[str]
) -> Verdict:
    """JobSet exclusive placement: each Job wants a domain of `key` no other Job uses."""
    domains: dict[str, list[str]] = {}
    for node in views:
        if key in node.labels:
            domains.setdefault(node.labels[key], []).append(node.name)
    rule = f"JobSet exclusive placement ({c.JOBSET_EXCLUSIVE_ANNOTATION}: {key})"
    step_off = (
        f"or run without exclusive placement (drop the {c.JOBSET_EXCLUSIVE_ANNOTATION} annotation from the runtime)"
    )
    if not domains:
        return Verdict(
            EXCLUSIVE_PLACEMENT,
            f"{rule} puts each Job in a {key} domain of its own, and no node has label {key}",
            evidence,
            f"ask the cluster admin to label the nodes with {key}, {step_off}",
        )
    ours = (meta(pod).get("labels") or {}).get(c.JOBSET_JOB_KEY_LABEL)
    node_pods = f.values.get(Read(NODE_PODS).key)  # read already when the room was counted
    holders: dict[str, set[str]] = {}
    if isinstance(node_pods, list):
        where = {n.name: n.labels.get(key) for n in views}
        for other in node_pods:
            labels = meta(other).get("labels") or {}
            job_key = labels.get(c.JOBSET_JOB_KEY_LABEL)
            domain = where.get(str(spec_of(other).get("nodeName") or ""))
            if not job_key or job_key == ours or domain is None:
                continue
            if status_of(other).get("phase") in ("Succeeded", "Failed"):
                continue
            owner = labels.get(c.JOBSET_NAME_LABEL) or pod_name(other)
            holders.setdefault(domain, set()).add(f"{meta(other).get('namespace') or '?'}/{owner}")
    total = len(domains)
    if isinstance(node_pods, list):
        taken = len(holders)
        free = total - taken
        census = [
            f"{key}={domain}: "
            + (", ".join(sorted(holders[domain])) if domain in holders else "free")
            + f" ({plural(len(nodes), 'node')})"
            for domain, nodes in sorted(domains.items())
        ]
        state = (
            f"all {total} {key} domains are held by other Jobs"
            if not free
            else f"{taken} of {total} {key} domains are held by other Jobs, and the {free} free "
            f"{'one lacks' if free == 1 else 'ones lack'} room for it"
        )
    else:
        census = [f"{key}={domain}: {plural(len(nodes), 'node')}" for domain, nodes in sorted(domains.items())]
        state = (
            f"no {key} domain of {total} is free for it (which Jobs hold them could not be read: the pods on the nodes)"
        )
    return Verdict(
        EXCLUSIVE_PLACEMENT,
        f"{rule} puts each Job in a {key} domain of its own; {state}",
        [*evidence, f"the scheduler: {_nodes_phrase(fit, count)} refused by the exclusive affinity rules", *census],
        f"wait for the Jobs holding the domains to end (`ktrain job list -A`), {step_off}",
    )
