"""Use cases that change a cluster: create a rendered job, delete a job, wait for its end.

Composes the cluster client with the render outcome; never prints (callers get values and
warnings back). Every step that writes is undone on failure: nothing is left half-made.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster, NotSentError, server_shaped
from ktrain.cluster.names import check_name
from ktrain.engine.plugins.flux import CURVE_SUFFIX, ENTRYPOINT_SUFFIX
from ktrain.engine.plugins.mpi import HOSTFILE_SUFFIX, SSH_AUTH_SECRET_SUFFIX
from ktrain.errors import ApiError, ClusterError, ClusterUnreachableError, ConflictError, KtrainError, WaitTimeoutError
from ktrain.util.structs import field, struct

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


@struct
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
    # For an unconfirmed write: no answer came at all (a timeout, a lost connection, Ctrl-C, a
    # 504). The server may still be storing it, after the rollback's DELETE found nothing (a 404
    # there proves nothing), so it counts as possibly stored until shown otherwise (issue #25).
    unanswered: bool = False

    @property
    def ref(self) -> str:
        return f"{self.resource.type_name}/{self.name}"


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


def owned_by_job(obj: Obj, job_name: str) -> bool:
    """Whether an object belongs to job `job_name` (its JobSet or its TrainJob owns it)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") in (c.JOBSET_KIND, c.TRAINJOB_KIND) and ref.get("name") == job_name:
            return True
    return False


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


def trainjob_to_submit(trainjob: Obj, rendered: list[Obj], labels: dict[str, str], annotations: dict[str, str]) -> Obj:
    """The TrainJob for `--target trainjob`: with the --label / --annotation flags on its own
    metadata too (they reach the JobSet through a runtime patch; `job list -l` and
    `job delete -l` select the TrainJob), and the node count the render gave it."""
    from ktrain.cluster.job_state import jobset_nodes

    out = copy.deepcopy(trainjob)
    meta = out.setdefault("metadata", {})
    if labels:
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    extra = dict(annotations)
    jobset = next((o for o in rendered if o.get("kind") == c.JOBSET_KIND), None)
    nodes = jobset_nodes(jobset) if jobset else None
    if nodes is not None and not ((out.get("spec") or {}).get("trainer") or {}).get("numNodes"):
        extra[c.NODES_ANNOTATION] = str(nodes)
    if extra:
        meta["annotations"] = {**(meta.get("annotations") or {}), **extra}
    return out


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
    from ktrain.cluster.claims import check_claims

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
            dependent["metadata"]["ownerReferences"] = [k.owner_reference(_with_uid(trainjob))]
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
            dependent["metadata"]["ownerReferences"] = [k.owner_reference(owner.obj)]
            write(dependent)
    if stay_suspended:
        return
    if dry_run:
        owner.obj["spec"]["suspend"] = False  # what the resume would store
    else:
        owner.obj = resume(cluster, k.JOBSET, owner.name, owner.namespace)


@server_shaped
def set_suspended(cluster: KubeCluster, name: str, namespace: str, suspend: bool) -> tuple[Written, bool]:
    """`job suspend` / `job resume`: set spec.suspend of the job's TrainJob (its controller passes
    it on to the JobSet), else of its JobSet. Returns (what was patched, whether it changed)."""
    from ktrain.cluster.job_state import TERMINAL_STATES, summarize
    from ktrain.cluster.observe import find_job

    trainjob, jobset = find_job(cluster, name, namespace)
    state = summarize(trainjob, jobset, []).state
    if state in TERMINAL_STATES:
        verb = "suspend" if suspend else "resume"
        raise ConflictError(f"job {name} is {state}: there is nothing to {verb}", status=409, reason="Conflict")
    resource, obj = (k.TRAINJOB, trainjob) if trainjob is not None else (k.JOBSET, jobset)
    assert obj is not None
    if bool((obj.get("spec") or {}).get("suspend")) == suspend:
        return Written(resource, name, namespace, obj, created=False), False
    stored = resume(cluster, resource, name, namespace, suspend=suspend)
    return Written(resource, name, namespace, stored, created=False), True


def resume(
    cluster: KubeCluster, resource: k.Resource, name: str, namespace: str | None, *, suspend: bool = False
) -> Obj:
    """Set only `spec.suspend` (a merge patch). Re-applying the whole object would re-send fields
    the server defaulted or owns (JobSet's webhook defaults volumeClaimPolicies' retentionPolicy on
    create, and a CEL rule then refuses any other value: issue #19)."""
    return k.merge_patch(cluster, resource, name, namespace, {"spec": {"suspend": suspend}})


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


# --- delete ------------------------------------------------------------------------------------


def _looks_like_trainer_jobset(obj: Obj) -> bool:
    for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if c.LABEL_ANCESTOR in labels:
            return True
    return False


# Objects already read, by (resource, name); None: read, and not there.
Seen = dict[tuple[k.Resource, str], Obj | None]


