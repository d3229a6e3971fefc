"""`job diff`: a job's live objects paired with the rendered ones, normalised by a server dry run
(`kubectl diff`'s way: defaulted fields, issue #19); a create with `generateName` (the object's own
name exists) runs every admission step and stores nothing."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster
from ktrain.errors import KtrainError
from ktrain.jobs.diff import GENERATE_NAME, mask_secrets, stripped, with_owner
from ktrain.jobs.plan import owned_by_job
from ktrain.service.job_delete import COMPANION_SUFFIXES, used_companions
from ktrain.util.jsondata import Obj, deep_copy
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


@struct
class Pair:
    """One object: as it is on the cluster (None: not there) and as the render would store it
    (None: the render has no such object)."""

    resource: k.Resource
    name: str
    namespace: str
    live: Obj | None
    merged: Obj | None

    @property
    def file_name(self) -> str:
        """kubectl diff's file name for it: `<group>.<version>.<Kind>.<namespace>.<name>`."""
        group = f"{self.resource.group}." if self.resource.group else ""
        return f"{group}{self.resource.version}.{self.resource.kind}.{self.namespace}.{self.name}"


@struct
class Comparison:
    pairs: list[Pair] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[Pair]:
        return [p for p in self.pairs if p.live != p.merged]


def normalised(cluster: KubeCluster, obj: Obj, namespace: str) -> tuple[Obj, str | None]:
    """What the server would store for `obj` if it were created now (a dry run), under its own
    name; and a warning when the cluster does not serve its kind (then `obj` as rendered)."""
    resource = k.resource_of(obj)
    meta = obj.get("metadata") or {}
    name = str(meta.get("name"))
    body = deep_copy(obj)
    body["metadata"] = {k_: v for k_, v in meta.items() if k_ != "name"}
    body["metadata"]["generateName"] = GENERATE_NAME
    body["metadata"].setdefault("namespace", namespace)
    try:
        stored = k.create(cluster, body, dry_run=True)
    except ApiNotFoundError:
        return obj, f"the cluster does not serve {resource.kind} ({resource.api_version}): {name} is shown as rendered"
    except KtrainError as exc:
        exc.message = f"the server refuses the rendered {k.describe(resource, name, namespace)}: {exc.message}"
        exc.args = (exc.message,)
        raise
    stored.setdefault("metadata", {})["name"] = name
    return stored, None


def _live(cluster: KubeCluster, resource: k.Resource, name: str, namespace: str) -> Obj | None:
    try:
        return k.get(cluster, resource, name, namespace)
    except ApiNotFoundError:  # (get answers None for a 404; a kind not served lands here too)
        return None


def compare(
    cluster: KubeCluster,
    name: str,
    namespace: str,
    desired: list[Obj],
    *,
    trainjob: Obj | None,
    jobset: Obj | None,
) -> Comparison:
    """The job's live objects paired with the rendered ones (`desired`: what `job create` submits,
    JobSet or TrainJob first). Live objects of the job that the render does not make are paired
    with None, except those the render still refers to (`--code` ConfigMaps when the code is not
    given): what the render cannot reproduce is not a removal."""
    out = Comparison()
    # what `job create` makes the owner of the others: the TrainJob when there is one
    owner = trainjob if trainjob is not None else jobset
    seen: set[tuple[k.Resource, str]] = set()
    rendered_jobset = next((o for o in desired if o.get("kind") == c.JOBSET_KIND), None)
    referenced = set(used_companions(rendered_jobset, name)) if rendered_jobset is not None else set()
    for obj in desired:
        resource = k.resource_of(obj)
        obj_name = str((obj.get("metadata") or {}).get("name"))
        seen.add((resource, obj_name))
        live = trainjob if resource is k.TRAINJOB and obj_name == name else None
        if live is None:
            live = jobset if resource is k.JOBSET and obj_name == name else None
        if live is None:
            live = _live(cluster, resource, obj_name, namespace)
        is_owner = resource in (k.TRAINJOB, k.JOBSET) and obj_name == name
        if is_owner and resource is k.JOBSET and trainjob is not None:
            obj = with_owner(obj, trainjob)  # the Trainer controller's JobSet is the TrainJob's
        elif not is_owner:
            obj = with_owner(obj, owner)
        merged, warning = normalised(cluster, obj, namespace)
        if warning:
            out.warnings.append(warning)
        before = stripped(live) if live is not None else None
        after: Obj | None = stripped(merged)
        if resource is k.SECRET:
            before, after = mask_secrets(before, after)
        out.pairs.append(Pair(resource, obj_name, namespace, before, after))
    # the job's own objects on the cluster that the render no longer makes
    candidates: list[tuple[k.Resource, str]] = [(k.JOBSET, name), (k.TRAINJOB, name)]
    if jobset is not None:
        candidates += used_companions(jobset, name)
    candidates += [(resource, name + suffix) for resource, suffix in COMPANION_SUFFIXES]
    for resource, obj_name in dict.fromkeys(candidates):
        if (resource, obj_name) in seen or (resource, obj_name) in referenced:
            continue
        if resource is k.TRAINJOB and obj_name == name:
            live = trainjob
        elif resource is k.JOBSET and obj_name == name:
            live = jobset
        else:
            live = _live(cluster, resource, obj_name, namespace)
            if live is None or not owned_by_job(live, name):
                continue  # not there, or someone else's object of that name
        if live is None:
            continue
        before = stripped(live)
        if resource is k.SECRET:
            before, _ = mask_secrets(before, None)
        out.pairs.append(Pair(resource, obj_name, namespace, before, None))
    return out


def keep_live_ssh_keys(cluster: KubeCluster, desired: list[Obj], namespace: str) -> None:
    """An MPI key pair is made anew by every render: compare the rest of the Secret, not the keys
    (the rendered Secret takes the live one's data)."""
    for obj in desired:
        if obj.get("kind") == "Secret" and obj.get("type") == "kubernetes.io/ssh-auth":
            live = k.get(cluster, k.SECRET, str(obj["metadata"]["name"]), namespace)
            if live is not None and live.get("type") == obj["type"]:
                obj["data"] = live.get("data") or {}
