"""What `job create` submits and what it owns, pure: the targets, the runtime recorded on the JobSet,
the TrainJob of `--target trainjob`, owner references, which objects belong to a job, how to
install a missing API."""

from __future__ import annotations

import copy

from ktrain import constants as c
from ktrain.util.jsondata import Obj

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


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


# The names of a job's companion objects, `<job><suffix>`, as the engine's plugins make them
# (ktrain.engine.plugins.mpi, .flux; tests/unit/jobs/test_plan.py holds them equal): spelled here
# so that `job delete` and `job diff` do not import the engine to know them.
SSH_AUTH_SECRET_SUFFIX = "-mpi-ssh-auth"
HOSTFILE_SUFFIX = "-mpi-hostfile"
FLUX_ENTRYPOINT_SUFFIX = "-flux-entrypoint"
FLUX_CURVE_SUFFIX = "-flux-curve"


def owned_by_job(obj: Obj, job_name: str) -> bool:
    """Whether an object belongs to job `job_name` (its JobSet or its TrainJob owns it)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") in (c.JOBSET_KIND, c.TRAINJOB_KIND) and ref.get("name") == job_name:
            return True
    return False


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


def trainjob_to_submit(
    trainjob: Obj,
    rendered: list[Obj],
    labels: dict[str, str],
    annotations: dict[str, str],
    *,
    note_nodes: bool = True,
) -> Obj:
    """The TrainJob for `--target trainjob`: with the --label / --annotation flags on its own
    metadata too (they reach the JobSet through a runtime patch; `job list -l` and
    `job delete -l` select the TrainJob), and (`note_nodes`) the node count the render gave it."""
    from ktrain.jobs.state import jobset_nodes

    out = copy.deepcopy(trainjob)
    meta = out.setdefault("metadata", {})
    if labels:
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    extra = dict(annotations)
    jobset = next((o for o in rendered if o.get("kind") == c.JOBSET_KIND), None)
    nodes = jobset_nodes(jobset) if jobset else None
    if note_nodes and nodes is not None and not ((out.get("spec") or {}).get("trainer") or {}).get("numNodes"):
        extra[c.NODES_ANNOTATION] = str(nodes)
    if extra:
        meta["annotations"] = {**(meta.get("annotations") or {}), **extra}
    return out


# --- delete ------------------------------------------------------------------------------------


def looks_like_trainer_jobset(obj: Obj) -> bool:
    for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if c.LABEL_ANCESTOR in labels:
            return True
    return False


def owner_reference(owner: Obj) -> Obj:
    """An ownerReference to a stored object: its deletion garbage-collects the dependent, and
    `blockOwnerDeletion` makes a foreground deletion of the owner wait for it."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def strip_server_fields(obj: Obj) -> Obj:
    """What `kubectl get -o yaml` shows by default: no managedFields."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta.pop("managedFields", None)
    out["metadata"] = meta
    return out
