"""`job create` (and `ktrain.Client().create`, `TrainerClient.train`): submit a rendered job, or its
TrainJob, with a server dry run first and a rollback of what was created on any failure, Ctrl-C
included: nothing is left half-made. Never prints (callers get values and warnings back)."""

from __future__ import annotations

import copy

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster, NotSentError, server_shaped
from ktrain.errors import ApiError, ClusterError, ClusterUnreachableError, ConflictError, KtrainError
from ktrain.jobs.plan import INSTALL_HINTS, TARGET_TRAINJOB, owner_reference
from ktrain.service.job_delete import Written, delete_job, wait_deleted
from ktrain.service.job_suspend import resume
from ktrain.util.jsondata import Obj
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


class MissingApiError(ClusterError):
    """A CRD the job needs is not served by the cluster."""


@struct
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


@server_shaped
def existing_objects(cluster: KubeCluster, name: str, namespace: str, objects: list[Obj]) -> list[Written]:
    """What already exists of a job: its JobSet and TrainJob, and any object we are about to write."""
    seen: list[Written] = []
    written = [(k.resource_of(o), str(o["metadata"]["name"])) for o in objects]
    candidates = [(k.TRAINJOB, name), (k.JOBSET, name), *written]
    for resource, obj_name in dict.fromkeys(candidates):
        try:
            found = k.get(cluster, resource, obj_name, namespace)
        except ApiError as exc:
            # The other kind of the job (a TrainJob when submitting a JobSet) is looked at only to
            # refuse a clash; one we may not read is not the command's failure (issue #19).
            if exc.status != 403 or (resource, obj_name) in written:
                raise
            continue
        if found is not None:
            seen.append(Written(resource, obj_name, namespace, found, created=False))
    return seen


def check_names(objects: list[Obj], namespace: str) -> None:
    """Every name and namespace checked before the first request (InvalidNameError); asks nothing
    of the cluster, so `job create --dry-run=client` runs it too."""
    for obj in objects:
        meta = obj.get("metadata") or {}
        k.resource_of(obj).path(meta.get("namespace") or namespace, str(meta.get("name")))


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
    check_names(objects, namespace)
    check_apis(cluster, objects)
    from ktrain.service.claims import check_claims

    check_claims(cluster, objects, namespace)  # claims the pods mount (--checkpoint): before any write
    result = CreateResult()
    existing = existing_objects(cluster, name, namespace, objects)
    replaced: set[tuple[k.Resource, str]] = set()
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
        removed = delete_job(cluster, name, namespace, extra=[(w.resource, w.name) for w in existing], dry_run=dry_run)
        if dry_run:
            # The real --overwrite deletes first, then creates: validate every object as a create
            # (a dry-run POST; see _apply), not as an update of what exists, which would trip
            # immutable fields the create never meets (issue #19).
            replaced = {(w.resource, w.name) for w in existing}
            result.warnings.append(
                f"--overwrite: would delete the existing job {name} first (" + ", ".join(w.ref for w in removed) + ")"
            )
        else:
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
        _submit(cluster, objects, target, dry_run=dry_run, written=written, replaced=replaced)
    except BaseException as exc:  # Ctrl-C too: never leave a half-made job behind
        note = _roll_back(cluster, [w for w in written if w.created], dry_run, name=name, namespace=namespace)
        if isinstance(exc, KtrainError) and note:
            exc.hint = f"{exc.hint}; {note}" if exc.hint else note
        raise
    # JobSet last, as rendered, so output reads in the same order as `job render`.
    result.written = sorted(written, key=lambda w: w.resource is k.JOBSET)
    return result


def _submit(
    cluster: KubeCluster,
    objects: list[Obj],
    target: str,
    *,
    dry_run: bool,
    written: list[Written],
    replaced: set[tuple[k.Resource, str]] | None = None,
) -> None:
    """Apply in order, appending to `written` as each object is stored (for the rollback).
    `replaced`: objects an --overwrite dry run would have deleted first (validated as creates)."""
    replaced = replaced or set()

    def write(obj: Obj) -> Written:
        as_create = (k.resource_of(obj), str(obj["metadata"]["name"])) in replaced
        return _apply_tracked(cluster, obj, dry_run, written, as_create=as_create)

    if target == TARGET_TRAINJOB:
        trainjob = write(objects[0])
        for obj in objects[1:]:  # --code's ConfigMaps: collected with the TrainJob
            dependent = copy.deepcopy(obj)
            dependent["metadata"]["ownerReferences"] = [owner_reference(_with_uid(trainjob))]
            write(dependent)
        return
    jobset = next(o for o in objects if o["kind"] == c.JOBSET_KIND)
    # A job queued in Kueue stays suspended: Kueue resumes it once admitted (its JobSet integration).
    queued = c.KUEUE_QUEUE_LABEL in ((jobset.get("metadata") or {}).get("labels") or {})
    stay_suspended = bool((jobset.get("spec") or {}).get("suspend")) or queued
    first = copy.deepcopy(jobset)
    first["spec"]["suspend"] = True
    owner = write(first)
    _with_uid(owner)
    for obj in objects:
        if obj is not jobset:
            dependent = copy.deepcopy(obj)
            dependent["metadata"]["ownerReferences"] = [owner_reference(owner.obj)]
            write(dependent)
    if stay_suspended:
        return
    if dry_run:
        owner.obj["spec"]["suspend"] = False  # what the resume would store
    else:
        owner.obj = resume(cluster, k.JOBSET, owner.name, owner.namespace)


