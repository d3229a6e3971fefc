"""`--priority-class` and `--scheduler kai`: settings a TrainJob cannot carry.

Upstream's runtimePatches allow only some pod-spec fields (affinity, containers, imagePullSecrets,
initContainers, nodeSelector, schedulingGates, securityContext, serviceAccountName,
terminationGracePeriodSeconds, tolerations, volumes: the TrainJob CRD), so neither a pod's
`priorityClassName` nor its `schedulerName` can travel in a TrainJob. ktrain sets them on the
objects it renders itself (`job render`, `job create --target jobset`), after the engine, where
upstream's own rules would have put them had the runtime set them: every replicated job's pod
template, and the Volcano PodGroup's `priorityClassName` (ENGINE.md §7.2: the last replicated
job's). With `--target trainjob` they are refused with this reason.

KAI Scheduler (NVIDIA) is a ktrain extension (upstream Trainer has only open proposals, kubeflow/
trainer#2628): pods name `schedulerName: kai-scheduler` and the top owner (the JobSet) carries the
queue label `kai.scheduler/queue`, which KAI's pod-grouper reads (`CalcPodGroupQueue` in
`pkg/podgrouper/podgrouper/plugins/defaultgrouper`). KAI has no JobSet grouper: its default grouper
makes one PodGroup per JobSet with minAvailable 1, so KAI does not gang-schedule a JobSet.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import UsageError
from ktrain.util.jsondata import Obj

SCHEDULERS = ("default", "kai")
KAI_SCHEDULER_NAME = "kai-scheduler"
KAI_QUEUE_LABEL = c.KAI_QUEUE_LABEL
VOLCANO_POD_GROUP_KIND = "PodGroup"
VOLCANO_API_PREFIX = "scheduling.volcano.sh/"


def check_scheduler(scheduler: str | None, *, allow_extensions: bool, runtime_gang: str | None) -> None:
    if scheduler is None or scheduler == "default":
        return
    if scheduler not in SCHEDULERS:
        raise UsageError(f"--scheduler: unknown scheduler {scheduler!r}", hint=f"one of: {', '.join(SCHEDULERS)}")
    if not allow_extensions:
        raise UsageError(
            "--scheduler kai is a ktrain extension (upstream Trainer has no KAI plugin)",
            hint="add --allow-extensions to use it",
        )
    if runtime_gang is not None:
        raise UsageError(
            f"--scheduler kai: the runtime gang-schedules with {runtime_gang} (podGroupPolicy); "
            "one job cannot use two schedulers",
            hint="pick a runtime without podGroupPolicy",
        )


def refuse_for_trainjob(*, priority_class: str | None, scheduler: str | None) -> None:
    """A TrainJob cannot carry these (see the module docstring): say so instead of dropping them."""
    for flag, value in (("--priority-class", priority_class), ("--scheduler", scheduler)):
        if value is not None and value != "default":
            raise UsageError(
                f"{flag} cannot travel in a TrainJob: runtimePatches do not allow a pod's "
                f"{'priorityClassName' if flag == '--priority-class' else 'schedulerName'}",
                hint="use --target jobset, or a runtime whose pod templates set it",
            )


def _pod_specs(jobset: Obj) -> list[Obj]:
    specs = []
    for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        pod = ((((rjob or {}).get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        if isinstance(pod, dict):
            specs.append(pod)
    return specs


def apply(objects: list[Obj], *, priority_class: str | None, scheduler: str | None) -> None:
    """Set the pod priority and the KAI scheduler on the rendered objects, in place (the KAI
    queue label reaches the JobSet through the flags' runtime patch, as other labels do)."""
    kai = scheduler == "kai"
    for obj in objects:
        if obj.get("kind") == "JobSet":
            for pod in _pod_specs(obj):
                if priority_class is not None:
                    pod["priorityClassName"] = priority_class
                if kai:
                    pod["schedulerName"] = KAI_SCHEDULER_NAME
        elif (
            priority_class is not None
            and obj.get("kind") == VOLCANO_POD_GROUP_KIND
            and str(obj.get("apiVersion", "")).startswith(VOLCANO_API_PREFIX)
        ):
            obj.setdefault("spec", {})["priorityClassName"] = priority_class
