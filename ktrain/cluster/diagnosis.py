"""Why a training job is not running: one verdict, its evidence and the next step (issue #29).

Pure, like `ktrain.cluster.job_state`: plain dicts as the API server serves them in, a `Verdict`
out; no client, clock or printing. What the diagnosis needs beyond the job and its pods it asks
for: `diagnose` returns a verdict whose `needs` names one more read (`Read`) when it cannot decide
without it, and the reader (`ktrain.cluster.observe.diagnose_job`) performs it and asks again. So
a job is read only as deep as its state requires (a running job: its rank 0 log; a pod the
scheduler refused: the nodes; a quota refusal: the namespace's ResourceQuotas), and a read the
server refuses (RBAC) is recorded in `Facts.unread` and decided without.

The first reason that holds wins, in this order:

1. the job ended (Complete / Failed);
2. suspended: by Kueue (its Workload's QuotaReserved/Admitted condition, the ClusterQueue), by a
   queue label on a cluster without Kueue, or by hand;
3. missing controllers: a TrainJob without a JobSet (Trainer), a JobSet without Jobs (JobSet);
4. pods the scheduler refused: for their volumes (a claim missing, unbound, lost, pinned elsewhere;
   read from the namespace's PersistentVolumeClaims and their events), else decoded against the
   pod's ask and the nodes, then its pod (anti-)affinity, topology spread (JobSet's exclusive
   placement) and host ports; pods no scheduler looks at (a `schedulerName` that is not running);
   a gang (PodGroup) the nodes cannot hold;
5. pods that fail: image pulls, crash loops (the last log lines), OOM kills (the limit hit), a
   ReadWriteOnce volume attached to another node (Multi-Attach);
6. pods that are never created (ResourceQuota, admission);
7. running, or running but stuck at the rendezvous (rank 0's last log lines).

The texts decoded here are the emitters' own; each parser names the file that writes them.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster import job_state as js
from ktrain.util.structs import field, struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    import datetime as dt
    from typing import Any

    from ktrain.engine.quantity import Quantity

Obj = dict[str, "Any"]

# --- verdict codes ----------------------------------------------------------------------------------
RUNNING = "Running"
SUCCEEDED = "Succeeded"
OK_CODES = (RUNNING, SUCCEEDED)
FAILED = "Failed"
SUSPENDED = "Suspended"
NOT_ADMITTED = "NotAdmitted"
NO_KUEUE = "NoKueue"
QUEUED = "Queued"
NO_WORKLOAD = "NoWorkload"
NO_TRAINER_CONTROLLER = "NoTrainerController"
NO_JOBSET_CONTROLLER = "NoJobSetController"
STARTING = "Starting"
TOO_LARGE = "TooLarge"
INSUFFICIENT = "Insufficient"
NO_MATCHING_NODE = "NoMatchingNode"
UNTOLERATED_TAINTS = "UntoleratedTaints"
NODES_CORDONED = "NodesCordoned"
UNSCHEDULABLE = "Unschedulable"
NO_NODES = "NoNodes"
NO_SCHEDULER = "NoScheduler"
GANG = "GangUnschedulable"
IMAGE_PULL = "ImagePull"
CRASH_LOOP = "CrashLoopBackOff"
OOM_KILLED = "OOMKilled"
CONTAINER_ERROR = "ContainerError"
POD_FAILED = "PodFailed"
CLAIM_NOT_FOUND = "ClaimNotFound"  # a pod mounts a PersistentVolumeClaim that does not exist
CLAIM_PENDING = "ClaimPending"  # ... one that is not bound (no class, no volume, provisioning failed)
CLAIM_UNUSABLE = "ClaimUnusable"  # ... one that lost its volume or is being deleted
VOLUME_NODE_CONFLICT = "VolumeNodeConflict"  # its volume is pinned (zone) away from the nodes
VOLUME_IN_USE = "VolumeInUse"  # a ReadWriteOnce volume attached to another node (Multi-Attach)
POD_AFFINITY = "PodAffinity"  # required pod affinity / anti-affinity (its own, or other pods')
EXCLUSIVE_PLACEMENT = "ExclusivePlacement"  # JobSet's exclusive-topology: no free domain
TOPOLOGY_SPREAD = "TopologySpread"
HOST_PORTS = "HostPortsTaken"
QUOTA_EXCEEDED = "QuotaExceeded"
POD_CREATION_FAILED = "PodCreationFailed"
RENDEZVOUS_WAIT = "RendezvousWait"
UNKNOWN = "Unknown"

# Seconds a controller may take before it is suspected (a TrainJob without a JobSet, a JobSet
# without Jobs, a Workload Kueue has not made), and a pod before its scheduler is.
CONTROLLER_GRACE = 30.0
SCHEDULER_GRACE = js.SCHEDULER_GRACE
# Seconds rank 0 may sit at the rendezvous, all its peers running, before the job is called stuck.
RENDEZVOUS_GRACE = 60.0
LOG_LINES = 10  # log lines read (and shown) for a crash loop or a stuck rank 0

# --- what the diagnosis reads ----------------------------------------------------------------------
EVENTS = "events"  # Warning events in the job's namespace
JOBS = "jobs"  # the JobSet's batch/v1 Jobs
NODES = "nodes"
NODE_PODS = "node-pods"  # every pod bound to a node, any namespace: what the nodes have free
QUOTAS = "quotas"  # the namespace's ResourceQuotas
WORKLOADS = "workloads"  # Kueue Workloads in the namespace
LOCAL_QUEUE = "local-queue"  # a Kueue LocalQueue (name)
POD_GROUP = "pod-group"  # a PodGroup (api_version, name)
SERVED = "served"  # whether the cluster serves an API group/version (api_version)
LOG = "log"  # the last lines of a container's log (name = pod, container, previous)
CLAIMS = "claims"  # the namespace's PersistentVolumeClaims
READS = (EVENTS, JOBS, NODES, NODE_PODS, QUOTAS, WORKLOADS, LOCAL_QUEUE, POD_GROUP, SERVED, LOG, CLAIMS)

# A read whose API the cluster does not serve (Kueue, Volcano not installed).
NOT_SERVED = "not served"


@struct(frozen=True)
class Read:
    """One more thing the diagnosis wants to see."""

    what: str  # one of READS
    name: str = ""
    api_version: str = ""
    container: str = ""
    previous: bool = False

    @property
    def key(self) -> str:
        return "/".join((self.what, self.api_version, self.name, self.container, "previous" if self.previous else ""))

    def describe(self) -> str:
        """How `unread` names it: `nodes`, `LocalQueue gpu`, `log of pod x (container node)`."""
        if self.what == LOG:
            return f"the {'previous ' if self.previous else ''}log of pod {self.name} (container {self.container})"
        if self.what == LOCAL_QUEUE:
            return f"Kueue LocalQueue {self.name}"
        if self.what == POD_GROUP:
            return f"PodGroup {self.name} ({self.api_version})"
        if self.what == SERVED:
            return f"API discovery of {self.api_version}"
        return {
            EVENTS: "events",
            JOBS: "the JobSet's Jobs",
            NODES: "nodes",
            NODE_PODS: "the pods on the nodes (what they have free)",
            QUOTAS: "ResourceQuotas",
            WORKLOADS: "Kueue Workloads",
            CLAIMS: "PersistentVolumeClaims",
        }.get(self.what, self.what)


@struct
class Facts:
    """What was read about one job. `values` and `unread` are keyed by `Read.key`; a read in
    neither has not been tried. `pods` is None when the pods could not be read."""

    name: str
    namespace: str
    trainjob: Obj | None
    jobset: Obj | None
    pods: list[Obj] | None
    values: dict[str, Any] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)  # key -> "nodes: forbidden (...)"
    notes: list[str] = field(default_factory=list)  # base reads that failed (TrainJob, pods)

    def record(self, read: Read, value: Any) -> None:
        self.values[read.key] = value

    def refuse(self, read: Read, why: str) -> None:
        self.unread[read.key] = f"{read.describe()}: {why}"


@struct(frozen=True)
class Verdict:
    """The answer: a reason code, one sentence, the evidence, the next step."""

    code: str
    message: str
    evidence: list[str] = field(default_factory=list)
    next_step: str | None = None
    unread: list[str] = field(default_factory=list)  # what could not be read (RBAC, errors)
    needs: Read | None = None  # set: not decided yet, read this and ask again

    @property
    def ok(self) -> bool:
        """Running or succeeded: `job why` exits 0."""
        return self.code in OK_CODES


class _Missing(Exception):
    def __init__(self, read: Read) -> None:
        super().__init__(read.key)
        self.read = read


def _need(facts: Facts, read: Read) -> Any:
    """The value read, None when it could not be read; not read yet: ask for it."""
    if read.key in facts.values:
        return facts.values[read.key]
    if read.key in facts.unread:
        return None
    raise _Missing(read)


def diagnose(facts: Facts, now: dt.datetime) -> Verdict:
    """The verdict on a job, or (`needs` set) the next read it takes to reach one."""
    try:
        verdict = _diagnose(facts, now)
    except _Missing as missing:
        return Verdict(code="", message="", needs=missing.read)
    unread = [*facts.notes, *facts.unread.values()]
    return Verdict(verdict.code, verdict.message, verdict.evidence, verdict.next_step, unread)


def document(verdict: Verdict) -> Obj:
    """The verdict as `-o json|yaml` shows it (key order fixed)."""
    return {
        "reason": verdict.code,
        "message": verdict.message,
        "evidence": list(verdict.evidence),
        "next": verdict.next_step,
        "unread": list(verdict.unread),
    }


# --- small helpers ------------------------------------------------------------------------------------


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _spec(obj: Obj | None) -> Obj:
    return (obj or {}).get("spec") or {}


def _status(obj: Obj | None) -> Obj:
    return (obj or {}).get("status") or {}


def _age(obj: Obj | None, now: dt.datetime) -> float:
    created = js.parse_time(_meta(obj).get("creationTimestamp"))
    return (now - created).total_seconds() if created else 0.0


def _ago(seconds: float) -> str:
    return js.short_duration(seconds)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _condition(obj: Obj | None, kind: str) -> Obj | None:
    for cond in _status(obj).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def _event_time(ev: Obj) -> str:
    return str(
        ev.get("lastTimestamp") or ev.get("eventTime") or ev.get("firstTimestamp") or _meta(ev).get("creationTimestamp")
    )


def _events_about(events: list[Obj] | None, kind: str, names: set[str]) -> list[Obj]:
    """Warning events about objects of `kind` named in `names`, oldest first."""
    found = [
        ev
        for ev in events or []
        if (ev.get("involvedObject") or {}).get("kind") == kind
        and (ev.get("involvedObject") or {}).get("name") in names
    ]
    found.sort(key=_event_time)
    return found


def _event_line(ev: Obj) -> str:
    inv = ev.get("involvedObject") or {}
    count = int(ev.get("count") or 1)
    times = f" (×{count})" if count > 1 else ""
    return f"event on {inv.get('kind')} {inv.get('name')}: {ev.get('reason')}{times}: {ev.get('message') or ''}"


def _queue_label(main: Obj | None) -> str | None:
    value = (_meta(main).get("labels") or {}).get(c.KUEUE_QUEUE_LABEL)
    return str(value) if value else None


def _pod_name(pod: Obj) -> str:
    return str(_meta(pod).get("name") or "")


def _pod_where(pod: Obj) -> str:
    """`pod x (node rank 1)`."""
    step, rank = js.pod_step(pod), js.pod_rank(pod)
    where = f"{step} rank {rank}" if rank is not None else step
    return f"pod {_pod_name(pod)} ({where})"


def _sorted_pods(pods: list[Obj]) -> list[Obj]:
    return sorted(pods, key=lambda p: js.pod_order(js.summarize_pod(p)))


def _container_statuses(pod: Obj) -> list[Obj]:
    status = _status(pod)
    return [
        cs
        for cs in list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
        if isinstance(cs, dict)
    ]


def _container_spec(pod: Obj, name: str) -> Obj:
    spec = _spec(pod)
    for ct in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        if isinstance(ct, dict) and ct.get("name") == name:
            return ct
    return {}


def main_container(pod: Obj) -> str:
    """The container whose log is the training's: kubectl's default-container annotation, else
    `node` (or `launcher`), else the first."""
    names = [str(ct.get("name")) for ct in _spec(pod).get("containers") or [] if isinstance(ct, dict)]
    preferred = (_meta(pod).get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    for name in (preferred, c.NODE, c.LAUNCHER):
        if name in names:
            return str(name)
    return names[0] if names else c.NODE


# --- quantities ---------------------------------------------------------------------------------------


def _q(value: Any) -> Quantity | None:
    from ktrain.engine.quantity import Quantity, QuantityError

    try:
        return Quantity.from_json(value)
    except (QuantityError, TypeError, ValueError):
        return None


def _resources(raw: Any) -> dict[str, Quantity]:
    out = {}
    for name, value in (raw or {}).items() if isinstance(raw, dict) else ():
        q = _q(value)
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

    spec = dict(_spec(pod))
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


def _asks(ask: dict[str, Quantity]) -> str:
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
        node = _spec(pod).get("nodeName")
        if not node or _status(pod).get("phase") in ("Succeeded", "Failed"):
            continue
        counts[node] = counts.get(node, 0) + 1
        sums = used.setdefault(node, {})
        for name, q in pod_ask(pod).items():
            sums[name] = sums[name] + q if name in sums else q
    views = []
    for node in nodes:
        name = str(_meta(node).get("name") or "")
        views.append(
            NodeView(
                name=name,
                labels={str(k): str(v) for k, v in (_meta(node).get("labels") or {}).items()},
                taints=[t for t in _spec(node).get("taints") or [] if isinstance(t, dict)],
                cordoned=bool(_spec(node).get("unschedulable")),
                allocatable=_resources(_status(node).get("allocatable") or _status(node).get("capacity")),
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
    tolerations = [t for t in _spec(pod).get("tolerations") or [] if isinstance(t, dict)]
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


def _required_terms(pod: Obj) -> list[Obj] | None:
    affinity = ((_spec(pod).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not isinstance(affinity, dict):
        return None
    return [t for t in affinity.get("nodeSelectorTerms") or [] if isinstance(t, dict)]


def matches_node(pod: Obj, node: NodeView) -> bool:
    """nodeSelector and required node affinity (nodeaffinity plugin)."""
    selector = _spec(pod).get("nodeSelector") or {}
    if any(node.labels.get(str(k)) != str(v) for k, v in selector.items()):
        return False
    terms = _required_terms(pod)
    return terms is None or any(_term_matches(t, node) for t in terms)


def _label_census(nodes: list[NodeView], key: str) -> str:
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


def _insufficient(reason: str) -> str | None:
    """noderesources/fit.go: `Insufficient <resource>`, and `Too many pods`."""
    if reason.startswith("Insufficient "):
        return reason[len("Insufficient ") :].strip()
    if reason == "Too many pods":
        return "pods"
    return None


def _is_selector(reason: str) -> bool:
    """nodeaffinity/node_affinity.go ErrReasonPod ("node(s) didn't match Pod's node affinity/selector")."""
    return reason.startswith("node(s) didn't match") and ("selector" in reason or "node affinity" in reason)


def _is_taint(reason: str) -> bool:
    """tainttoleration/taint_toleration.go: "node(s) had untolerated taint(s)" (1.32+), before it
    "node(s) had untolerated taint {key: value}"."""
    return reason.startswith(("node(s) had untolerated taint", "node(s) had taint"))


def _is_cordoned(reason: str) -> bool:
    """nodeunschedulable/node_unschedulable.go ErrReasonUnschedulable."""
    return reason.startswith("node(s) were unschedulable")


# --- volumes --------------------------------------------------------------------------------------
# kube-scheduler's VolumeBinding plugin refuses a pod whose claims cannot be had, in PreFilter
# (pkg/scheduler/framework/plugins/volumebinding/volume_binding.go, podHasPVCs and PreFilter):
# the lister's `persistentvolumeclaim "<name>" not found`, `waiting for ephemeral volume controller
# to create the persistentvolumeclaim "<name>"`, `persistentvolumeclaim "<name>" bound to
# non-existent persistentvolume "<pv>"`, `persistentvolumeclaim "<name>" is being deleted`, and
# "pod has unbound immediate PersistentVolumeClaims"; and in Filter with the ConflictReasons of
# volumebinding/binder.go (below). The claim's own account is the PV controller's
# (pkg/controller/volume/persistentvolume/pv_controller.go): a Warning ProvisioningFailed event with
# the class lister's `storageclass.storage.k8s.io "<class>" not found` or the provisioner's error;
# the Normal events (FailedBinding "no persistent volumes available for this claim and no storage
# class is set", ExternalProvisioning "waiting for a volume to be created, either by external
# provisioner "<p>" or manually created by system administrator") are not read (only Warnings are):
# the claim's spec and the provisioner annotation the controller sets (setClaimProvisioner) say the same.

_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
_NODE_CONFLICTS = ("node(s) had volume node affinity conflict", "node(s) didn't match PersistentVolume's node affinity")
_NO_STORAGE = "node(s) did not have enough free storage"
_PV_GONE = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
_PROVISIONER_ANNOTATIONS = ("volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner")
# The attach/detach controller's Warning FailedAttachVolume on a pod whose ReadWriteOnce volume is
# attached elsewhere (pkg/controller/volume/attachdetach/reconciler/reconciler.go reportMultiAttachError,
# worded by GenerateMsg in pkg/volume/util/operationexecutor/operation_executor.go):
# `Multi-Attach error for volume "<pv>" Volume is already used by pod(s) <a>, <b>` (or `... by <n>
# pod(s) in different namespaces`, `... exclusively attached to one node and can't be attached to another`).
_MULTI_ATTACH = "Multi-Attach error for volume "


def _quoted_after(text: str, lead: str) -> str | None:
    """The double-quoted name following `lead` in `text` (`persistentvolumeclaim "x" ...`)."""
    at = text.find(lead + ' "')
    if at < 0:
        return None
    rest = text[at + len(lead) + 2 :]
    end = rest.find('"')
    return rest[:end] if end > 0 else None


def _missing_claim(message: str) -> str | None:
    """The claim of the lister's `persistentvolumeclaim "<name>" not found`."""
    name = _quoted_after(message, "persistentvolumeclaim")
    if name and f'persistentvolumeclaim "{name}" not found' in message:
        return name
    return None


