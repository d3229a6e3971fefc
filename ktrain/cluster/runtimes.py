"""Runtime blueprints read from a cluster: its ClusterTrainingRuntimes and the namespace's
TrainingRuntimes, as registry entries with source "cluster" (`fetch_runtime_entries`)."""

from __future__ import annotations

import os

from ktrain.cluster import client as k
from ktrain.cluster.kube import ApiNotFoundError
from ktrain.errors import ApiError, KtrainError
from ktrain.inputs.documents import Document, parse_model
from ktrain.inputs.registry import RuntimeEntry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Obj = dict[str, "Any"]


SOURCE_CLUSTER = "cluster"


def kubeconfig_available(kubeconfig: str | None) -> bool:
    """Whether a cluster is configured at all (without importing the kubernetes client)."""
    from ktrain.cluster.kube import _in_cluster_available, kubeconfig_paths

    return any(os.path.isfile(p) for p in kubeconfig_paths(kubeconfig)) or _in_cluster_available()


# What the server sets on an object: left out of a runtime read from the cluster, so that
# `runtime show -o yaml` can be applied elsewhere (as `kubectl get -o yaml` output cannot as is).
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def portable_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in meta.items() if key not in SERVER_METADATA}
    annotations = {k: v for k, v in (out.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    return out


def fetch_runtime_entries(
    cluster: Any, namespace: str | None = None, *, namespaced_only: bool = False
) -> tuple[list[RuntimeEntry], list[str]]:
    """(entries, warnings): the ClusterTrainingRuntimes and the TrainingRuntimes of `namespace`
    (default: the context's). A Trainer that is not installed means no entries, silently; a
    kind we may not list (403) or an object that does not parse is a warning, not a failure."""

    entries: list[RuntimeEntry] = []
    warnings: list[str] = []
    kinds = (k.TRAINING_RUNTIME,) if namespaced_only else (k.CLUSTER_TRAINING_RUNTIME, k.TRAINING_RUNTIME)
    for resource in kinds:
        try:
            items = k.list_objects(cluster, resource, namespace or cluster.namespace)
        except ApiNotFoundError:
            continue  # the Trainer CRDs are not installed
        except ApiError as exc:
            if exc.status != 403:
                raise
            warnings.append(f"cannot list {resource.kind}s on the cluster: {exc.message}")
            continue
        for item in items:
            data = {key: item[key] for key in ("apiVersion", "kind", "metadata", "spec") if key in item}
            data["metadata"] = portable_metadata(data.get("metadata") or {})
            name = data["metadata"].get("name", "?")
            where = f"cluster:{resource.kind.lower()}/{name}"
            try:
                runtime = parse_model(Document(data=data, file=where), "TrainingRuntime", what=resource.kind)
            except KtrainError as exc:
                warnings.append(f"skipping {resource.kind} {name} from the cluster: {exc.message}")
                continue
            entries.append(RuntimeEntry(runtime=runtime, source=SOURCE_CLUSTER))
    return entries, warnings
