"""The reads of `job why` (issue #29): the job as the diagnosis starts from (`job_facts`), and each
further read it asks for (`perform`), named by the area modules of `ktrain.jobs.why`.

Every read but the job itself may fail (RBAC above all): the failure is recorded in the facts and
the diagnosis goes on without it.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster
from ktrain.cluster.reads import get_custom, list_warning_events, log_tail
from ktrain.errors import (
    ApiError,
    KtrainError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

Obj = dict[str, "Any"]


def perform(cluster: KubeCluster, facts: Any, read: Any) -> None:
    """Carry out one read of the diagnosis; a refusal or an error is recorded, never raised."""
    try:
        facts.record(read, _read(cluster, facts, read))
    except ApiError as exc:
        facts.refuse(
            read, f"forbidden: {exc.message.partition(' is forbidden: ')[2]}" if exc.status == 403 else exc.message
        )
    except KtrainError as exc:  # the connection broke: say so, decide without it
        facts.refuse(read, exc.message)


def _list_all(cluster: KubeCluster, resources: tuple[k.Resource, ...], namespace: str) -> Any:
    """List the first of `resources` (one kind in several API versions) the cluster serves."""
    from ktrain.jobs.why.facts import NOT_SERVED

    for resource in resources:
        try:
            return k.list_objects(cluster, resource, namespace)
        except ApiNotFoundError:
            continue
    return NOT_SERVED


def _read(cluster: KubeCluster, facts: Any, read: Any) -> Any:
    from ktrain.jobs.why.controllers import JOBS
    from ktrain.jobs.why.facts import EVENTS, LOG, SERVED
    from ktrain.jobs.why.gangs import POD_GROUP
    from ktrain.jobs.why.nodes import NODE_PODS, NODES
    from ktrain.jobs.why.queues import LOCAL_QUEUE, QUOTAS, WORKLOADS
    from ktrain.jobs.why.volumes import CLAIMS

    ns = facts.namespace
    if read.what == EVENTS:
        return list_warning_events(cluster, ns)
    if read.what == JOBS:
        return k.list_objects(cluster, k.BATCH_JOB, ns, label_selector=f"{c.JOBSET_NAME_LABEL}={facts.name}")
    if read.what == NODES:
        return k.list_objects(cluster, k.NODE)
    if read.what == NODE_PODS:
        # What the scheduler counts as taken: pods bound to a node that have not ended (any namespace).
        selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
        return k.list_objects(cluster, k.POD, all_namespaces=True, field_selector=selector)
    if read.what == QUOTAS:
        return k.list_objects(cluster, k.RESOURCE_QUOTA, ns)
    if read.what == CLAIMS:  # one list for every claim the pods mount
        return k.list_objects(cluster, k.PVC, ns)
    if read.what == WORKLOADS:
        return _list_all(cluster, k.KUEUE_WORKLOADS, ns)
    if read.what == LOCAL_QUEUE:
        for resource in k.KUEUE_LOCAL_QUEUES:
            found = get_custom(cluster, resource, ns, read.name)
            if found is not None:
                return found
        return None
    if read.what == POD_GROUP:
        resource = k.COSCHEDULING_PODGROUP if read.api_version == c.COSCHEDULING_API_VERSION else k.VOLCANO_PODGROUP
        return get_custom(cluster, resource, ns, read.name)
    if read.what == SERVED:
        return k.served_kinds(cluster, read.api_version) is not None
    if read.what == LOG:
        return log_tail(cluster, ns, read.name, read.container, read.previous)
    raise ValueError(f"unknown read {read.what!r}")
