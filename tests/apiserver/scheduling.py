"""Seeding the double with what schedulers, kubelets, quota admission and Kueue leave behind.

The API server itself does none of this (a scheduler, the kubelet, Kueue do); tests put the
objects in the state those components leave them in, with the texts they write. Where a text
was recorded from a real cluster it is used verbatim (`RECORDED`); every other text names the
file of the component that writes it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from .cluster import rfc3339
from .resources import NODES, PERSISTENT_VOLUME_CLAIMS, PODS, RESOURCE_QUOTAS

JSON = dict[str, Any]

# kube-scheduler v1.36.2, 8 nodes of 8 nvidia.com/gpu, 32 cpu, 256Gi: what it wrote for pods asking
# 16 GPUs, 900Gi of memory, and a node selector no node matches (../shared/reference/cluster/
# pending-pods.md, "kubectl get events -o json" and the pods' PodScheduled conditions).
RECORDED = {
    "gpu16": (
        "0/8 nodes are available: 8 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    ),
    "mem": (
        "0/8 nodes are available: 8 Insufficient memory. no new claims to deallocate, "
        "preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    ),
    "selector-event": (
        "0/8 nodes are available: 8 node(s) didn't match Pod's node affinity/selector. no new claims to "
        "deallocate, preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    ),
    "selector-condition": (
        "0/8 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 5 node(s) had "
        "untolerated taint(s). no new claims to deallocate, preemption: 0/8 nodes are available: 8 "
        "Preemption is not helpful for scheduling."
    ),
}


def add_node(
    srv: Any,
    name: str,
    *,
    allocatable: Mapping[str, str],
    labels: Mapping[str, str] | None = None,
    taints: Sequence[JSON] = (),
    unschedulable: bool = False,
) -> JSON:
    """A Ready node as the kubelet registers it (capacity = allocatable here)."""
    spec: JSON = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **dict(labels or {})}},
        "spec": spec,
        "status": {
            "capacity": dict(allocatable),
            "allocatable": dict(allocatable),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }
    return srv.cluster.put(NODES, node)


def add_nodes(srv: Any, count: int, prefix: str = "gpu", **kwargs: Any) -> list[JSON]:
    return [add_node(srv, f"{prefix}-{i}", **kwargs) for i in range(count)]


def change_pod(srv: Any, name: str, namespace: str, change: Any) -> JSON:
    """Apply `change(pod)` to a stored pod (spec and status alike, as its writers would)."""
    with srv.cluster.lock:
        pod = srv.cluster.get(PODS, namespace, name)
        change(pod)
        return srv.cluster.put(PODS, pod)


def refuse_scheduling(
    srv: Any,
    pod: str,
    namespace: str,
    message: str,
    *,
    scheduler: str = "default-scheduler",
    when: dt.datetime | None = None,
) -> None:
    """What kube-scheduler leaves on a pod it cannot place (pkg/scheduler/schedule_one.go,
    handleSchedulingFailure): PodScheduled=False (reason Unschedulable) with the FitError's
    message, and a Warning FailedScheduling event with the same message."""
    stamp = rfc3339(when)

    def unschedulable(obj: JSON) -> None:
        status = obj.setdefault("status", {})
        status["phase"] = "Pending"
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastTransitionTime": stamp,
                "observedGeneration": 1,
            }
        ]
        status.pop("containerStatuses", None)  # never scheduled: no kubelet has reported on it
        status.pop("startTime", None)

    stored = change_pod(srv, pod, namespace, unschedulable)
    srv.add_event(stored, "FailedScheduling", message, type="Warning", component=scheduler, timestamp=when)


def waiting(reason: str, message: str = "", *, restarts: int = 0, last: JSON | None = None) -> Any:
    """A change for `change_pod`: the first container waits with `reason` (the kubelet's)."""

    def change(obj: JSON) -> None:
        status = obj.setdefault("status", {})
        cs = status["containerStatuses"][0]
        cs["state"] = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
        cs["ready"] = False
        cs["restartCount"] = restarts
        if last is not None:
            cs["lastState"] = {"terminated": last}

    return change


def set_resources(requests: Mapping[str, str], limits: Mapping[str, str] | None = None) -> Any:
    """A change for `change_pod`: the first container's requests (and limits)."""

    def change(obj: JSON) -> None:
        resources: JSON = {"requests": dict(requests)}
        if limits:
            resources["limits"] = dict(limits)
        obj["spec"]["containers"][0]["resources"] = resources

    return change


def add_quota(srv: Any, name: str, namespace: str, hard: Mapping[str, str], used: Mapping[str, str]) -> JSON:
    """A ResourceQuota as the quota controller keeps it (status.hard mirrors spec.hard)."""
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"hard": dict(hard)},
        "status": {"hard": dict(hard), "used": dict(used)},
    }
    return srv.cluster.put(RESOURCE_QUOTAS, quota)