def volume_words(message: str) -> list[str]:
    """The volume reasons in a scheduler message, by kind: missing, ephemeral, lost, deleting,
    unbound, bind-conflict, node-conflict, no-storage, pv-gone."""
    said = []
    if _missing_claim(message):
        said.append("missing")
    if "waiting for ephemeral volume controller to create the persistentvolumeclaim" in message:
        said.append("ephemeral")
    if "bound to non-existent persistentvolume" in message:
        said.append("lost")
    if "is being deleted" in message and "persistentvolumeclaim" in message:
        said.append("deleting")
    for kind, text in (
        ("unbound", _UNBOUND_IMMEDIATE),
        ("bind-conflict", _BIND_CONFLICT),
        ("no-storage", _NO_STORAGE),
        ("pv-gone", _PV_GONE),
    ):
        if text in message:
            said.append(kind)
    if any(text in message for text in _NODE_CONFLICTS):
        said.append("node-conflict")
    return said


def pod_claims(pod: Obj) -> list[tuple[str, str, bool]]:
    """(volume, claim, ephemeral) for each claim the pod mounts; a generic ephemeral volume's claim
    is named <pod>-<volume> (component-helpers/storage/ephemeral VolumeClaimName)."""
    out = []
    for vol in _spec(pod).get("volumes") or []:
        if not isinstance(vol, dict):
            continue
        source = vol.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            out.append((str(vol.get("name")), str(source["claimName"]), False))
        elif isinstance(vol.get("ephemeral"), dict):
            out.append((str(vol.get("name")), f"{_pod_name(pod)}-{vol.get('name')}", True))
    return out