def _with_uid(owner: Written) -> Obj:
    """The stored owner; a server dry run normally returns a uid, and if one does not, the
    dependents still need one for their ownerReference."""
    if not owner.obj.get("metadata", {}).get("uid"):
        owner.obj.setdefault("metadata", {})["uid"] = "00000000-0000-0000-0000-000000000000"
    return owner.obj


def _apply(cluster: KubeCluster, obj: Obj, dry_run: bool, *, as_create: bool = False) -> Written:
    """Server-side apply `obj`; with `as_create` (a dry run only), validate it as a create instead.

    A dry-run POST of an object that exists runs every validation and admission step of a create
    before the storage answers 409 AlreadyExists: that answer means the create would pass."""
    resource = k.resource_of(obj)
    meta = obj["metadata"]
    if as_create and dry_run:
        try:
            stored = k.create(cluster, obj, dry_run=True)
        except ConflictError as exc:
            if exc.reason != "AlreadyExists":
                raise
            stored = copy.deepcopy(obj)
        return Written(resource, str(meta["name"]), meta.get("namespace"), stored, True)
    stored, created = k.apply(cluster, obj, dry_run=dry_run)
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


def _apply_tracked(
    cluster: KubeCluster, obj: Obj, dry_run: bool, written: list[Written], *, as_create: bool = False
) -> Written:
    """`_apply`, appending the object to `written` once stored, or as unconfirmed when the
    write may have been stored without its answer reaching us."""
    try:
        done = _apply(cluster, obj, dry_run, as_create=as_create)
    except BaseException as exc:
        if not dry_run and possibly_applied(exc):
            meta = obj["metadata"]
            unanswered = not isinstance(exc, ApiError) or exc.status in (0, 504)
            written.append(
                Written(
                    k.resource_of(obj),
                    str(meta["name"]),
                    meta.get("namespace"),
                    obj,
                    True,
                    confirmed=False,
                    unanswered=unanswered,
                )
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
    in_flight: list[str] = []  # unanswered writes the DELETE did not find: maybe still being stored
    for i, (resource, obj_name, obj_ns) in enumerate(pending):
        key = (resource, obj_name, obj_ns)
        writes = [w for w in created if (w.resource, w.name, w.namespace) == key]
        try:
            gone = k.delete(cluster, resource, obj_name, obj_ns, propagation="Background")
        except ClusterUnreachableError:
            left = [refs[key] for key in pending[i:]]  # no answer: stop asking, report the rest
            break
        except KtrainError as exc:
            failed.append(f"{refs[key]} ({exc.message})")
            continue
        if gone:
            removed += 1
            if not any(w.confirmed for w in writes):
                lost_but_stored.append(refs[key])
        elif not any(w.confirmed for w in writes) and any(w.unanswered for w in writes):
            in_flight.append(refs[key])
    command = f"ktrain job delete {name} -n {namespace}"
    if left or failed:
        what = ", ".join(left + failed + in_flight)
        why = "the cluster stopped answering" if left else "rolling back also failed"
        return (
            f"{why}: these objects may be left in namespace {namespace}: {what}; "
            f"remove them once the cluster answers with `{command}`"
        )
    if in_flight:
        note = (
            f"{', '.join(in_flight)} got no answer and may still be stored in namespace {namespace} "
            "(the server may store it after the rollback looked)"
        )
        if removed:
            note += f"; rolled back {removed} created object(s)"
        return f"{note}; check with `ktrain job get {name} -n {namespace}` and remove it with `{command}`"
    if not removed:
        return "nothing was left on the cluster (the write had not been stored)"
    note = f"nothing was left on the cluster (rolled back {removed} created object(s))"
    if lost_but_stored:
        note += "; " + ", ".join(lost_but_stored) + " had been stored although the answer was lost"
    return note