def add_claim(
    srv: Any,
    name: str,
    namespace: str,
    *,
    phase: str = "Pending",
    storage: str = "100Gi",
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    storage_class: str | None = None,
    volume: str | None = None,
    provisioner: str | None = None,
) -> JSON:
    """A PersistentVolumeClaim as the PV controller keeps it (pkg/controller/volume/persistentvolume/
    pv_controller.go): status.phase Pending until bound, then Bound with the volume's access modes and
    capacity; a claim handed to an external provisioner carries the provisioner annotations
    (setClaimProvisioner). `storage_class` None leaves spec.storageClassName unset (no default class)."""
    spec: JSON = {
        "accessModes": list(access_modes),
        "resources": {"requests": {"storage": storage}},
        "volumeMode": "Filesystem",
    }
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume is not None:
        spec["volumeName"] = volume
    status: JSON = {"phase": phase}
    if phase == "Bound":
        status.update(accessModes=list(access_modes), capacity={"storage": storage})
    meta: JSON = {"name": name, "namespace": namespace, "finalizers": ["kubernetes.io/pvc-protection"]}
    if provisioner:
        meta["annotations"] = {
            "volume.beta.kubernetes.io/storage-provisioner": provisioner,
            "volume.kubernetes.io/storage-provisioner": provisioner,
        }
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": status}
    return srv.cluster.put(PERSISTENT_VOLUME_CLAIMS, claim)


def quota_refusal(pod: str, quota: str, requested: str, used: str, limited: str) -> str:
    """The Job controller's FailedCreate message for a pod the quota admission plugin refused:
    pkg/controller/controller_utils.go ("Error creating: %v") around the Forbidden error of
    staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go."""
    return (
        f'Error creating: pods "{pod}" is forbidden: exceeded quota: {quota}, '
        f"requested: {requested}, used: {used}, limited: {limited}"
    )


def add_workload(
    srv: Any,
    owner: JSON,
    queue: str,
    *,
    conditions: Sequence[JSON] = (),
    pod_sets: Sequence[JSON] = (),
    cluster_queue: str | None = None,
) -> JSON:
    """The Workload Kueue's job reconciler makes for `owner` (its JobSet or TrainJob), named as
    Kueue names it (jobframework GetWorkloadNameForOwnerWithGVK: <kind>-<name>-<hash>)."""
    meta = owner["metadata"]
    workload: JSON = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "name": f"{owner['kind'].lower()}-{meta['name']}-3f2a1",
            "namespace": meta.get("namespace", "default"),
            "labels": {"kueue.x-k8s.io/job-uid": meta.get("uid", "")},
            "ownerReferences": [
                {
                    "apiVersion": owner["apiVersion"],
                    "kind": owner["kind"],
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"queueName": queue, "podSets": [dict(p) for p in pod_sets]},
        "status": {"conditions": [dict(c) for c in conditions]},
    }
    if cluster_queue:
        workload["status"]["admission"] = {"clusterQueue": cluster_queue, "podSetAssignments": []}
    return srv.put_object(workload)


def add_local_queue(srv: Any, name: str, namespace: str, cluster_queue: str) -> JSON:
    return srv.put_object(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue},
        }
    )


def condition(kind: str, status: str, reason: str, message: str) -> JSON:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