def _claim_line(f: Facts, pvc: Obj) -> str:
    spec = _spec(pvc)
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    modes = ", ".join(str(m) for m in spec.get("accessModes") or []) or "no access modes"
    cls = spec.get("storageClassName")
    return (
        f"PersistentVolumeClaim {f.namespace}/{_meta(pvc).get('name')}: {_status(pvc).get('phase') or 'Pending'}, "
        f"storage class {cls if cls else '(none)'}, {size or '?'}, {modes}"
        + (f", volume {spec.get('volumeName')}" if spec.get("volumeName") else "")
    )


def _volume_verdict(f: Facts, pod: Obj, message: str, evidence: list[str], now: dt.datetime) -> Verdict | None:
    """The scheduler refused the pod for its volumes: which claim holds it, and why."""
    kinds = volume_words(message)
    if not kinds:
        return None
    mounted = pod_claims(pod)
    claims = _need(f, Read(CLAIMS))
    where = _pod_where(pod)
    if claims is None:
        return _volume_from_words(f, pod, message, kinds, mounted, evidence)
    by_name = {str(_meta(pvc).get("name")): pvc for pvc in claims if isinstance(pvc, dict)}
    for volume, name, ephemeral in mounted:
        pvc = by_name.get(name)
        if pvc is None:
            if ephemeral:
                return Verdict(
                    CLAIM_PENDING,
                    f"{where} waits for the ephemeral volume controller to create claim {name} (volume {volume})",
                    evidence,
                    "the controller is part of kube-controller-manager: if this lasts, ask the cluster admin",
                )
            return Verdict(
                CLAIM_NOT_FOUND,
                f"{where} mounts PersistentVolumeClaim {name} (volume {volume}), which does not exist "
                f"in namespace {f.namespace}",
                evidence,
                f"create PersistentVolumeClaim {name} in {f.namespace} (`kubectl get pvc -n {f.namespace}` lists "
                "those there), or mount a claim that exists",
            )
        line = [*evidence, _claim_line(f, pvc)]
        if _meta(pvc).get("deletionTimestamp"):
            return Verdict(
                CLAIM_UNUSABLE,
                f"PersistentVolumeClaim {name} that {where} mounts is being deleted",
                line,
                f"create the claim again once it is gone, or mount another (`kubectl get pvc {name} -n "
                f"{f.namespace}` shows it; its finalizer waits for the pods using it to end)",
            )
        phase = _status(pvc).get("phase") or "Pending"
        if phase == "Lost":
            return Verdict(
                CLAIM_UNUSABLE,
                f"PersistentVolumeClaim {name} that {where} mounts lost its volume "
                f"{_spec(pvc).get('volumeName') or ''}".rstrip()
                + " (phase Lost): the data is gone",
                line,
                "ask the cluster admin (the PersistentVolume was deleted), or create a new claim",
            )
        if phase != "Bound":
            return _pending_claim(f, pod, volume, pvc, kinds, line, now)
    bound = [by_name[name] for _, name, _ in mounted if name in by_name]
    if "node-conflict" in kinds:
        return Verdict(
            VOLUME_NODE_CONFLICT,
            f"the volumes of {where} are pinned (PersistentVolume node affinity, e.g. a zone) away from "
            "the nodes it may use",
            [*evidence, *(_claim_line(f, pvc) for pvc in bound)],
            "run where the volume is (a node selector for its zone), or use a claim whose volume can be "
            "reached from the nodes (`kubectl get pv <volume> -o yaml` shows its nodeAffinity)",
        )
    if "no-storage" in kinds:
        return Verdict(
            CLAIM_PENDING,
            f"no node {where} may use has enough free storage for its claims' volumes",
            [*evidence, *(_claim_line(f, pvc) for pvc in bound)],
            "ask for smaller volumes, or ask the cluster admin for storage capacity",
        )
    return None


def _pending_claim(
    f: Facts, pod: Obj, volume: str, pvc: Obj, kinds: list[str], evidence: list[str], now: dt.datetime
) -> Verdict:
    name = str(_meta(pvc).get("name"))
    spec = _spec(pvc)
    cls = spec.get("storageClassName")
    events = _need(f, Read(EVENTS))
    said = _events_about(events, "PersistentVolumeClaim", {name})
    evidence = [*evidence, *(_event_line(ev) for ev in said[-2:])]
    what = f"PersistentVolumeClaim {name} (volume {volume} of {_pod_where(pod)}) is not bound"
    describe = f"`kubectl describe pvc {name} -n {f.namespace}` shows the storage controllers' account"
    if said:
        last = str(said[-1].get("message") or "")
        missing = _quoted_after(last, "storageclass.storage.k8s.io")
        if missing and "not found" in last:
            return Verdict(
                CLAIM_PENDING,
                f"{what}: its storage class {missing} does not exist",
                evidence,
                "`kubectl get storageclass` lists the classes: create the claim with one of them "
                f"(spec.storageClassName), or ask the cluster admin to create {missing}",
            )
        return Verdict(
            CLAIM_PENDING,
            f"{what}: {said[-1].get('reason')}: {last}",
            evidence,
            f"the storage provisioner refuses it (its message says why); ask the cluster admin. {describe}",
        )
    if not cls:
        return Verdict(
            CLAIM_PENDING,
            f"{what}: it names no storage class, and no PersistentVolume matches it",
            evidence,
            "set a storage class on the claim (`kubectl get storageclass` lists them), or ask the cluster "
            "admin for a PersistentVolume of its size and access modes",
        )
    annotations = _meta(pvc).get("annotations") or {}
    provisioner = next((annotations[k] for k in _PROVISIONER_ANNOTATIONS if annotations.get(k)), None)
    if provisioner:
        return Verdict(
            CLAIM_PENDING,
            f"{what}: waiting {_ago(_age(pvc, now))} for provisioner {provisioner} to create its volume "
            f"(storage class {cls})",
            evidence,
            f"provisioner {provisioner} has not made the volume: ask the cluster admin whether it runs. {describe}",
        )
    if "bind-conflict" in kinds:
        return Verdict(
            CLAIM_PENDING,
            f"{what}: no PersistentVolume of storage class {cls} fits it on the nodes the pod may use "
            "(the class binds when a pod is scheduled: WaitForFirstConsumer)",
            evidence,
            f"ask the cluster admin for a PersistentVolume of class {cls} with the claim's size and access "
            "modes, or use a storage class that provisions volumes",
        )
    return Verdict(CLAIM_PENDING, f"{what} (storage class {cls})", evidence, describe)


def _volume_from_words(
    f: Facts, pod: Obj, message: str, kinds: list[str], mounted: list[tuple[str, str, bool]], evidence: list[str]
) -> Verdict:
    """The claims could not be read: the scheduler's words and the pod's spec only."""
    where = _pod_where(pod)
    names = ", ".join(name for _, name, _ in mounted) or "?"
    unread = "(the PersistentVolumeClaims could not be read to say more)"
    describe = f"`kubectl describe pvc -n {f.namespace}` shows why; ask for read access to persistentvolumeclaims"
    if "missing" in kinds:
        name = _missing_claim(message)
        return Verdict(
            CLAIM_NOT_FOUND,
            f"{where} mounts PersistentVolumeClaim {name}, which does not exist in namespace {f.namespace}",
            evidence,
            f"create PersistentVolumeClaim {name} in {f.namespace}, or mount a claim that exists",
        )
    if "lost" in kinds or "deleting" in kinds or "pv-gone" in kinds:
        return Verdict(
            CLAIM_UNUSABLE,
            f"a claim {where} mounts ({names}) lost its volume or is being deleted {unread}",
            evidence,
            describe,
        )
    if "node-conflict" in kinds:
        return Verdict(
            VOLUME_NODE_CONFLICT,
            f"the volumes of {where} ({names}) are pinned away from the nodes it may use {unread}",
            evidence,
            "run where the volume is (a node selector for its zone), or use another claim",
        )
    return Verdict(
        CLAIM_PENDING,
        f"the claims {where} mounts ({names}) are not bound {unread}",
        evidence,
        describe,
    )


def _multi_attach(f: Facts, pod: Obj, event: Obj) -> Verdict:
    """A pod on a node whose ReadWriteOnce volume another node holds."""
    text = str(event.get("message") or "")
    pv = _quoted_after(text, "Multi-Attach error for volume") or "?"
    _, _, users = text.partition("Volume is already used by pod(s) ")
    holders = [u.strip() for u in users.split(" and ")[0].split(",") if u.strip()] if users else []
    ours = {_pod_name(p) for p in f.pods or []}
    claims = _need(f, Read(CLAIMS))
    pvc = next((c for c in claims or [] if isinstance(c, dict) and _spec(c).get("volumeName") == pv), None)
    claim = f"claim {_meta(pvc).get('name')}" if pvc else f"volume {pv}"
    modes = "/".join(str(m) for m in _spec(pvc).get("accessModes") or []) if pvc else ""
    evidence = [_event_line(event)] + ([_claim_line(f, pvc)] if pvc else [])
    node = _spec(pod).get("nodeName")
    mine = [h for h in holders if h in ours]
    if mine:
        sentence = (
            f"{_pod_where(pod)} cannot start on node {node}: {claim}"
            + (f" ({modes})" if modes else "")
            + f" is attached to the node of the job's own pod {', '.join(mine)}; a ReadWriteOnce volume "
            "serves one node at a time"
        )
        step = (
            "mount a ReadWriteMany claim (a shared file system) for what every node reads or writes, "
            "or give each pod a claim of its own"
        )
    else:
        who = ", ".join(holders) if holders else "a pod on another node"
        sentence = (
            f"{_pod_where(pod)} cannot start on node {node}: {claim}"
            + (f" ({modes})" if modes else "")
            + f" is attached to another node, used by {who}"
        )
        step = "wait for the pods using it to end, or mount a ReadWriteMany claim"
    return Verdict(VOLUME_IN_USE, sentence, evidence, step)


