"""`job why` for volumes: a claim missing, unbound, lost or pinned away from the nodes, and a
ReadWriteOnce volume attached to another node (Multi-Attach). Reads: the namespace's
PersistentVolumeClaims (`CLAIMS`).
"""

from __future__ import annotations

from ktrain.jobs.why.facts import (
    EVENTS,
    Facts,
    Read,
    Verdict,
    age_of,
    ago_of,
    event_line,
    events_about,
    meta,
    need,
    pod_name,
    pod_where,
    read_kind,
    spec_of,
    status_of,
)

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt

    from ktrain.util.jsondata import Obj


CLAIM_NOT_FOUND = "ClaimNotFound"  # a pod mounts a PersistentVolumeClaim that does not exist
CLAIM_PENDING = "ClaimPending"  # ... one that is not bound (no class, no volume, provisioning failed)
CLAIM_UNUSABLE = "ClaimUnusable"  # ... one that lost its volume or is being deleted
VOLUME_NODE_CONFLICT = "VolumeNodeConflict"  # its volume is pinned (zone) away from the nodes
VOLUME_IN_USE = "VolumeInUse"  # a ReadWriteOnce volume attached to another node (Multi-Attach)


CLAIMS = read_kind("claims", "PersistentVolumeClaims")  # the namespace's


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
MULTI_ATTACH = "Multi-Attach error for volume "


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
    for vol in spec_of(pod).get("volumes") or []:
        if not isinstance(vol, dict):
            continue
        source = vol.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            out.append((str(vol.get("name")), str(source["claimName"]), False))
        elif isinstance(vol.get("ephemeral"), dict):
            out.append((str(vol.get("name")), f"{pod_name(pod)}-{vol.get('name')}", True))
    return out


def _claim_line(f: Facts, pvc: Obj) -> str:
    spec = spec_of(pvc)
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    modes = ", ".join(str(m) for m in spec.get("accessModes") or []) or "no access modes"
    cls = spec.get("storageClassName")
    return (
        f"PersistentVolumeClaim {f.namespace}/{meta(pvc).get('name')}: {status_of(pvc).get('phase') or 'Pending'}, "
        f"storage class {cls if cls else '(none)'}, {size or '?'}, {modes}"
        + (f", volume {spec.get('volumeName')}" if spec.get("volumeName") else "")
    )


def volume_verdict(f: Facts, pod: Obj, message: str, evidence: list[str], now: dt.datetime) -> Verdict | None:
    """The scheduler refused the pod for its volumes: which claim holds it, and why."""
    kinds = volume_words(message)
    if not kinds:
        return None
    mounted = pod_claims(pod)
    claims = need(f, Read(CLAIMS))
    where = pod_where(pod)
    if claims is None:
        return _volume_from_words(f, pod, message, kinds, mounted, evidence)
    by_name = {str(meta(pvc).get("name")): pvc for pvc in claims if isinstance(pvc, dict)}
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
        if meta(pvc).get("deletionTimestamp"):
            return Verdict(
                CLAIM_UNUSABLE,
                f"PersistentVolumeClaim {name} that {where} mounts is being deleted",
                line,
                f"create the claim again once it is gone, or mount another (`kubectl get pvc {name} -n "
                f"{f.namespace}` shows it; its finalizer waits for the pods using it to end)",
            )
        phase = status_of(pvc).get("phase") or "Pending"
        if phase == "Lost":
            return Verdict(
                CLAIM_UNUSABLE,
                f"PersistentVolumeClaim {name} that {where} mounts lost its volume "
                f"{spec_of(pvc).get('volumeName') or ''}".rstrip()
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
    name = str(meta(pvc).get("name"))
    spec = spec_of(pvc)
    cls = spec.get("storageClassName")
    events = need(f, Read(EVENTS))
    said = events_about(events, "PersistentVolumeClaim", {name})
    evidence = [*evidence, *(event_line(ev) for ev in said[-2:])]
    what = f"PersistentVolumeClaim {name} (volume {volume} of {pod_where(pod)}) is not bound"
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
    annotations = meta(pvc).get("annotations") or {}
    provisioner = next((annotations[k] for k in _PROVISIONER_ANNOTATIONS if annotations.get(k)), None)
    if provisioner:
        return Verdict(
            CLAIM_PENDING,
            f"{what}: waiting {ago_of(age_of(pvc, now))} for provisioner {provisioner} to create its volume "
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
    where = pod_where(pod)
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


def multi_attach(f: Facts, pod: Obj, event: Obj) -> Verdict:
    """A pod on a node whose ReadWriteOnce volume another node holds."""
    text = str(event.get("message") or "")
    pv = _quoted_after(text, "Multi-Attach error for volume") or "?"
    _, _, users = text.partition("Volume is already used by pod(s) ")
    holders = [u.strip() for u in users.split(" and ")[0].split(",") if u.strip()] if users else []
    ours = {pod_name(p) for p in f.pods or []}
    claims = need(f, Read(CLAIMS))
    pvc = next((c for c in claims or [] if isinstance(c, dict) and spec_of(c).get("volumeName") == pv), None)
    claim = f"claim {meta(pvc).get('name')}" if pvc else f"volume {pv}"
    modes = "/".join(str(m) for m in spec_of(pvc).get("accessModes") or []) if pvc else ""
    evidence = [event_line(event)] + ([_claim_line(f, pvc)] if pvc else [])
    node = spec_of(pod).get("nodeName")
    mine = [h for h in holders if h in ours]
    if mine:
        sentence = (
            f"{pod_where(pod)} cannot start on node {node}: {claim}"
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
            f"{pod_where(pod)} cannot start on node {node}: {claim}"
            + (f" ({modes})" if modes else "")
            + f" is attached to another node, used by {who}"
        )
        step = "wait for the pods using it to end, or mount a ReadWriteMany claim"
    return Verdict(VOLUME_IN_USE, sentence, evidence, step)
