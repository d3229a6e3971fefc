"""Use cases that change a cluster: create a rendered job, delete a job, wait for its end.

Composes the cluster client with the render outcome; never prints (callers get values and
warnings back). Every step that writes is undone on failure: nothing is left half-made.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster, NotSentError
from ktrain.cluster.names import check_name
from ktrain.engine.plugins.flux import CURVE_SUFFIX, ENTRYPOINT_SUFFIX
from ktrain.engine.plugins.mpi import HOSTFILE_SUFFIX, SSH_AUTH_SECRET_SUFFIX
from ktrain.errors import ApiError, ClusterError, ClusterUnreachableError, ConflictError, KtrainError, WaitTimeoutError

Obj = dict[str, Any]

TARGET_JOBSET = "jobset"
TARGET_TRAINJOB = "trainjob"

# How to install what a job needs, per API group (shown when discovery does not serve it).
INSTALL_HINTS = {
    c.JOBSET_GROUP: "kubectl apply --server-side -f "
    "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml",
    "scheduling.x-k8s.io": "kubectl apply --server-side -f https://raw.githubusercontent.com/kubernetes-sigs/"
    "scheduler-plugins/v0.35.4-devel/config/crd/bases/scheduling.x-k8s.io_podgroups.yaml "
    "(and run the scheduler-plugins scheduler)",
    "scheduling.volcano.sh": "kubectl apply --server-side -f https://raw.githubusercontent.com/volcano-sh/volcano/"
    "v1.13.3/config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml "
    "(and install the Volcano scheduler)",
    c.TRAINER_GROUP: 'kubectl apply --server-side -k "https://github.com/kubeflow/trainer.git/'
    'manifests/base/crds?ref=v2.3.0"',
}

# Objects a job may have besides its JobSet / TrainJob, by name (ENGINE.md §1).
COMPANION_SUFFIXES: tuple[tuple[k.Resource, str], ...] = (
    (k.SECRET, SSH_AUTH_SECRET_SUFFIX),
    (k.CONFIGMAP, HOSTFILE_SUFFIX),
    (k.CONFIGMAP, c.RUNTIME_SNAPSHOT_SUFFIX),
    (k.CONFIGMAP, ENTRYPOINT_SUFFIX),
    (k.SECRET, CURVE_SUFFIX),
    (k.COSCHEDULING_PODGROUP, ""),
    (k.VOLCANO_PODGROUP, ""),
)


class MissingApiError(ClusterError):
    """A CRD the job needs is not served by the cluster."""


@dataclass
class Written:
    """One object a command wrote (or would write, in a server dry run)."""

    resource: k.Resource
    name: str
    namespace: str | None
    obj: Obj
    created: bool
    # False for a write whose answer never came (connection lost, 5xx, Ctrl-C in flight): the
    # server may have stored it, so a rollback deletes it by name, and a 404 then is no error.
    confirmed: bool = True

    @property
    def ref(self) -> str:
        return f"{self.resource.type_name}/{self.name}"


@dataclass
class CreateResult:
    written: list[Written] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- checks before writing ------------------------------------------------------------------


def check_apis(cluster: KubeCluster, objects: list[Obj]) -> None:
    """Fail with one message naming every kind the cluster does not serve, and how to add it."""
    wanted: dict[str, set[str]] = {}
    for obj in objects:
        wanted.setdefault(str(obj["apiVersion"]), set()).add(str(obj["kind"]))
    missing: list[tuple[str, str]] = []
    for api_version, kinds in sorted(wanted.items()):
        if "/" not in api_version:
            continue  # the core group is always there
        served = k.served_kinds(cluster, api_version) or set()
        missing.extend((api_version, kind) for kind in sorted(kinds - served))
    if not missing:
        return
    names = ", ".join(f"{kind} ({api_version})" for api_version, kind in missing)
    hints = []
    for api_version, _ in missing:
        hint = INSTALL_HINTS.get(api_version.split("/")[0])
        if hint and hint not in hints:
            hints.append(hint)
    raise MissingApiError(
        f"the cluster does not serve {names}: its CRD is not installed",
        hint="; ".join(hints) if hints else None,
    )


def owned_by_job(obj: Obj, job_name: str) -> bool:
    """Whether an object belongs to job `job_name` (its JobSet or its TrainJob owns it)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") in (c.JOBSET_KIND, c.TRAINJOB_KIND) and ref.get("name") == job_name:
            return True
    return False