# --- pod affinity, topology spread, host ports -------------------------------------------------------
# kube-scheduler's reasons: interpodaffinity/filtering.go (ErrReasonAffinityRulesNotMatch,
# ErrReasonAntiAffinityRulesNotMatch, ErrReasonExistingAntiAffinityRulesNotMatch),
# podtopologyspread/filtering.go (ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch adds
# " (missing required label)"), nodeports/node_ports.go (ErrReason). Not recomputed: the words and
# the pod's own rules say which rule, the nodes' labels how many domains there are. JobSet's exclusive
# placement (pkg/webhooks/pod_mutating_webhook.go, setExclusiveAffinities) gives the leader pod (index
# 0) a required pod affinity to its own Job (job-key In [its key]) and anti-affinity to every other Job
# (job-key Exists, NotIn [its key]) in the annotation's topology key.

_AFFINITY = "node(s) didn't match pod affinity rules"
_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"
_SPREAD = "node(s) didn't match pod topology spread constraints"
_PORTS = "node(s) didn't have free ports for the requested pod ports"


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
    rules = ((_spec(pod).get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
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
    return f"{count} of {fit.nodes} nodes" if fit.nodes else _plural(count, "node")


def _exclusive_key(f: Facts, pod: Obj) -> str | None:
    annotations = _meta(pod).get("annotations") or {}
    key = annotations.get(c.JOBSET_EXCLUSIVE_ANNOTATION) or (_meta(f.jobset).get("annotations") or {}).get(
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
        [*evidence, *(_label_census(views, k) for k in keys)],
        step,
    )


def _placement_verdict(
    f: Facts, pod: Obj, fit: FitError | None, views: list[NodeView], evidence: list[str]
) -> Verdict | None:
    if fit is None:
        return None
    name = _pod_name(pod)
    anti_n, anti = _count(fit, _ANTI_AFFINITY)
    aff_n, aff = _count(fit, _AFFINITY)
    exclusive = _exclusive_key(f, pod)
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
    existing_n, existing = _count(fit, _EXISTING_ANTI)
    if existing:
        return Verdict(
            POD_AFFINITY,
            f"pods already running on {_nodes_phrase(fit, existing_n)} have a required anti-affinity that "
            f"matches pod {name}'s labels",
            evidence,
            "`kubectl get pods -A -o wide` shows what runs on those nodes; wait for it to end, or ask its owners",
        )
    spread_n, spread = _count(fit, _SPREAD)
    if spread:
        constraints = [
            t
            for t in _spec(pod).get("topologySpreadConstraints") or []
            if isinstance(t, dict) and (t.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"
        ]
        shown = "; ".join(
            f"topologyKey {t.get('topologyKey')}, maxSkew {t.get('maxSkew')}, "
            f"pods matching {_selector_text(t.get('labelSelector'))}"
            for t in constraints
        )
        label = any(reason.startswith(_SPREAD + " (missing required label)") for _, reason in fit.reasons)
        keys = sorted({str(t.get("topologyKey")) for t in constraints})
        return Verdict(
            TOPOLOGY_SPREAD,
            f"pod {name}'s topology spread constraint cannot be met on {_nodes_phrase(fit, spread_n)}"
            + (f" ({shown})" if shown else "")
            + ("; some nodes lack the topology label" if label else ""),
            [*evidence, *(_label_census(views, k) for k in keys)],
            "raise maxSkew or use whenUnsatisfiable: ScheduleAnyway, or wait for room in the emptier domains",
        )
    ports_n, ports = _count(fit, _PORTS)
    if ports:
        asked = sorted(
            {
                f"{p.get('hostPort')}/{p.get('protocol') or 'TCP'}"
                for ct in _spec(pod).get("containers") or []
                if isinstance(ct, dict)
                for p in ct.get("ports") or []
                if isinstance(p, dict) and p.get("hostPort")
            }
        )
        host = " (hostNetwork: every container port is a host port)" if _spec(pod).get("hostNetwork") else ""
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
    ours = (_meta(pod).get("labels") or {}).get(c.JOBSET_JOB_KEY_LABEL)
    node_pods = f.values.get(Read(NODE_PODS).key)  # read already when the room was counted
    holders: dict[str, set[str]] = {}
    if isinstance(node_pods, list):
        where = {n.name: n.labels.get(key) for n in views}
        for other in node_pods:
            labels = _meta(other).get("labels") or {}
            job_key = labels.get(c.JOBSET_JOB_KEY_LABEL)
            domain = where.get(str(_spec(other).get("nodeName") or ""))
            if not job_key or job_key == ours or domain is None:
                continue
            if _status(other).get("phase") in ("Succeeded", "Failed"):
                continue
            owner = labels.get(c.JOBSET_NAME_LABEL) or _pod_name(other)
            holders.setdefault(domain, set()).add(f"{_meta(other).get('namespace') or '?'}/{owner}")
    total = len(domains)
    if isinstance(node_pods, list):
        taken = len(holders)
        free = total - taken
        census = [
            f"{key}={domain}: "
            + (", ".join(sorted(holders[domain])) if domain in holders else "free")
            + f" ({_plural(len(nodes), 'node')})"
            for domain, nodes in sorted(domains.items())
        ]
        state = (
            f"all {total} {key} domains are held by other Jobs"
            if not free
            else f"{taken} of {total} {key} domains are held by other Jobs, and the {free} free "
            f"{'one lacks' if free == 1 else 'ones lack'} room for it"
        )
    else:
        census = [f"{key}={domain}: {_plural(len(nodes), 'node')}" for domain, nodes in sorted(domains.items())]
        state = (
            f"no {key} domain of {total} is free for it (which Jobs hold them could not be read: the pods on the nodes)"
        )
    return Verdict(
        EXCLUSIVE_PLACEMENT,
        f"{rule} puts each Job in a {key} domain of its own; {state}",
        [*evidence, f"the scheduler: {_nodes_phrase(fit, count)} refused by the exclusive affinity rules", *census],
        f"wait for the Jobs holding the domains to end (`ktrain job list -A`), {step_off}",
    )


# --- the diagnosis ------------------------------------------------------------------------------------


def _diagnose(f: Facts, now: dt.datetime) -> Verdict:
    pods = f.pods or []
    state, reason, message = js.derive_state(f.trainjob, f.jobset, pods)
    main = f.trainjob or f.jobset
    kind = c.TRAINJOB_KIND if f.trainjob else c.JOBSET_KIND
    if state == js.COMPLETE:
        return Verdict(SUCCEEDED, f"job {f.name} completed" + (f" ({reason})" if reason else ""))
    if state == js.FAILED:
        return _failed(f, reason, message)
    if state == js.SUSPENDED:
        return _suspended(f, main, kind, now)
    if f.trainjob is not None and f.jobset is None:
        return _no_jobset(f, now)
    if f.pods is None:
        return Verdict(
            UNKNOWN,
            f"job {f.name} is {state}; its pods could not be read, so why it waits is not known",
            next_step=f"`ktrain job get {f.name}` shows its conditions; ask for read access to pods",
        )
    if state == js.RUNNING:
        return _running(f, now)
    return _created(f, now)


# --- ended ---


def _failed(f: Facts, reason: str | None, message: str | None) -> Verdict:
    said = ": ".join(p for p in (reason, message) if p)
    evidence = []
    sentence = f"job {f.name} failed" + (f": {said}" if said else "")
    for pod in _sorted_pods(f.pods or []):
        oom = _oom(pod)
        if oom is not None:
            text = _oom_text(pod, *oom)
            sentence = f"job {f.name} failed: {text}"
            evidence.append(f"{_pod_where(pod)}: {text}")
            continue
        for cs in _container_statuses(pod):
            term = (cs.get("state") or {}).get("terminated") or {}
            if term.get("exitCode") not in (None, 0):
                evidence.append(
                    f"{_pod_where(pod)}: container {cs.get('name')} exited with code {term.get('exitCode')}"
                    + (f" ({term.get('reason')})" if term.get("reason") else "")
                )
    return Verdict(
        FAILED, sentence, evidence, f"`ktrain job logs {f.name}` shows its output; fix it and create the job again"
    )


# --- suspended and queued ---


def _suspended(f: Facts, main: Obj | None, kind: str, now: dt.datetime) -> Verdict:
    queue = _queue_label(f.trainjob) or _queue_label(f.jobset)
    if not queue:
        return Verdict(
            SUSPENDED,
            f"job {f.name} is suspended (spec.suspend: true) and no queue will resume it",
            [f"{kind} {f.namespace}/{f.name}: spec.suspend is true; it carries no {c.KUEUE_QUEUE_LABEL} label"],
            f"`ktrain job resume {f.name}` resumes it",
        )
    label = f"{c.KUEUE_QUEUE_LABEL}={queue}"
    workloads = _need(f, Read(WORKLOADS))
    if workloads == NOT_SERVED:
        return Verdict(
            NO_KUEUE,
            f"job {f.name} is suspended for Kueue queue {queue}, but the cluster does not serve Kueue: "
            "nothing will ever admit it",
            [f"{kind} {f.name} carries {label} and spec.suspend: true", "workloads.kueue.x-k8s.io is not served"],
            f"install Kueue (https://kueue.sigs.k8s.io/docs/installation/), or remove the label "
            f"(`kubectl label {kind.lower()} {f.name} {c.KUEUE_QUEUE_LABEL}-`) and `ktrain job resume {f.name}`",
        )
    if workloads is None:
        return Verdict(
            QUEUED,
            f"job {f.name} is suspended, waiting for Kueue queue {queue} to admit it",
            [f"{kind} {f.name} carries {label}; its Workload could not be read"],
            f"`kubectl get workloads -n {f.namespace}` shows whether Kueue admitted it",
        )
    workload = _own_workload(workloads, f)
    age = _age(main, now)
    if workload is None:
        if age < CONTROLLER_GRACE:
            return Verdict(
                QUEUED,
                f"job {f.name} is suspended; Kueue has not made its Workload yet ({_ago(age)} old)",
                [f"{kind} {f.name} carries {label}"],
                f"`ktrain job wait {f.name} --for running` waits for it",
            )
        return Verdict(
            NO_WORKLOAD,
            f"job {f.name} is suspended for Kueue queue {queue}, but Kueue made no Workload for it in {_ago(age)}",
            [f"{kind} {f.name} carries {label}; no Workload in {f.namespace} is owned by it"],
            "Kueue's configuration must list the job's kind under integrations.frameworks "
            f"({'trainer.kubeflow.org/trainjob' if f.trainjob else 'jobset.x-k8s.io/jobset'}); "
            "ask the cluster admin, or remove the label and resume the job",
        )
    return _workload_verdict(f, workload, queue)


def _own_workload(workloads: list[Obj], f: Facts) -> Obj | None:
    """The Workload Kueue made for the job: owned by its TrainJob or JobSet."""
    owners = {(c.TRAINJOB_KIND, f.name), (c.JOBSET_KIND, f.name)}
    uids = {_meta(o).get("uid") for o in (f.trainjob, f.jobset) if o and _meta(o).get("uid")}
    for wl in workloads:
        for ref in _meta(wl).get("ownerReferences") or []:
            if (ref.get("kind"), ref.get("name")) in owners and (not uids or ref.get("uid") in uids):
                return wl
    return None


def _workload_verdict(f: Facts, wl: Obj, queue: str) -> Verdict:
    """kueue apis/kueue/v1beta1/workload_types.go: QuotaReserved (the scheduler found quota, in a
    ClusterQueue), then Admitted (and every admission check Ready)."""
    name = str(_meta(wl).get("name"))
    reserved = _condition(wl, "QuotaReserved")
    admitted = _condition(wl, "Admitted")
    cq = ((_status(wl).get("admission") or {}).get("clusterQueue")) or None
    evidence = [
        f"Workload {f.namespace}/{name} ({c.KUEUE_QUEUE_LABEL}={queue})",
    ]
    for cond in (reserved, admitted):
        if cond is not None:
            evidence.append(
                f"{cond.get('type')}={cond.get('status')}"
                + (f" ({cond.get('reason')})" if cond.get("reason") else "")
                + (f": {cond.get('message')}" if cond.get("message") else "")
            )
    for pod_set in _spec(wl).get("podSets") or []:
        ask = pod_ask(pod_set.get("template") or {}) if isinstance(pod_set, dict) else {}
        evidence.append(
            f"pod set {pod_set.get('name')}: {pod_set.get('count')} pods" + (f", each {_asks(ask)}" if ask else "")
        )
    evicted = _condition(wl, "Evicted")
    if evicted is not None and str(evicted.get("status")) == "True":
        evidence.append(f"Evicted=True ({evicted.get('reason')}): {evicted.get('message') or ''}".rstrip(": "))
    if _spec(wl).get("active") is False:  # kueue: spec.active false deactivates (reason Deactivated)
        return Verdict(
            NOT_ADMITTED,
            f"Kueue's Workload {name} for job {f.name} is deactivated (spec.active: false): it will not be admitted",
            evidence,
            f'`kubectl patch workload {name} -n {f.namespace} --type merge -p \'{{"spec":{{"active":true}}}}\'` '
            "reactivates it (Kueue deactivates one that hit its requeuing limit; the evidence says which)",
        )
    if admitted is not None and str(admitted.get("status")) == "True":
        return Verdict(
            QUEUED,
            f"Kueue admitted job {f.name}" + (f" to ClusterQueue {cq}" if cq else "") + "; it is being resumed",
            evidence,
            f"`ktrain job wait {f.name} --for running` waits for its pods",
        )
    if reserved is not None and str(reserved.get("status")) == "True":
        checks = [
            f"admission check {ch.get('name')}: {ch.get('state')}"
            + (f": {ch.get('message')}" if ch.get("message") else "")
            for ch in _status(wl).get("admissionChecks") or []
        ]
        pending = [ch for ch in _status(wl).get("admissionChecks") or [] if ch.get("state") != "Ready"]
        what = ", ".join(str(ch.get("name")) for ch in pending) or "its admission checks"
        return Verdict(
            NOT_ADMITTED,
            f"Kueue reserved quota for job {f.name}"
            + (f" in ClusterQueue {cq}" if cq else "")
            + f", waiting for {what}",
            evidence + checks,
            "the admission checks' controllers decide (e.g. a ProvisioningRequest waiting for nodes)",
        )
    if cq is None:
        lq = _need(f, Read(LOCAL_QUEUE, name=queue))
        if isinstance(lq, dict):
            cq = _spec(lq).get("clusterQueue") or None
            evidence.append(f"LocalQueue {f.namespace}/{queue} → ClusterQueue {cq or '?'}")
        elif Read(LOCAL_QUEUE, name=queue).key in f.values:  # read, and not there
            evidence.append(f"LocalQueue {f.namespace}/{queue} does not exist")
    cond = reserved or admitted or {}
    said = ": ".join(str(p) for p in (cond.get("reason"), cond.get("message")) if p) or "no reason given yet"
    where = f" to ClusterQueue {cq}" if cq else f" (queue {queue})"
    step = (
        f"`kubectl describe clusterqueue {cq}` shows its quota and usage; wait for room, ask for less "
        "(--gpus, --nodes), or use another queue (--kueue-queue)"
        if cq
        else f"`kubectl get localqueue -n {f.namespace}` lists the queues; create the job with one of them"
    )
    return Verdict(NOT_ADMITTED, f"Kueue has not admitted job {f.name}{where}: {said}", evidence, step)


# --- controllers ---


def _no_jobset(f: Facts, now: dt.datetime) -> Verdict:
    age = _age(f.trainjob, now)
    events = _need(f, Read(EVENTS))
    about = _events_about(events, c.TRAINJOB_KIND, {f.name})
    evidence = [_event_line(ev) for ev in about[-3:]]
    for cond in _status(f.trainjob).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("message"):
            evidence.append(f"condition {cond.get('type')}={cond.get('status')}: {cond.get('message')}")
    if about:
        last = about[-1]
        return Verdict(
            NO_TRAINER_CONTROLLER,
            f"the Trainer controller has not made a JobSet for TrainJob {f.name}: {last.get('message')}",
            evidence,
            "fix what the event names (often the runtime: `ktrain runtime list` shows those the cluster has)",
        )
    if age < CONTROLLER_GRACE:
        return Verdict(
            STARTING,
            f"waiting for the Trainer controller to make the JobSet of TrainJob {f.name} ({_ago(age)} so far)",
            evidence,
            f"`ktrain job wait {f.name} --for running` waits for it",
        )
    return Verdict(
        NO_TRAINER_CONTROLLER,
        f"no JobSet was made for TrainJob {f.name} in {_ago(age)}: is the Trainer controller running?",
        evidence or [f"TrainJob {f.namespace}/{f.name} has no JobSet and no events"],
        "`kubectl get deployments -A | grep trainer` shows whether it is installed; "
        "`ktrain job create --target jobset` needs no Trainer controller",
    )


def _jobs_verdict(f: Facts, now: dt.datetime) -> Verdict | None:
    """Fewer pods than the JobSet runs and no pod to blame: look at its Jobs and their events."""
    jobs = _need(f, Read(JOBS))
    events = _need(f, Read(EVENTS))
    age = _age(f.jobset, now)
    if jobs == []:
        about = _events_about(events, c.JOBSET_KIND, {f.name})
        evidence = [_event_line(ev) for ev in about[-3:]]
        if about:
            return Verdict(
                POD_CREATION_FAILED,
                f"the JobSet controller has not made the Jobs of JobSet {f.name}: {about[-1].get('message')}",
                evidence,
                f"`kubectl describe jobset {f.name} -n {f.namespace}` shows the controller's account",
            )
        if age < CONTROLLER_GRACE:
            return Verdict(
                STARTING, f"waiting for the JobSet controller to make the Jobs of {f.name} ({_ago(age)} so far)"
            )
        seen = bool(_status(f.jobset))
        return Verdict(
            NO_JOBSET_CONTROLLER,
            f"JobSet {f.name} has no Jobs after {_ago(age)}" + ("" if seen else ": is the JobSet controller running?"),
            [
                f"JobSet {f.namespace}/{f.name}: "
                + ("a status, but no Jobs" if seen else "no status: no controller has looked at it")
            ],
            "`kubectl get deployments -A | grep jobset` shows whether it is installed "
            "(https://jobset.sigs.k8s.io/docs/installation/)",
        )
    # The Job controller's refusals: FailedCreate events on the Jobs (named <jobset>-<rjob>-<i>).
    names = {str(_meta(job).get("name")) for job in jobs} if jobs is not None else None
    refused = [
        ev
        for ev in events or []
        if (ev.get("involvedObject") or {}).get("kind") == "Job"
        and ev.get("reason") == "FailedCreate"
        and (
            str((ev.get("involvedObject") or {}).get("name")) in names
            if names is not None
            else str((ev.get("involvedObject") or {}).get("name")).startswith(f.name + "-")
        )
    ]
    refused.sort(key=_event_time)
    if refused:
        text = str(refused[-1].get("message") or "")
        if "exceeded quota" in text:
            return _quota_verdict(f, text, [_event_line(refused[-1])])
        return Verdict(
            POD_CREATION_FAILED,
            f"the Job controller cannot create the pods of job {f.name}: {text.removeprefix('Error creating: ')}",
            [_event_line(ev) for ev in refused[-3:]],
            "an admission webhook or policy refuses the pods: the message names it",
        )
    if events is None:  # no account of the refusals: compare the quotas with what a pod asks
        return _quota_from_usage(f)
    return None


# --- quota ---
# The Job controller's event (pkg/controller/controller_utils.go, FailedCreate "Error creating: %v")
# carries the ResourceQuota admission plugin's refusal (staging/src/k8s.io/apiserver/pkg/admission/
# plugin/resourcequota/controller.go): `exceeded quota: <name>, requested: <k=v,...>, used: <...>,
# limited: <...>`.


def parse_quota_refusal(message: str) -> tuple[str, dict[str, str], dict[str, str], dict[str, str]] | None:
    _, sep, rest = message.partition("exceeded quota: ")
    if not sep:
        return None
    name, sep1, rest = rest.partition(", requested: ")
    requested, sep2, rest = rest.partition(", used: ")
    used, sep3, limited = rest.partition(", limited: ")
    if not (sep1 and sep2 and sep3):
        return None

    def pairs(text: str) -> dict[str, str]:
        out = {}
        for item in text.strip().split(","):
            key, eq, value = item.partition("=")
            if eq:
                out[key.strip()] = value.strip()
        return out

    return name.strip(), pairs(requested), pairs(used), pairs(limited)


def _quota_verdict(f: Facts, message: str, evidence: list[str]) -> Verdict:
    parsed = parse_quota_refusal(message)
    quotas = _need(f, Read(QUOTAS))
    if parsed is None:
        return Verdict(QUOTA_EXCEEDED, f"a ResourceQuota refuses the pods of job {f.name}", evidence)
    name, requested, used, limited = parsed
    stored = next((q for q in quotas or [] if _meta(q).get("name") == name), None)
    if stored is not None:  # the quota as it stands now
        used = {k: str(_status(stored).get("used", {}).get(k, v)) for k, v in used.items()}
        limited = {k: str(_status(stored).get("hard", {}).get(k, v)) for k, v in limited.items()}
    parts = [
        f"{key} {used.get(key, '?')} used of {limited.get(key, '?')}, a pod asks {requested[key]}"
        for key in sorted(requested)
    ]
    evidence = [f"ResourceQuota {f.namespace}/{name}: " + "; ".join(parts), *evidence]
    return Verdict(
        QUOTA_EXCEEDED,
        f"ResourceQuota {name} refuses the pods of job {f.name}: " + "; ".join(parts),
        evidence,
        "wait for other jobs of the namespace to end (`ktrain job list`), ask for less, "
        f"or ask an admin to raise ResourceQuota {name}",
    )


def _template_ask(jobset: Obj | None) -> dict[str, Quantity]:
    for rjob in js.replicated_jobs(jobset or {}):
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template")) or {}
        if rjob.get("name") in js.TRAINER_RJOBS:
            return pod_ask(pod)
    return {}


def _quota_from_usage(f: Facts) -> Verdict | None:
    """Without events: a quota whose used + one pod's ask exceeds its hard limit."""
    quotas = _need(f, Read(QUOTAS))
    ask = _template_ask(f.jobset)
    for quota in quotas or []:
        hard, used = _resources(_status(quota).get("hard")), _resources(_status(quota).get("used"))
        for key, limit in sorted(hard.items()):
            resource = key.removeprefix("requests.")
            if resource not in ask or key.startswith("limits."):
                continue
            from ktrain.engine.quantity import ZERO

            if used.get(key, ZERO) + ask[resource] > limit:
                name = _meta(quota).get("name")
                text = (
                    f"{key} {amount(resource, used.get(key, ZERO))} used of {amount(resource, limit)}, "
                    f"a pod asks {amount(resource, ask[resource])}"
                )
                return Verdict(
                    QUOTA_EXCEEDED,
                    f"ResourceQuota {name} leaves no room for the pods of job {f.name}: {text}",
                    [f"ResourceQuota {f.namespace}/{name}: {text}"],
                    f"wait for other jobs of the namespace to end, ask for less, or ask an admin to raise {name}",
                )
    return None


# --- pods that wait or fail ---


def _created(f: Facts, now: dt.datetime) -> Verdict:
    pods = _sorted_pods(f.pods or [])
    live = [p for p in pods if not _meta(p).get("deletionTimestamp")]
    for pod in live:
        verdict = _unschedulable(f, pod, live, now)
        if verdict is not None:
            return verdict
    for pod in live:
        verdict = _unscheduled(f, pod, now)
        if verdict is not None:
            return verdict
    for pod in live:
        verdict = _container_trouble(f, pod, now)
        if verdict is not None:
            return verdict
    expected = sum(js.pods_per_rjob(r) for r in js.replicated_jobs(f.jobset or {}))
    if len(live) < expected:
        verdict = _jobs_verdict(f, now)
        if verdict is not None:
            return verdict
    ready, want = js.trainer_pod_counts(f.trainjob, f.jobset, live)
    waiting = [p for p in live if _status(p).get("phase") != "Running" and _status(p).get("phase") != "Succeeded"]
    evidence = [f"{_pod_where(p)} is {_status(p).get('phase') or 'Pending'}" + _waiting_reason(p) for p in waiting[:5]]
    if not live:
        return Verdict(
            STARTING,
            f"job {f.name} has no pods yet",
            evidence,
            f"`ktrain job wait {f.name} --for running` waits for them",
        )
    first = waiting[0] if waiting else None
    stuck = _stuck_starting(f, waiting, now)
    if stuck is not None:
        return stuck
    init = _initializer_running(f, live)
    if init is not None:
        return Verdict(
            STARTING,
            f"job {f.name} is initializing: {_pod_where(init)} is running first",
            evidence,
            f"`ktrain job logs {f.name} --step {js.pod_step(init)}` shows its progress",
        )
    return Verdict(
        STARTING,
        f"job {f.name} is starting: {ready} of {want} trainer pods are running"
        + (f"; {_pod_where(first)} is {_status(first).get('phase')}{_waiting_reason(first)}" if first else ""),
        evidence,
        f"`ktrain job wait {f.name} --for running` waits for it",
    )


# Seconds a pod bound to a node may take to start (pull, mount) before its events are read.
START_GRACE = 120.0
# The kubelet's Warning events for a pod that cannot start (pkg/kubelet/events/event.go): volumes
# (FailedMount, FailedAttachVolume) and the sandbox (FailedCreatePodSandBox).
_START_FAILURES = ("FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "FailedPostStartHook")


def _stuck_starting(f: Facts, waiting: list[Obj], now: dt.datetime) -> Verdict | None:
    """A pod on a node that has not started its containers for minutes: the kubelet's last word."""
    late = [p for p in waiting if _spec(p).get("nodeName") and _age(p, now) >= START_GRACE]
    if not late:
        return None
    events = _need(f, Read(EVENTS))
    for pod in late:
        said = [ev for ev in _events_about(events, "Pod", {_pod_name(pod)}) if ev.get("reason") in _START_FAILURES]
        attach = [ev for ev in said if str(ev.get("message") or "").startswith(_MULTI_ATTACH)]
        if attach:
            return _multi_attach(f, pod, attach[-1])
        if said:
            last = said[-1]
            return Verdict(
                CONTAINER_ERROR,
                f"{_pod_where(pod)} cannot start on node {_spec(pod).get('nodeName')}: "
                f"{last.get('reason')}: {last.get('message')}",
                [_event_line(ev) for ev in said[-3:]],
                "the message names the volume, Secret or network the pod waits for",
            )
    return None


def _waiting_reason(pod: Obj) -> str:
    for cs in _container_statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            return f" ({waiting.get('reason')})"
    return ""


def _initializer_running(f: Facts, pods: list[Obj]) -> Obj | None:
    for pod in pods:
        if js.pod_step(pod) in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER) and _status(pod).get("phase") in (
            "Running",
            "Pending",
        ):
            return pod
    return None


def _schedule_failure(f: Facts, pod: Obj) -> str | None:
    """The scheduler's latest word on a pod it refused: PodScheduled=False, else a FailedScheduling event."""
    cond = _condition(pod, "PodScheduled")
    if cond is not None and str(cond.get("status")) == "False" and cond.get("reason") in ("Unschedulable", None, ""):
        return str(cond.get("message") or cond.get("reason") or "")
    return None


def _pod_group(f: Facts, pod: Obj) -> tuple[str, str] | None:
    """(apiVersion, name) of the PodGroup the pod belongs to: coscheduling's label, Volcano's annotation."""
    labels = _meta(pod).get("labels") or {}
    annotations = _meta(pod).get("annotations") or {}
    if labels.get(c.COSCHEDULING_POD_GROUP_LABEL):
        return c.COSCHEDULING_API_VERSION, str(labels[c.COSCHEDULING_POD_GROUP_LABEL])
    if annotations.get(c.VOLCANO_GROUP_NAME_ANNOTATION) and _spec(pod).get("schedulerName") == "volcano":
        return c.VOLCANO_API_VERSION, str(annotations[c.VOLCANO_GROUP_NAME_ANNOTATION])
    return None


def _unschedulable(f: Facts, pod: Obj, live: list[Obj], now: dt.datetime) -> Verdict | None:
    message = _schedule_failure(f, pod)
    if message is None:
        return None
    ask = pod_ask(pod)
    same = [p for p in live if p is not pod and _schedule_failure(f, p) is not None]
    evidence = [f"{_pod_where(pod)}: {message}", f"each pod asks {_asks(ask)}"]
    if same:
        evidence.append(
            f"{_plural(len(same), 'more pod')} of the job {'waits' if len(same) == 1 else 'wait'} the same way"
        )
    verdict = _volume_verdict(f, pod, message, evidence, now)
    if verdict is not None:
        return verdict
    nodes = _need(f, Read(NODES))
    if nodes is None:
        return _decode_without_nodes(f, pod, message, ask, evidence)
    group = _pod_group(f, pod)
    if group is not None:
        verdict = _gang(f, pod, group, nodes, ask, evidence, live)
        if verdict is not None:
            return verdict
    return _decode(f, pod, message, ask, nodes, evidence)


def _with_usage(f: Facts, nodes: list[Obj]) -> list[NodeView]:
    """The nodes with what their pods hold (one more read: every pod bound to a node)."""
    return node_views(nodes, _need(f, Read(NODE_PODS)))


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
            f"the cluster has no nodes for pod {_pod_name(pod)}",
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
            f"every node pod {_pod_name(pod)} may use is cordoned "
            f"({_plural(len(matching), 'node')}, spec.unschedulable)",
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
    usage = {n.name: n for n in _with_usage(f, nodes)}
    known = [usage[n.name] for n in tolerated if n.name in usage and usage[n.name].used is not None]
    if known:
        wants = {**ask, "pods": _one()}
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
            named = _insufficient(reason)
            if named and named in ask:
                best = max(n.allocatable[named] for n in tolerated if named in n.allocatable)
                return Verdict(
                    INSUFFICIENT,
                    f"each pod asks {amount(named, ask[named])} {named}; nodes have up to "
                    f"{amount(named, best)}, but other pods hold it now (what they hold could not be read)",
                    evidence,
                    f"wait for other pods to end, or ask for less ({_FLAGS.get(named, '--resource')})",
                )
    placed = _placement_verdict(f, pod, fit, views, evidence)
    if placed is not None:
        return placed
    return Verdict(
        UNSCHEDULABLE,
        f"the scheduler cannot place pod {_pod_name(pod)}: {message}",
        evidence,
        f"its message says what holds it (`kubectl describe pod {_pod_name(pod)} -n {f.namespace}` shows "
        "the scheduler's latest attempt)",
    )


def _taint_verdict(f: Facts, pod: Obj, nodes: list[NodeView], evidence: list[str]) -> Verdict:
    counts: dict[str, int] = {}
    for node in nodes:
        for taint in untolerated(pod, node):
            counts[taint_text(taint)] = counts.get(taint_text(taint), 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ", ".join(f"{text} ({_plural(n, 'node')})" for text, n in ranked)
    return Verdict(
        UNTOLERATED_TAINTS,
        f"pod {_pod_name(pod)} does not tolerate the taints of the nodes it may use: {listed}",
        evidence,
        f"add a toleration (--toleration {ranked[0][0]}) if the job belongs on those nodes, or ask the cluster admin",
    )


def _one() -> Quantity:
    from ktrain.engine.quantity import Quantity

    return Quantity.of(1)


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
            f"each pod asks {amount(resource, want)} {resource}; no node has any {resource} ({_plural(total, 'node')})",
            evidence,
            f"ask for none (drop {_FLAGS.get(resource, '--resource')}), or use a cluster whose nodes have {resource}",
        )
    having = sum(1 for n in nodes if n.allocatable.get(resource) == best)
    count = _plural(having, "node") if having == total else f"{having} of {total} nodes"
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
    return ", ".join(f"{_plural(n, 'node')} with {text} {resource}" for text, n in sorted(counts.items()))


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
            f"every node pod {_pod_name(pod)} may use is full (its pod limit reached)",
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
    selector = {str(k): str(v) for k, v in (_spec(pod).get("nodeSelector") or {}).items()}
    lacking = [(k, v) for k, v in sorted(selector.items()) if not any(n.labels.get(k) == v for n in views)]
    if lacking:
        key, value = lacking[0]
        return Verdict(
            NO_MATCHING_NODE,
            f"no node matches nodeSelector {key}={value} ({_label_census(views, key)})",
            evidence,
            "use a value the nodes have (--gpu-type, --node-selector), or ask the cluster admin to label nodes",
        )
    if selector and not any(all(n.labels.get(k) == v for k, v in selector.items()) for n in views):
        shown = ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return Verdict(
            NO_MATCHING_NODE,
            f"no node matches nodeSelector {shown} (each label is on some node, never all on one)",
            evidence + [_label_census(views, k) for k in sorted(selector)],
            "drop one of the labels, or ask the cluster admin",
        )
    terms = _required_terms(pod) or []
    keys = sorted({str(e.get("key")) for t in terms for e in t.get("matchExpressions") or [] if isinstance(e, dict)})
    return Verdict(
        NO_MATCHING_NODE,
        "no node matches the pod's required node affinity"
        + (f" ({'; '.join(_label_census(views, k) for k in keys)})" if keys else ""),
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
        return Verdict(UNSCHEDULABLE, f"the scheduler cannot place pod {_pod_name(pod)}: {message}", evidence)
    of = f"{{}} of {fit.nodes} nodes" if fit.nodes else "{} nodes"
    said: list[tuple[int, str, str, str]] = []  # (priority, code, phrase, next step)
    for count, reason in fit.reasons:
        nodes = of.format(count) if count is not None else "the nodes"
        resource = _insufficient(reason)
        if resource:
            want = ask.get(resource)
            asked = f"each pod asks {amount(resource, want)} {resource}; " if want is not None and not said else ""
            flag = _FLAGS.get(resource, "--resource")
            step = f"ask for less ({flag}) or wait for other pods to end"
            said.append((0, INSUFFICIENT, f"{asked}{nodes} lack that much {resource}", step))
        elif _is_selector(reason):
            selector = ", ".join(f"{k}={v}" for k, v in sorted((_spec(pod).get("nodeSelector") or {}).items()))
            phrase = f"{nodes} do not match the pod's node selector/affinity" + (f" ({selector})" if selector else "")
            said.append((1, NO_MATCHING_NODE, phrase, "use a value the nodes have (--gpu-type, --node-selector)"))
        elif _is_taint(reason):
            step = "`kubectl describe nodes | grep Taints` names them; add a toleration (--toleration)"
            said.append((2, UNTOLERATED_TAINTS, f"{nodes} have taints the pod does not tolerate", step))
        elif _is_cordoned(reason):
            said.append((3, NODES_CORDONED, f"{nodes} are cordoned", "wait for the nodes to be uncordoned"))
        elif reason.startswith((_AFFINITY, _ANTI_AFFINITY, _EXISTING_ANTI)):
            exclusive = _exclusive_key(f, pod)
            if exclusive and not reason.startswith(_EXISTING_ANTI):
                phrase = (
                    f"{nodes} are in {exclusive} domains other Jobs hold "
                    f"(JobSet exclusive placement, {c.JOBSET_EXCLUSIVE_ANNOTATION}: {exclusive})"
                )
                step = "wait for the Jobs holding the domains to end, or run without exclusive placement"
                said.append((1, EXCLUSIVE_PLACEMENT, phrase, step))
            else:
                step = "wait for the pods the rule names to end or start, or make the rule preferred"
                said.append((1, POD_AFFINITY, f"{nodes}: {reason}", step))
        elif reason.startswith(_SPREAD):
            step = "raise maxSkew or use whenUnsatisfiable: ScheduleAnyway"
            said.append((1, TOPOLOGY_SPREAD, f"{nodes}: {reason}", step))
        elif reason.startswith(_PORTS):
            said.append((1, HOST_PORTS, f"{nodes}: {reason}", "use another port, or run without hostPort/hostNetwork"))
        else:
            said.append((4, UNSCHEDULABLE, f"{nodes}: {reason}", "the scheduler's message says what holds it"))
    said.sort(key=lambda item: item[0])
    _, code, _, step = said[0]
    return Verdict(code, "; ".join(item[2] for item in said) + f" ({why} to say more)", evidence, step)


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
        for resource, want in {**ask, "pods": _one()}.items():
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


def _gang(
    f: Facts,
    pod: Obj,
    group: tuple[str, str],
    nodes: list[Obj],
    ask: dict[str, Quantity],
    evidence: list[str],
    live: list[Obj],
) -> Verdict | None:
    api_version, name = group
    pg = _need(f, Read(POD_GROUP, name=name, api_version=api_version))
    if not isinstance(pg, dict):
        return None
    min_member = int(_spec(pg).get("minMember") or 0)
    if not min_member:
        return None
    extra = [f"PodGroup {f.namespace}/{name}: minMember {min_member}, phase {_status(pg).get('phase') or '-'}"]
    cond = _condition(pg, "Unschedulable")
    if cond is not None and cond.get("message"):
        extra.append(f"PodGroup condition Unschedulable: {cond.get('message')}")
    if len(live) < min_member:
        return Verdict(
            GANG,
            f"the gang needs {min_member} pods (PodGroup {name} minMember) but only {len(live)} exist",
            evidence + extra,
            "the missing pods are not created: see `ktrain job get` and the namespace's quota",
        )
    room, exact = _room_for(pod, ask, _with_usage(f, nodes))
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


def _unscheduled(f: Facts, pod: Obj, now: dt.datetime) -> Verdict | None:
    status = _status(pod)
    if status.get("phase") != "Pending" or _spec(pod).get("nodeName") or _container_statuses(pod):
        return None  # bound to a node: a kubelet has it
    if any(cond.get("type") == "PodScheduled" for cond in status.get("conditions") or [] if isinstance(cond, dict)):
        return None
    waited = _age(pod, now)
    if waited < SCHEDULER_GRACE:
        return None
    scheduler = str(_spec(pod).get("schedulerName") or "default-scheduler")
    evidence = [
        f"{_pod_where(pod)}: Pending for {_ago(waited)}, no PodScheduled condition, schedulerName {scheduler}",
    ]
    if scheduler == "volcano":
        served = _need(f, Read(SERVED, api_version=c.VOLCANO_API_VERSION))
        if served is False:
            return Verdict(
                NO_SCHEDULER,
                "the pods name scheduler volcano, and the cluster does not serve Volcano (scheduling.volcano.sh): "
                "nothing will schedule them, nor write an event",
                evidence,
                "install Volcano (https://volcano.sh/en/docs/installation/), "
                "or create the job without --scheduler volcano",
            )
        group = _pod_group(f, pod)
        if group is not None:
            pg = _need(f, Read(POD_GROUP, name=group[1], api_version=group[0]))
            if isinstance(pg, dict):
                phase = _status(pg).get("phase") or "-"
                cond = _condition(pg, "Unschedulable")
                if cond is not None and str(cond.get("status")) == "True":
                    return Verdict(
                        GANG,
                        f"Volcano cannot place the gang of PodGroup {group[1]}: "
                        f"{cond.get('message') or cond.get('reason')}",
                        [
                            *evidence,
                            f"PodGroup {f.namespace}/{group[1]}: phase {phase}, minMember {_spec(pg).get('minMember')}",
                        ],
                        "ask for less per pod or fewer pods (--nodes), or wait for room in the queue",
                    )
                if phase == "Pending":
                    queue = _spec(pg).get("queue") or "default"
                    return Verdict(
                        QUEUED,
                        f"Volcano has not admitted PodGroup {group[1]} to queue {queue} (phase Pending)",
                        evidence,
                        f"`kubectl get queue {queue} -o yaml` shows its capacity and what it holds",
                    )
    who = "the default scheduler" if scheduler == "default-scheduler" else f"scheduler {scheduler}"
    return Verdict(
        NO_SCHEDULER,
        f"{who} has not looked at pod {_pod_name(pod)} in {_ago(waited)}: is it running?",
        evidence,
        f"`kubectl get pods -A | grep {scheduler}` shows whether it runs; `--scheduler` names another",
    )


# --- containers ---
# kubelet: ErrImagePull / ImagePullBackOff / InvalidImageName / ErrImageNeverPull
# (pkg/kubelet/images/types.go), the pull's error in the waiting message and in the "Failed" event
# `Failed to pull image "<image>": <error>` (pkg/kubelet/images/image_manager.go); CrashLoopBackOff
# (pkg/kubelet/container/sync_result.go, message "back-off <d> restarting failed container=..."
# from pkg/kubelet/kuberuntime/kuberuntime_manager.go); OOMKilled is the runtime's terminated reason.

_PULL = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
_CONTAINER_ERRORS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreStartHookError")


def _oom(pod: Obj, current: bool = False) -> tuple[str, Obj] | None:
    """(container, its terminated state) when a container of the pod was OOMKilled (now or in its
    last run); with `current`, only a container that is not running again since."""
    for cs in _container_statuses(pod):
        if current and "running" in (cs.get("state") or {}):
            continue
        for state in (cs.get("state") or {}, cs.get("lastState") or {}):
            term = state.get("terminated") or {}
            if term.get("reason") == "OOMKilled":
                return str(cs.get("name")), term
    return None


def _oom_text(pod: Obj, container: str, term: Obj) -> str:
    limits = (_container_spec(pod, container).get("resources") or {}).get("limits") or {}
    limit = _q(limits.get("memory")) if limits.get("memory") is not None else None
    pod_limit = (((_spec(pod).get("resources") or {}).get("limits")) or {}).get("memory")
    if limit is None and pod_limit is not None:
        limit = _q(pod_limit)
    hit = f"its memory limit {amount('memory', limit)}" if limit is not None else "the node's memory (no limit set)"
    return f"container {container} was OOMKilled: it used more than {hit} (exit code {term.get('exitCode', 137)})"


def _log_tail(f: Facts, pod: Obj, container: str, previous: bool) -> list[str] | None:
    lines = _need(f, Read(LOG, name=_pod_name(pod), container=container, previous=previous))
    if lines is None:
        return None
    return [text for _, text in lines[-LOG_LINES:]]


def _container_trouble(f: Facts, pod: Obj, now: dt.datetime) -> Verdict | None:
    oom = _oom(pod, current=True)
    if oom is not None:
        container, term = oom
        text = _oom_text(pod, container, term)
        return Verdict(
            OOM_KILLED,
            f"{_pod_where(pod)}: {text}",
            [f"{_pod_where(pod)}: {text}"],
            "ask for more memory (--memory, and a limit to match) or use less (smaller batches)",
        )
    for cs in _container_statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        name = str(cs.get("name"))
        if reason in _PULL:
            return _image_verdict(f, pod, name, str(reason), str(waiting.get("message") or ""))
        if reason == "CrashLoopBackOff":
            last = (cs.get("lastState") or {}).get("terminated") or {}
            code = last.get("exitCode")
            lines = _log_tail(f, pod, name, previous=True)
            evidence = [f"{_pod_where(pod)}: {waiting.get('message') or 'CrashLoopBackOff'}"]
            if lines:
                evidence.append(f"last lines of container {name} before it ended:")
                evidence += [f"  {line}" for line in lines]
            elif lines is not None:
                evidence.append(f"container {name} wrote nothing before it ended")
            return Verdict(
                CRASH_LOOP,
                f"container {name} of {_pod_where(pod)} keeps crashing "
                f"({_plural(int(cs.get('restartCount') or 0), 'restart')}"
                + (f", last exit code {code}" if code is not None else "")
                + ")",
                evidence,
                f"`ktrain job logs {f.name} --previous` shows the whole output of the last run",
            )
        if reason in _CONTAINER_ERRORS:
            return Verdict(
                CONTAINER_ERROR,
                f"container {name} of {_pod_where(pod)} cannot start: {reason}: {waiting.get('message') or ''}".rstrip(
                    ": "
                ),
                [f"{_pod_where(pod)}: {reason}: {waiting.get('message') or ''}"],
                "the message names what is missing (a Secret, a ConfigMap, a volume)",
            )
    if _status(pod).get("phase") == "Failed":
        for cs in _container_statuses(pod):
            term = (cs.get("state") or {}).get("terminated") or {}
            if term.get("exitCode") not in (None, 0):
                name = str(cs.get("name"))
                lines = _log_tail(f, pod, name, previous=False)
                evidence = [f"{_pod_where(pod)}: container {name} exited with code {term.get('exitCode')}"]
                if lines:
                    evidence.append(f"last lines of container {name}:")
                    evidence += [f"  {line}" for line in lines]
                return Verdict(
                    POD_FAILED,
                    f"container {name} of {_pod_where(pod)} failed with exit code {term.get('exitCode')}"
                    + (f" ({term.get('reason')})" if term.get("reason") not in (None, "Error") else ""),
                    evidence,
                    f"`ktrain job logs {f.name}` shows its output; the JobSet restarts it if its failure policy allows",
                )
    return None


def _image_verdict(f: Facts, pod: Obj, container: str, reason: str, message: str) -> Verdict:
    image = str(_container_spec(pod, container).get("image") or "")
    # The registry's words: in the waiting message (ErrImagePull; since 1.33 ImagePullBackOff's
    # `Back-off pulling image "<image>": ErrImagePull: <error>` too), else in the last "Failed" event.
    words = (
        message.removeprefix(f'Back-off pulling image "{image}"').lstrip(": ").removeprefix("ErrImagePull").lstrip(": ")
    )
    pulls: list[Obj] = []
    if not words:
        events = _need(f, Read(EVENTS))
        pulls = [
            ev
            for ev in _events_about(events, "Pod", {_pod_name(pod)})
            if str(ev.get("message") or "").startswith("Failed to pull image")
        ]
        if pulls:
            said = str(pulls[-1].get("message"))
            words = said.split(": ", 1)[1] if ": " in said else said
    evidence = [f"{_pod_where(pod)}: container {container}: {reason}" + (f": {message}" if message else "")]
    evidence += [_event_line(ev) for ev in pulls[-2:]]
    return Verdict(
        IMAGE_PULL,
        f"image {image} cannot be pulled" + (f": {words}" if words else f" ({reason})"),
        evidence,
        "check the image name and tag (--image), and that the registry lets the cluster pull it "
        "(a pull secret in the runtime's imagePullSecrets)",
    )


# --- running ---
# torch: "[<role>] Rendezvous'ing worker group" (torch/distributed/elastic/agent/server/api.py), "Waiting
# in store based barrier to initialize process group" (torch/distributed/distributed_c10d.py), "The client
# socket has failed to connect to" (c10d socket.cpp), etcd rendezvous "Attempting to join next rendezvous".

_RENDEZVOUS_MARKS = (
    "Rendezvous'ing worker group",
    "Waiting in store based barrier",
    "socket has failed to connect",
    "Attempting to join next rendezvous",
    "Added self to waiting list",
    "Waiting for the rendezvous",
)


def _is_rendezvous(text: str) -> bool:
    return any(mark in text for mark in _RENDEZVOUS_MARKS)


def _is_banner(text: str) -> bool:
    """What torchrun prints around its start that is no progress: blank lines, rows of `*`, the
    OMP_NUM_THREADS notice (torch/distributed/run.py)."""
    stripped = text.strip()
    return (
        not stripped.strip("*") or "OMP_NUM_THREADS" in stripped or stripped.startswith("WARNING:torch.distributed.run")
    )


def rendezvous_wait(lines: list[tuple[str, str]], now: dt.datetime) -> float | None:
    """Seconds rank 0 has sat at the rendezvous: its log ends in rendezvous lines (torchrun's
    banner may follow them), and the first of those is that old. None when the log moved on."""
    marks = [i for i, (_, text) in enumerate(lines) if _is_rendezvous(text)]
    if not marks or not all(_is_banner(text) for _, text in lines[marks[-1] + 1 :]):
        return None
    first = marks[-1]
    while first > 0 and (first - 1) in marks:
        first -= 1
    since = js.parse_time(lines[first][0]) if lines[first][0] else None
    if since is None:
        return None
    return (now - since).total_seconds()


def _rank0(f: Facts) -> Obj | None:
    step = js.trainer_step(f.jobset)
    candidates = [p for p in f.pods or [] if js.pod_step(p) == step and (js.pod_rank(p) or 0) == 0]
    candidates = [p for p in candidates if _status(p).get("phase") == "Running"] or candidates
    candidates.sort(key=lambda p: str(_meta(p).get("creationTimestamp") or ""))
    return candidates[-1] if candidates else None


def _running(f: Facts, now: dt.datetime) -> Verdict:
    # Running by ENGINE.md §10 (every trainer pod Running), yet a container may be crash-looping in it.
    for each in _sorted_pods(f.pods or []):
        verdict = _container_trouble(f, each, now)
        if verdict is not None:
            return verdict
    ready, want = js.trainer_pod_counts(f.trainjob, f.jobset, f.pods or [])
    pod = _rank0(f)
    sentence = f"job {f.name} is running ({ready} of {want} trainer pods)"
    if pod is None:
        return Verdict(RUNNING, sentence)
    container = main_container(pod)
    lines = _need(f, Read(LOG, name=_pod_name(pod), container=container))
    if not lines:
        return Verdict(RUNNING, sentence, [f"{_pod_where(pod)}: no log lines yet"] if lines is not None else [])
    waited = rendezvous_wait(lines, now)
    tail = [f"  {text}" for _, text in lines[-LOG_LINES:]]
    if waited is not None and waited >= RENDEZVOUS_GRACE:
        return Verdict(
            RENDEZVOUS_WAIT,
            f"job {f.name} runs but is stuck: rank 0 has waited {_ago(waited)} at the rendezvous for its peers",
            [f"last lines of {_pod_where(pod)}:", *tail],
            "every rank must reach the same rendezvous: `ktrain job logs "
            f"{f.name} --all` shows which did not (a wrong MASTER_ADDR/port, a blocked port, a rank that died)",
        )
    last = js.parse_time(lines[-1][0]) if lines[-1][0] else None
    quiet = f", {_ago((now - last).total_seconds())} ago" if last else ""
    return Verdict(RUNNING, sentence, [f"last line of {_pod_where(pod)}{quiet}:", tail[-1]])
