"""`job list` (and `ktrain.Client().list`, `TrainerClient.list_jobs`): every training job of a
namespace or of all, each with its summary and its pods, from one list of each kind (JobSets,
TrainJobs, pods: three requests, however many jobs)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster, server_shaped
from ktrain.cluster.reads import JOBSET, TRAINJOB, list_custom, list_pods
from ktrain.errors import ApiError, ClusterError
from ktrain.jobs import state as status
from ktrain.util.jsondata import Obj
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


@struct(frozen=True)
class ListedJob:
    """One row of `job list`: the derived view, the object that stands for the job (its TrainJob,
    else its JobSet) and the job's pods (as listed: any order)."""

    summary: status.JobSummary
    obj: Obj
    pods: list[Obj]


@server_shaped
def list_jobs(
    cluster: KubeCluster,
    *,
    all_namespaces: bool = False,
    selector: str | None = None,
    warnings: list[str] | None = None,
) -> list[ListedJob]:
    """Every training job of the namespace (or of all), in `status.pair_jobs`' order.

    TrainJobs we may not list (403) leave the JobSets to show, with a note in `warnings`."""
    namespace = None if all_namespaces else cluster.namespace
    try:
        jobsets = list_custom(cluster, JOBSET, namespace, selector)
    except ApiNotFoundError:
        raise ClusterError(
            "the cluster does not serve JobSets (jobsets.jobset.x-k8s.io)",
            hint="install JobSet: https://jobset.sigs.k8s.io/docs/installation/",
        ) from None
    try:
        trainjobs = list_custom(cluster, TRAINJOB, namespace, selector)
    except ApiNotFoundError:  # no Trainer CRDs: ktrain-made JobSets only
        trainjobs = []
    except ApiError as exc:
        if exc.status != 403:
            raise
        trainjobs = []
        if warnings is not None:
            warnings.append(f"{exc.message}; showing JobSets only")
    pairs = status.pair_jobs(trainjobs, jobsets)
    if not pairs:
        return []
    by_job: dict[tuple[str, str], list[Obj]] = {}
    for pod in list_pods(cluster, namespace, c.JOBSET_NAME_LABEL):
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str((meta.get("labels") or {}).get(c.JOBSET_NAME_LABEL)))
        by_job.setdefault(key, []).append(pod)
    out = []
    for trainjob, jobset in pairs:
        main = trainjob or jobset or {}
        meta = main.get("metadata") or {}
        pods = by_job.get((str(meta.get("namespace") or ""), str(meta.get("name") or "")), [])
        out.append(ListedJob(status.summarize(trainjob, jobset, pods), main, pods))
    return out