def existing_objects(cluster: KubeCluster, name: str, namespace: str, objects: list[Obj]) -> list[Written]:
    """What already exists of a job: its JobSet and TrainJob, and any object we are about to write."""
    seen: list[Written] = []
    candidates = [(k.TRAINJOB, name), (k.JOBSET, name)]
    candidates += [(k.resource_of(o), str(o["metadata"]["name"])) for o in objects]
    for resource, obj_name in dict.fromkeys(candidates):
        found = k.get(cluster, resource, obj_name, namespace)
        if found is not None:
            seen.append(Written(resource, obj_name, namespace, found, created=False))
    return seen


# --- create -----------------------------------------------------------------------------------


def record_runtime(objects: list[Obj], runtime_name: str) -> list[Obj]:
    """The objects to submit, the JobSet annotated with the runtime it was rendered from, so that
    `job list` can show it (a TrainJob says so in its runtimeRef; a bare JobSet would not)."""
    out = []
    for obj in objects:
        if obj.get("kind") == c.JOBSET_KIND:
            meta = dict(obj.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), c.RUNTIME_ANNOTATION: runtime_name}
            obj = {**obj, "metadata": meta}
        out.append(obj)
    return out


def create_job(
    cluster: KubeCluster,
    objects: list[Obj],
    *,
    name: str,
    namespace: str,
    target: str,
    dry_run: bool = False,
    overwrite: bool = False,
) -> CreateResult:
    """Submit a rendered job (`objects` in kind-rank order, JobSet last) or its TrainJob.

    JobSet target: the JobSet goes first, suspended, so the others can carry an ownerReference
    to it (deleting the JobSet then collects them); it is unsuspended last unless the job asks
    to stay suspended. On any failure what this call created is deleted again, newest first.
    """
    for obj in objects:  # every name and namespace checked before the first request (InvalidNameError)
        meta = obj.get("metadata") or {}
        k.resource_of(obj).path(meta.get("namespace") or namespace, str(meta.get("name")))
    check_apis(cluster, objects)
    result = CreateResult()
    existing = existing_objects(cluster, name, namespace, objects)
    if existing:
        if not overwrite:
            first = existing[0]
            what = "job" if first.resource in (k.JOBSET, k.TRAINJOB) else "object"
            raise ConflictError(
                f"{what} {first.ref} already exists in namespace {namespace}",
                status=409,
                reason="AlreadyExists",
                hint=f"pass --overwrite to replace it, or delete it first: ktrain job delete {name} -n {namespace}",
            )
        if not dry_run:
            removed = delete_job(cluster, name, namespace, extra=[(w.resource, w.name) for w in existing])
            wait_deleted(cluster, removed, timeout=60.0)
            result.warnings.append(
                f"--overwrite: deleted the existing job {name} first (" + ", ".join(w.ref for w in removed) + ")"
            )
    if not dry_run:
        # Preflight: the server validates every object (schemas, admission) before anything is stored,
        # so a bad object costs no rollback.
        _submit(cluster, objects, target, dry_run=True, written=[])
    written: list[Written] = []
    try:
        _submit(cluster, objects, target, dry_run=dry_run, written=written)
    except BaseException as exc:  # Ctrl-C too: never leave a half-made job behind
        note = _roll_back(cluster, [w for w in written if w.created], dry_run, name=name, namespace=namespace)
        if isinstance(exc, KtrainError) and note:
            exc.hint = f"{exc.hint}; {note}" if exc.hint else note
        raise
    # JobSet last, as rendered, so output reads in the same order as `job render`.
    result.written = sorted(written, key=lambda w: w.resource is k.JOBSET)
    return result