@server_shaped
def plain_jobsets(cluster: KubeCluster, names: list[str], namespace: str, seen: Seen | None = None) -> list[str]:
    """Which of `names` are JobSets that `job list` does not show (no TrainJob, no Trainer
    runtime shape, not made by ktrain): someone else's JobSets. What it read goes into `seen`
    (for `delete_job`, which then need not read it again)."""
    plain = []
    seen = {} if seen is None else seen
    for name in names:
        check_name(name, "job")  # before any request, with the same words as the other commands
        seen[(k.TRAINJOB, name)] = k.get(cluster, k.TRAINJOB, name, namespace)
        if seen[(k.TRAINJOB, name)] is not None:
            continue
        jobset = seen[(k.JOBSET, name)] = k.get(cluster, k.JOBSET, name, namespace)
        annotations = ((jobset or {}).get("metadata") or {}).get("annotations") or {}
        if jobset is not None and not _looks_like_trainer_jobset(jobset) and c.RUNTIME_ANNOTATION not in annotations:
            plain.append(name)
    return plain


@server_shaped
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


@server_shaped
def delete_job(
    cluster: KubeCluster,
    name: str,
    namespace: str,
    *,
    propagation: str = "Background",
    dry_run: bool = False,
    extra: list[tuple[k.Resource, str]] | None = None,
    seen: Seen | None = None,
) -> list[Written]:
    """Delete a job's TrainJob and/or JobSet and every companion object it owns, by known name.

    Companions are deleted explicitly as well as through garbage collection, so that nothing is
    left behind on clusters without a garbage collector (a bare API server) or when the owner is
    already gone. When the JobSet is there, its companions are the objects its pods use (volumes,
    pod group) plus the runtime snapshot: a torch job then costs no look-up for MPI, Flux or
    gang-scheduling objects it never had. Without a JobSet every companion name is tried. With
    propagation Orphan only the TrainJob / JobSet are deleted. `seen`: objects already read
    (`plain_jobsets`), by (resource, name); a missing key is read here.
    """
    check_name(name, "job")
    deleted: list[Written] = []
    found: dict[k.Resource, Obj | None] = {}
    for resource in (k.TRAINJOB, k.JOBSET):
        if seen is not None and (resource, name) in seen:
            obj = seen[(resource, name)]
        else:
            obj = k.get(cluster, resource, name, namespace)
        found[resource] = obj
        if obj is not None and k.delete(cluster, resource, name, namespace, propagation=propagation, dry_run=dry_run):
            deleted.append(Written(resource, name, namespace, obj, created=False))
    if propagation == "Orphan":
        return deleted
    jobset = found[k.JOBSET]
    companions = [(resource, name + suffix) for resource, suffix in COMPANION_SUFFIXES]
    if jobset is not None:  # in the usual order, then the `--code` maps
        used = used_companions(jobset, name)
        companions = [x for x in companions if x in used] + [x for x in used if x not in companions]
    else:
        companions += [(k.CONFIGMAP, code_map) for code_map in _code_config_maps(cluster, name, namespace)]
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


def used_companions(jobset: Obj, name: str) -> list[tuple[k.Resource, str]]:
    """The companion objects a job's JobSet uses: the ConfigMaps and Secrets its pods mount (MPI
    hostfile and SSH keys, Flux, `--code`), its PodGroup (coscheduling label, Volcano annotation),
    and the runtime snapshot, which no pod mounts. Only names of this job's own objects
    (`<name>` or `<name>-...`): a shared ConfigMap a pod mounts is not a companion."""
    out: list[tuple[k.Resource, str]] = [(k.CONFIGMAP, name + c.RUNTIME_SNAPSHOT_SUFFIX)]
    for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template")) or {}
        meta = pod.get("metadata") or {}
        if (meta.get("labels") or {}).get(c.COSCHEDULING_POD_GROUP_LABEL):
            out.append((k.COSCHEDULING_PODGROUP, str(meta["labels"][c.COSCHEDULING_POD_GROUP_LABEL])))
        if (meta.get("annotations") or {}).get(c.VOLCANO_GROUP_NAME_ANNOTATION):
            out.append((k.VOLCANO_PODGROUP, str(meta["annotations"][c.VOLCANO_GROUP_NAME_ANNOTATION])))
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
            for source in sources:
                if (source.get("secret") or {}).get("secretName"):
                    out.append((k.SECRET, str(source["secret"]["secretName"])))
                if (source.get("secret") or {}).get("name"):  # a projected source names it `name`
                    out.append((k.SECRET, str(source["secret"]["name"])))
                if (source.get("configMap") or {}).get("name"):
                    out.append((k.CONFIGMAP, str(source["configMap"]["name"])))
    own = [(resource, n) for resource, n in out if n == name or n.startswith(f"{name}-")]
    return list(dict.fromkeys(own))


def _code_config_maps(cluster: KubeCluster, name: str, namespace: str) -> list[str]:
    """The `--code` ConfigMaps of a job: their names are content-addressed, so they are found by
    their label (and, below, kept only when the job owns them)."""
    try:
        maps = k.list_objects(cluster, k.CONFIGMAP, namespace, label_selector=c.CODE_DIGEST_KEY)
    except ApiError:  # may not list ConfigMaps: the garbage collector still removes them
        return []
    return [str(m["metadata"]["name"]) for m in maps if str(m["metadata"].get("name", "")).startswith(f"{name}-code-")]


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
