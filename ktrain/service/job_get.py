"""`job get` (and `ktrain.Client().get`, `TrainerClient.get_job`, `get_job_events`): one job, its
pods and last warnings, and `job why`'s verdict when the command shows it."""

from __future__ import annotations

from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.cluster.reads import find_job as find_job
from ktrain.cluster.reads import job_pods, list_events, list_warning_events
from ktrain.jobs import state as status
from ktrain.jobs.restarts import last_failure
from ktrain.jobs.views import JobDetails

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

Obj = dict[str, "Any"]


@server_shaped
def get_job(
    cluster: KubeCluster,
    name: str,
    namespace: str | None = None,
    *,
    events: bool = True,
    explain: bool = False,
    logs: bool = True,
) -> JobDetails:
    """The job, its pods and last warnings; with `explain`, the verdict of `job why` too, for a
    job that is not running or complete (a running one's reads would cost `job get` a log read
    and the diagnosis' import for "Running": `job why` says whether it is stuck at the rendezvous).
    Its progress is the TrainJob's trainerStatus, else (with `logs`, for a job that has run) the
    tail of its rank-0 log (ktrain.cluster.progress_read: one more read)."""
    ns = namespace or cluster.namespace
    trainjob, jobset = find_job(cluster, name, ns)
    pods = job_pods(cluster, name, ns)
    all_warnings = list_warning_events(cluster, ns) if events else None
    warnings = status.related_warnings(all_warnings, name) if all_warnings is not None else []
    summary = status.summarize(trainjob, jobset, pods)
    verdict = None
    if explain and summary.state not in (status.RUNNING, status.COMPLETE):
        from ktrain.service.job_why import diagnose_job, job_facts

        verdict = diagnose_job(
            cluster, job_facts(cluster, name, ns, known=(trainjob, jobset, pods), events=all_warnings)
        )
    from ktrain.cluster.progress_read import job_progress

    ran = logs and summary.state in (status.RUNNING, status.COMPLETE)
    failure = last_failure(jobset, pods, all_warnings)  # from what was read: no request of its own
    progress = job_progress(cluster, trainjob, summary, logs=ran)
    return JobDetails(summary, trainjob, jobset, warnings, verdict, pods, progress, failure=failure)


@server_shaped
def job_events(cluster: KubeCluster, name: str) -> tuple[Obj | None, list[Obj], list[Obj]]:
    """(its JobSet, its pods, every event of the namespace): what `TrainerClient.get_job_events`
    picks the job's events from, as the SDK reads them (one list of the namespace's events)."""
    _trainjob, jobset = find_job(cluster, name)
    return jobset, job_pods(cluster, name), list_events(cluster, cluster.namespace)