def _submit(cluster: KubeCluster, objects: list[Obj], target: str, *, dry_run: bool, written: list[Written]) -> None:
    """Apply in order, appending to `written` as each object is stored (for the rollback)."""
    if target == TARGET_TRAINJOB:
        _apply_tracked(cluster, objects[0], dry_run, written)
        return
    jobset = next(o for o in objects if o["kind"] == c.JOBSET_KIND)
    stay_suspended = bool((jobset.get("spec") or {}).get("suspend"))
    first = copy.deepcopy(jobset)
    first["spec"]["suspend"] = True
    owner = _apply_tracked(cluster, first, dry_run, written)
    if not owner.obj.get("metadata", {}).get("uid"):
        # A server dry run normally returns a uid; if one does not, the dependents still need one.
        owner.obj.setdefault("metadata", {})["uid"] = "00000000-0000-0000-0000-000000000000"
    for obj in objects:
        if obj is not jobset:
            dependent = copy.deepcopy(obj)
            dependent["metadata"]["ownerReferences"] = [k.owner_reference(owner.obj)]
            _apply_tracked(cluster, dependent, dry_run, written)
    if stay_suspended:
        return
    if dry_run:
        owner.obj["spec"]["suspend"] = False  # what the resume would store
    else:
        # Re-apply the whole JobSet: with server-side apply, omitting a field we own would remove it.
        owner.obj = _apply(cluster, jobset, dry_run).obj


def _apply(cluster: KubeCluster, obj: Obj, dry_run: bool) -> Written:
    resource = k.resource_of(obj)
    stored, created = k.apply(cluster, obj, dry_run=dry_run)
    meta = obj["metadata"]
    return Written(resource, str(meta["name"]), meta.get("namespace"), stored, created or dry_run)


def possibly_applied(exc: BaseException) -> bool:
    """Whether a write that failed with `exc` may still have been stored: no answer came (the
    connection broke or timed out, Ctrl-C while it was in flight) or a 5xx, which a server may
    send after storing (504 says "may still be processing"). A 4xx is a refusal: nothing stored."""
    if isinstance(exc, ApiError):
        return exc.status == 0 or exc.status >= 500
    if isinstance(exc, NotSentError):  # no connection was made
        return False
    return isinstance(exc, (ClusterUnreachableError, KeyboardInterrupt))


def _apply_tracked(cluster: KubeCluster, obj: Obj, dry_run: bool, written: list[Written]) -> Written:
    """`_apply`, appending the object to `written` once stored, or as unconfirmed when the
    write may have been stored without its answer reaching us."""
    try:
        done = _apply(cluster, obj, dry_run)
    except BaseException as exc:
        if not dry_run and possibly_applied(exc):
            meta = obj["metadata"]
            written.append(
                Written(k.resource_of(obj), str(meta["name"]), meta.get("namespace"), obj, True, confirmed=False)
            )
        raise
    written.append(done)
    return done


def _roll_back(cluster: KubeCluster, created: list[Written], dry_run: bool, *, name: str, namespace: str) -> str:
    """Delete what was (or may have been) created, newest first, by name: a 404 means it was not
    stored. Returns a sentence for the error's hint; when the cluster stops answering, it names
    every object that may be left and the command that removes them."""
    if dry_run or not created:
        return ""
    pending = list(dict.fromkeys((w.resource, w.name, w.namespace) for w in reversed(created)))
    refs = {(w.resource, w.name, w.namespace): w.ref for w in created}
    removed, lost_but_stored = 0, []
    failed: list[str] = []
    left: list[str] = []
    for i, (resource, obj_name, obj_ns) in enumerate(pending):
        try:
            gone = k.delete(cluster, resource, obj_name, obj_ns, propagation="Background")
        except ClusterUnreachableError:
            left = [refs[key] for key in pending[i:]]  # no answer: stop asking, report the rest
            break
        except KtrainError as exc:
            failed.append(f"{refs[(resource, obj_name, obj_ns)]} ({exc.message})")
            continue
        if gone:
            removed += 1
            if not any(
                w.confirmed for w in created if (w.resource, w.name, w.namespace) == (resource, obj_name, obj_ns)
            ):
                lost_but_stored.append(refs[(resource, obj_name, obj_ns)])
    command = f"ktrain job delete {name} -n {namespace}"
    if left or failed:
        what = ", ".join(left + failed)
        why = "the cluster stopped answering" if left else "rolling back also failed"
        return (
            f"{why}: these objects may be left in namespace {namespace}: {what}; "
            f"remove them once the cluster answers with `{command}`"
        )
    if not removed:
        return "nothing was left on the cluster (the write had not been stored)"
    note = f"nothing was left on the cluster (rolled back {removed} created object(s))"
    if lost_but_stored:
        note += "; " + ", ".join(lost_but_stored) + " had been stored although the answer was lost"
    return note


