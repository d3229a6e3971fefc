"""The resource types the double serves, and the discovery / CRD documents describing them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

ALL_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
READ_VERBS: tuple[str, ...] = ("get", "list", "watch")
COMMON_FIELD_LABELS: tuple[str, ...] = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core group
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    status_subresource: bool = False
    custom: bool = False  # a CustomResourceDefinition-backed type
    crd_file: str | None = None  # CRD YAML, relative to shared/reference/upstream
    field_labels: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    has_generation: bool = False
    # batch/v1 Jobs orphan their pods by default (DefaultGarbageCollectionPolicy in the job
    # registry strategy); everything else defaults to background deletion.
    default_propagation: str = "Background"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.plural)

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def group_kind(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def allowed_field_labels(self) -> frozenset[str]:
        return frozenset(COMMON_FIELD_LABELS + self.field_labels)

    def aliases(self) -> frozenset[str]:
        names = {self.plural, self.singular, self.kind.lower(), self.group_resource}
        names.update(self.short_names)
        if self.group:
            names.add(f"{self.kind.lower()}.{self.group}")
        return frozenset(n.lower() for n in names)


# --- built-in types ------------------------------------------------------------------------

NAMESPACES = ResourceType(
    "",
    "v1",
    "namespaces",
    "namespace",
    "Namespace",
    False,
    ("ns",),
    status_subresource=True,
    field_labels=("status.phase",),
    verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
)
CONFIGMAPS = ResourceType("", "v1", "configmaps", "configmap", "ConfigMap", True, ("cm",))
SECRETS = ResourceType("", "v1", "secrets", "secret", "Secret", True, field_labels=("type",))
PODS = ResourceType(
    "",
    "v1",
    "pods",
    "pod",
    "Pod",
    True,
    ("po",),
    status_subresource=True,
    field_labels=(
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
)
EVENTS = ResourceType(
    "",
    "v1",
    "events",
    "event",
    "Event",
    True,
    ("ev",),
    field_labels=(
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
)
SERVICES = ResourceType(
    "",
    "v1",
    "services",
    "service",
    "Service",
    True,
    ("svc",),
    status_subresource=True,
    verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
)
JOBS = ResourceType(
    "batch",
    "v1",
    "jobs",
    "job",
    "Job",
    True,
    status_subresource=True,
    field_labels=("status.successful",),
    has_generation=True,
    default_propagation="Orphan",
)
NODES = ResourceType(
    "",
    "v1",
    "nodes",
    "node",
    "Node",
    False,
    ("no",),
    status_subresource=True,
    field_labels=("spec.unschedulable",),
)
RESOURCE_QUOTAS = ResourceType(
    "", "v1", "resourcequotas", "resourcequota", "ResourceQuota", True, ("quota",), status_subresource=True
)
# pkg/registry/core/persistentvolumeclaim/strategy.go: status is a subresource; fields select by
# name and namespace only (PersistentVolumeClaimToSelectableFields).
PERSISTENT_VOLUME_CLAIMS = ResourceType(
    "",
    "v1",
    "persistentvolumeclaims",
    "persistentvolumeclaim",
    "PersistentVolumeClaim",
    True,
    ("pvc",),
    status_subresource=True,
)
CRDS = ResourceType(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "customresourcedefinition",
    "CustomResourceDefinition",
    False,
    ("crd", "crds"),
    verbs=READ_VERBS,
)

BUILTIN_TYPES: tuple[ResourceType, ...] = (
    NAMESPACES,
    CONFIGMAPS,
    SECRETS,
    PODS,
    EVENTS,
    SERVICES,
    JOBS,
    CRDS,
    NODES,
    RESOURCE_QUOTAS,
    PERSISTENT_VOLUME_CLAIMS,
)

# --- CRD-backed types, grouped by the switch that enables them ------------------------------

JOBSETS = ResourceType(
    "jobset.x-k8s.io",
    "v1alpha2",
    "jobsets",
    "jobset",
    "JobSet",
    True,
    status_subresource=True,
    custom=True,
    crd_file="jobset/jobset.x-k8s.io_jobsets.yaml",
    has_generation=True,
)
COSCHEDULING_PODGROUPS = ResourceType(
    "scheduling.x-k8s.io",
    "v1alpha1",
    "podgroups",
    "podgroup",
    "PodGroup",
    True,
    ("pg", "pgs"),
    status_subresource=True,
    custom=True,
    crd_file="scheduler-plugins/scheduling.x-k8s.io_podgroups.yaml",
    has_generation=True,
)
VOLCANO_PODGROUPS = ResourceType(
    "scheduling.volcano.sh",
    "v1beta1",
    "podgroups",
    "podgroup",
    "PodGroup",
    True,
    ("pg", "podgroup-v1beta1"),
    custom=True,
    crd_file="volcano/scheduling.volcano.sh_podgroups.yaml",
    has_generation=True,
)
VOLCANO_QUEUES = ResourceType(
    "scheduling.volcano.sh",
    "v1beta1",
    "queues",
    "queue",
    "Queue",
    False,
    ("q", "queue-v1beta1"),
    status_subresource=True,
    custom=True,
    crd_file="volcano/scheduling.volcano.sh_queues.yaml",
    has_generation=True,
)
TRAINJOBS = ResourceType(
    "trainer.kubeflow.org",
    "v1alpha1",
    "trainjobs",
    "trainjob",
    "TrainJob",
    True,
    status_subresource=True,
    custom=True,
    crd_file="trainer/crds/trainer.kubeflow.org_trainjobs.yaml",
    has_generation=True,
)
TRAINING_RUNTIMES = ResourceType(
    "trainer.kubeflow.org",
    "v1alpha1",
    "trainingruntimes",
    "trainingruntime",
    "TrainingRuntime",
    True,
    custom=True,
    crd_file="trainer/crds/trainer.kubeflow.org_trainingruntimes.yaml",
    has_generation=True,
)
CLUSTER_TRAINING_RUNTIMES = ResourceType(
    "trainer.kubeflow.org",
    "v1alpha1",
    "clustertrainingruntimes",
    "clustertrainingruntime",
    "ClusterTrainingRuntime",
    False,
    custom=True,
    crd_file="trainer/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml",
    has_generation=True,
)

# Kueue (kubernetes-sigs/kueue apis/kueue/v1beta1): no reference CRD under ../shared, so served
# with a permissive schema; v1beta1 is what every release serves (v1beta2 since 0.15 as well).
KUEUE_WORKLOADS = ResourceType(
    "kueue.x-k8s.io",
    "v1beta1",
    "workloads",
    "workload",
    "Workload",
    True,
    ("wl",),
    status_subresource=True,
    custom=True,
    has_generation=True,
)
KUEUE_LOCAL_QUEUES = ResourceType(
    "kueue.x-k8s.io",
    "v1beta1",
    "localqueues",
    "localqueue",
    "LocalQueue",
    True,
    ("queue", "queues", "lq"),
    status_subresource=True,
    custom=True,
    has_generation=True,
)
KUEUE_CLUSTER_QUEUES = ResourceType(
    "kueue.x-k8s.io",
    "v1beta1",
    "clusterqueues",
    "clusterqueue",
    "ClusterQueue",
    False,
    ("cq",),
    status_subresource=True,
    custom=True,
    has_generation=True,
)

CRD_SETS: Mapping[str, tuple[ResourceType, ...]] = {
    "jobset": (JOBSETS,),
    "coscheduling": (COSCHEDULING_PODGROUPS,),
    "volcano": (VOLCANO_PODGROUPS, VOLCANO_QUEUES),
    "trainer": (TRAINJOBS, TRAINING_RUNTIMES, CLUSTER_TRAINING_RUNTIMES),
    "kueue": (KUEUE_WORKLOADS, KUEUE_LOCAL_QUEUES, KUEUE_CLUSTER_QUEUES),
}
CRD_SET_ALIASES: Mapping[str, str] = {"scheduler-plugins": "coscheduling"}
ALL_CRD_SETS: frozenset[str] = frozenset(CRD_SETS)


def resolve_crd_sets(names: Any | None) -> frozenset[str]:
    """Normalise the `crds=` argument; None means every set."""
    if names is None:
        return ALL_CRD_SETS
    out = set()
    for raw in names:
        name = CRD_SET_ALIASES.get(raw, raw)
        if name not in CRD_SETS:
            raise ValueError(f"unknown CRD set {raw!r}; choose from {sorted(CRD_SETS)}")
        out.add(name)
    return frozenset(out)


# --- discovery documents ----------------------------------------------------------------------


def api_resource(rt: ResourceType) -> list[JSON]:
    """APIResource entries for a type and its subresources, as in /api/v1 or /apis/g/v."""
    entry: JSON = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    out = [entry]
    if rt.status_subresource:
        out.append(
            {
                "name": f"{rt.plural}/status",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": ["get", "patch", "update"],
            }
        )
    if rt is PODS:
        out.append(
            {
                "name": "pods/log",
                "singularName": "",
                "namespaced": True,
                "kind": "Pod",
                "verbs": ["get"],
            }
        )
    return out


def crd_object(rt: ResourceType, upstream_doc: JSON | None, created: str, uid: str) -> JSON:
    """The CustomResourceDefinition object for `rt`.

    `upstream_doc` (the reference CRD YAML) supplies the real schema when given; otherwise the
    schema is a permissive stand-in, which keeps listing CRDs cheap for the client.
    """
    names: JSON = {
        "kind": rt.kind,
        "listKind": rt.list_kind,
        "plural": rt.plural,
        "singular": rt.singular,
    }
    if rt.short_names:
        names["shortNames"] = list(rt.short_names)
    if upstream_doc is not None:
        spec = upstream_doc["spec"]
        annotations = dict(upstream_doc.get("metadata", {}).get("annotations", {}))
    else:
        version: JSON = {
            "name": rt.version,
            "served": True,
            "storage": True,
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                }
            },
        }
        if rt.status_subresource:
            version["subresources"] = {"status": {}}
        spec = {
            "group": rt.group,
            "names": names,
            "scope": "Namespaced" if rt.namespaced else "Cluster",
            "versions": [version],
        }
        annotations = {}
    metadata: JSON = {
        "name": rt.group_resource,
        "uid": uid,
        "resourceVersion": "1",
        "generation": 1,
        "creationTimestamp": created,
    }
    if annotations:
        metadata["annotations"] = annotations
    condition = {"lastTransitionTime": created, "status": "True"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": spec,
        "status": {
            "acceptedNames": names,
            "conditions": [
                dict(condition, type="NamesAccepted", reason="NoConflicts", message="no conflicts found"),
                dict(
                    condition,
                    type="Established",
                    reason="InitialNamesAccepted",
                    message="the initial names have been accepted",
                ),
            ],
            "storedVersions": [rt.version],
        },
    }
