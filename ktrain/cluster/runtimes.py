"""Runtime blueprints read from a cluster: its ClusterTrainingRuntimes and the namespace's
TrainingRuntimes, as registry entries with source "cluster".

Which source wins over which is the callers' choice (see README, "Runtimes from the cluster"):
`job create` and `runtime list/show` prefer the cluster's copy, as that is what the Trainer
controller would use; `job render` prefers local files unless told about a cluster.
"""

from __future__ import annotations

import os
from typing import Any

from ktrain.errors import ApiError, KtrainError
from ktrain.inputs.documents import Document, parse_model
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry

SOURCE_CLUSTER = "cluster"


def kubeconfig_available(kubeconfig: str | None) -> bool:
    """Whether a cluster is configured at all (without importing the kubernetes client)."""
    from ktrain.cluster.kube import _in_cluster_available, kubeconfig_paths

    return any(os.path.isfile(p) for p in kubeconfig_paths(kubeconfig)) or _in_cluster_available()


def fetch_runtime_entries(cluster: Any) -> tuple[list[RuntimeEntry], list[str]]:
    """(entries, warnings). A Trainer that is not installed means no entries, silently; a
    kind we may not list (403) or an object that does not parse is a warning, not a failure."""
    from ktrain.cluster import client as k
    from ktrain.cluster.kube import ApiNotFoundError

    entries: list[RuntimeEntry] = []
    warnings: list[str] = []
    for resource in (k.CLUSTER_TRAINING_RUNTIME, k.TRAINING_RUNTIME):
        try:
            items = k.list_objects(cluster, resource, cluster.namespace)
        except ApiNotFoundError:
            continue  # the Trainer CRDs are not installed
        except ApiError as exc:
            if exc.status != 403:
                raise
            warnings.append(f"cannot list {resource.kind}s on the cluster: {exc.message}")
            continue
        for item in items:
            data = {key: item[key] for key in ("apiVersion", "kind", "metadata", "spec") if key in item}
            data["metadata"] = {
                key: value for key, value in (data.get("metadata") or {}).items() if key != "managedFields"
            }
            name = data["metadata"].get("name", "?")
            where = f"cluster:{resource.kind.lower()}/{name}"
            try:
                runtime = parse_model(Document(data=data, file=where), "TrainingRuntime", what=resource.kind)
            except KtrainError as exc:
                warnings.append(f"skipping {resource.kind} {name} from the cluster: {exc.message}")
                continue
            entries.append(RuntimeEntry(runtime=runtime, source=SOURCE_CLUSTER))
    return entries, warnings


def add_cluster_runtimes(registry: RuntimeRegistry, cluster: Any, *, prefer: bool) -> list[str]:
    """Read the cluster's runtimes into `registry`; returns warnings."""
    entries, warnings = fetch_runtime_entries(cluster)
    registry.add_cluster_entries(entries, prefer=prefer)
    return warnings


def try_add_cluster_runtimes(
    registry: RuntimeRegistry, options: Any, *, prefer: bool, request: Any = None
) -> list[str]:
    """As `add_cluster_runtimes`, but a cluster that cannot be reached is one warning, and no
    kubeconfig at all is silence (and `kubernetes` is then never imported). A `request` given
    takes the context's namespace as its default, where the cluster's TrainingRuntimes live."""
    if not kubeconfig_available(options.kubeconfig):
        return []
    from ktrain.cluster.kube import connect

    try:
        cluster = connect(options)
        if request is not None:
            request.default_namespace = cluster.namespace
        return add_cluster_runtimes(registry, cluster, prefer=prefer)
    except KtrainError as exc:  # unreachable, timed out, forbidden, a broken kubeconfig...
        return [f"cluster runtimes not shown: {exc.message}"]