# --- delete ------------------------------------------------------------------------------------


def _looks_like_trainer_jobset(obj: Obj) -> bool:
    for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if c.LABEL_ANCESTOR in labels:
            return True
    return False


def select_jobs(cluster: KubeCluster, namespace: str, label_selector: str | None) -> list[str]:
    """Names of the jobs (Trainer-shaped JobSets and TrainJobs) matching a selector (None: all)."""
    from ktrain.cluster.kube import ApiNotFoundError

    names: set[str] = set()
    for resource in (k.JOBSET, k.TRAINJOB):
        try:
            items = k.list_objects(cluster, resource, namespace, label_selector)
        except ApiNotFoundError:
            continue  # that CRD is not installed: no jobs of that kind
        names |= {str(o["metadata"]["name"]) for o in items if resource is k.TRAINJOB or _looks_like_trainer_jobset(o)}
    return sorted(names)


def delete_job(
    cluster: KubeCluster,
    name: str,
    namespace: str,
    *,
    propagation: str = "Background",
    dry_run: bool = False,
    extra: list[tuple[k.Resource, str]] | None = None,
) -> list[Written]:
    """Delete a job's TrainJob and/or JobSet and every companion object it owns, by known name.

    Companions are deleted explicitly as well as through garbage collection, so that nothing is
    left behind on clusters without a garbage collector (a bare API server) or when the owner is
    already gone. With propagation Orphan only the TrainJob / JobSet are deleted.
    """
    check_name(name, "job")
    deleted: list[Written] = []
    for resource in (k.TRAINJOB, k.JOBSET):
        obj = k.get(cluster, resource, name, namespace)
        if obj is not None and k.delete(cluster, resource, name, namespace, propagation=propagation, dry_run=dry_run):
            deleted.append(Written(resource, name, namespace, obj, created=False))
    if propagation == "Orphan":
        return deleted
    companions = [(resource, name + suffix) for resource, suffix in COMPANION_SUFFIXES]
    for resource, obj_name in dict.fromkeys(companions + list(extra or [])):
        if resource in (k.TRAINJOB, k.JOBSET) and obj_name == name:
            continue
        obj = k.get(cluster, resource, obj_name, namespace)
        if obj is None:
            continue
        explicitly_named = (resource, obj_name) in (extra or [])
        if not (explicitly_named or owned_by_job(obj, name)):
            continue  # same name, but someone else's object
        if k.delete(cluster, resource, obj_name, namespace, propagation=propagation, dry_run=dry_run):
            deleted.append(Written(resource, obj_name, namespace, obj, created=False))
    return deleted


def wait_deleted(
    cluster: KubeCluster,
    gone: list[Written],
    *,
    timeout: float | None,
    interval: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    pending = list(gone)
    while pending:
        pending = [w for w in pending if k.get(cluster, w.resource, w.name, w.namespace) is not None]
        if not pending:
            return
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeoutError(
                "timed out waiting for the deletion of " + ", ".join(w.ref for w in pending),
                hint="a finalizer may hold them (foreground deletion needs the garbage collector)",
            )
        sleep(interval)
