"""`job why` for queues and quotas: a job suspended by Kueue (its Workload's conditions), by a queue
label on a cluster without Kueue, or by hand; a ResourceQuota that refuses its pods. Reads: Kueue
Workloads (`WORKLOADS`), a LocalQueue (`LOCAL_QUEUE`), the namespace's ResourceQuotas (`QUOTAS`).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs import state as js
from ktrain.jobs.why.facts import (
    CONTROLLER_GRACE,
    NOT_SERVED,
    Facts,
    Read,
    Verdict,
    age_of,
    ago_of,
    condition_of,
    meta,
    need,
    read_kind,
    spec_of,
    status_of,
)
from ktrain.jobs.why.nodes import amount, asks_of, pod_ask, resources_of

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt

    from ktrain.engine.quantity import Quantity
    from ktrain.util.jsondata import Obj


SUSPENDED = "Suspended"
NOT_ADMITTED = "NotAdmitted"
NO_KUEUE = "NoKueue"
QUEUED = "Queued"
NO_WORKLOAD = "NoWorkload"


QUOTA_EXCEEDED = "QuotaExceeded"


QUOTAS = read_kind("quotas", "ResourceQuotas")  # the namespace's
WORKLOADS = read_kind("workloads", "Kueue Workloads")  # in the namespace
LOCAL_QUEUE = read_kind("local-queue", "Kueue LocalQueue {name}")


def _queue_label(main: Obj | None) -> str | None:
    value = (meta(main).get("labels") or {}).get(c.KUEUE_QUEUE_LABEL)
    return str(value) if value else None


# --- suspended and queued ---


def suspended_of(f: Facts, main: Obj | None, kind: str, now: dt.datetime) -> Verdict:
    queue = _queue_label(f.trainjob) or _queue_label(f.jobset)
    if not queue:
        return Verdict(
            SUSPENDED,
            f"job {f.name} is suspended (spec.suspend: true) and no queue will resume it",
            [f"{kind} {f.namespace}/{f.name}: spec.suspend is true; it carries no {c.KUEUE_QUEUE_LABEL} label"],
            f"`ktrain job resume {f.name}` resumes it",
        )
    label = f"{c.KUEUE_QUEUE_LABEL}={queue}"
    workloads = need(f, Read(WORKLOADS))
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
    age = age_of(main, now)
    if workload is None:
        if age < CONTROLLER_GRACE:
            return Verdict(
                QUEUED,
                f"job {f.name} is suspended; Kueue has not made its Workload yet ({ago_of(age)} old)",
                [f"{kind} {f.name} carries {label}"],
                f"`ktrain job wait {f.name} --for running` waits for it",
            )
        return Verdict(
            NO_WORKLOAD,
            f"job {f.name} is suspended for Kueue queue {queue}, but Kueue made no Workload for it in {ago_of(age)}",
            [f"{kind} {f.name} carries {label}; no Workload in {f.namespace} is owned by it"],
            "Kueue's configuration must list the job's kind under integrations.frameworks "
            f"({'trainer.kubeflow.org/trainjob' if f.trainjob else 'jobset.x-k8s.io/jobset'}); "
            "ask the cluster admin, or remove the label and resume the job",
        )
    return _workload_verdict(f, workload, queue)


def _own_workload(workloads: list[Obj], f: Facts) -> Obj | None:
    """The Workload Kueue made for the job: owned by its TrainJob or JobSet."""
    owners = {(c.TRAINJOB_KIND, f.name), (c.JOBSET_KIND, f.name)}
    uids = {meta(o).get("uid") for o in (f.trainjob, f.jobset) if o and meta(o).get("uid")}
    for wl in workloads:
        for ref in meta(wl).get("ownerReferences") or []:
            if (ref.get("kind"), ref.get("name")) in owners and (not uids or ref.get("uid") in uids):
                return wl
    return None


def _workload_verdict(f: Facts, wl: Obj, queue: str) -> Verdict:
    """kueue apis/kueue/v1beta1/workload_types.go: QuotaReserved (the scheduler found quota, in a
    ClusterQueue), then Admitted (and every admission check Ready)."""
    name = str(meta(wl).get("name"))
    reserved = condition_of(wl, "QuotaReserved")
    admitted = condition_of(wl, "Admitted")
    cq = ((status_of(wl).get("admission") or {}).get("clusterQueue")) or None
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
    for pod_set in spec_of(wl).get("podSets") or []:
        ask = pod_ask(pod_set.get("template") or {}) if isinstance(pod_set, dict) else {}
        evidence.append(
            f"pod set {pod_set.get('name')}: {pod_set.get('count')} pods" + (f", each {asks_of(ask)}" if ask else "")
        )
    evicted = condition_of(wl, "Evicted")
    if evicted is not None and str(evicted.get("status")) == "True":
        evidence.append(f"Evicted=True ({evicted.get('reason')}): {evicted.get('message') or ''}".rstrip(": "))
    if spec_of(wl).get("active") is False:  # kueue: spec.active false deactivates (reason Deactivated)
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
            for ch in status_of(wl).get("admissionChecks") or []
        ]
        pending = [ch for ch in status_of(wl).get("admissionChecks") or [] if ch.get("state") != "Ready"]
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
        lq = need(f, Read(LOCAL_QUEUE, name=queue))
        if isinstance(lq, dict):
            cq = spec_of(lq).get("clusterQueue") or None
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


def quota_verdict(f: Facts, message: str, evidence: list[str]) -> Verdict:
    parsed = parse_quota_refusal(message)
    quotas = need(f, Read(QUOTAS))
    if parsed is None:
        return Verdict(QUOTA_EXCEEDED, f"a ResourceQuota refuses the pods of job {f.name}", evidence)
    name, requested, used, limited = parsed
    stored = next((q for q in quotas or [] if meta(q).get("name") == name), None)
    if stored is not None:  # the quota as it stands now
        used = {k: str(status_of(stored).get("used", {}).get(k, v)) for k, v in used.items()}
        limited = {k: str(status_of(stored).get("hard", {}).get(k, v)) for k, v in limited.items()}
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


def quota_from_usage(f: Facts) -> Verdict | None:
    """Without events: a quota whose used + one pod's ask exceeds its hard limit."""
    quotas = need(f, Read(QUOTAS))
    ask = _template_ask(f.jobset)
    for quota in quotas or []:
        hard, used = resources_of(status_of(quota).get("hard")), resources_of(status_of(quota).get("used"))
        for key, limit in sorted(hard.items()):
            resource = key.removeprefix("requests.")
            if resource not in ask or key.startswith("limits."):
                continue
            from ktrain.engine.quantity import ZERO

            if used.get(key, ZERO) + ask[resource] > limit:
                name = meta(quota).get("name")
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
