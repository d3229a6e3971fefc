"""`job delete` (and `job create --overwrite`, `ktrain.Client().delete`, `TrainerClient.delete_job`):
a job's TrainJob and/or JobSet and every companion object it owns, by known name."""

from __future__ import annotations

import time

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster, server_shaped
from ktrain.cluster.names import check_name
from ktrain.errors import ApiError, ClusterUnreachableError, WaitTimeoutError
from ktrain.jobs.plan import (
    FLUX_CURVE_SUFFIX,
    FLUX_ENTRYPOINT_SUFFIX,
    HOSTFILE_SUFFIX,
    SSH_AUTH_SECRET_SUFFIX,
    looks_like_trainer_jobset,
    owned_by_job,
)
from ktrain.util.jsondata import Obj
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable


# Objects a job may have besides its JobSet / TrainJob, by name (ENGINE.md §1).
COMPANION_SUFFIXES: tuple[tuple[k.Resource, str], ...] = (
    (k.SECRET, SSH_AUTH_SECRET_SUFFIX),
    (k.CONFIGMAP, HOSTFILE_SUFFIX),
    (k.CONFIGMAP, c.RUNTIME_SNAPSHOT_SUFFIX),
    (k.CONFIGMAP, FLUX_ENTRYPOINT_SUFFIX),
    (k.SECRET, FLUX_CURVE_SUFFIX),
    (k.COSCHEDULING_PODGROUP, ""),
    (k.VOLCANO_PODGROUP, ""),
)


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
        if jobset is not None and not looks_like_trainer_jobset(jobset) and c.RUNTIME_ANNOTATION not in annotations:
            plain.append(name)
    return plain


@server_shaped
def select_jobs(cluster: KubeCluster, namespace: str, label_selector: str | None) -> list[str]:
    """Names of the jobs (Trainer-shaped JobSets and TrainJobs) matching a selector (None: all)."""

    names: set[str] = set()
    for resource in (k.JOBSET, k.TRAINJOB):
        try:
            items = k.list_objects(cluster, resource, namespace, label_selector)
        except ApiNotFoundError:
            continue  # that CRD is not installed: no jobs of that kind
        names |= {str(o["metadata"]["name"]) for o in items if resource is k.TRAINJOB or looks_like_trainer_jobset(o)}
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
    """Until every object of `gone` is gone; WaitTimeoutError after `timeout` seconds (each
    request ends by then too, `ktrain.cluster.deadline`)."""
    from ktrain.cluster.deadline import bounded

    deadline = None if timeout is None else time.monotonic() + timeout
    cluster = bounded(cluster, timeout)
    pending = list(gone)
    while pending:
        try:
            pending = [w for w in pending if k.get(cluster, w.resource, w.name, w.namespace) is not None]
        except ClusterUnreachableError:
            if deadline is None or time.monotonic() < deadline:
                raise
        if not pending:
            return
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeoutError(
                "timed out waiting for the deletion of " + ", ".join(w.ref for w in pending),
                hint="a finalizer may hold them (foreground deletion needs the garbage collector)",
            )
        sleep(interval)
