"""The cluster's runtimes in a command's registry (`job render`, `job create`, `job init`, `runtime
list/show`, the Python API): the ClusterTrainingRuntimes and the namespace's TrainingRuntimes read
as registry entries with source "cluster" (`fetch_runtime_entries`).

Which source wins over which is the callers' choice (see README, "Runtimes from the cluster"):
`job create` and `runtime list/show` prefer the cluster's copy, as that is what the Trainer
controller would use; `job render` prefers local files unless told about a cluster."""

from __future__ import annotations

import os

from ktrain.errors import ApiError, KtrainError
from ktrain.inputs.documents import Document, parse_model
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


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
    from ktrain.cluster import client as k
    from ktrain.cluster.kube import ApiNotFoundError

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


def add_cluster_runtimes(registry: RuntimeRegistry, cluster: Any, *, prefer: bool) -> list[str]:
    """Read the cluster's runtimes into `registry`; returns warnings."""
    entries, warnings = fetch_runtime_entries(cluster)

    def namespaced(namespace: str) -> list[RuntimeEntry]:
        try:
            return fetch_runtime_entries(cluster, namespace, namespaced_only=True)[0]
        except ApiError as exc:  # 403 on another namespace: as if it had none (the lookup says so)
            if exc.status == 403:
                return []
            raise

    registry.add_cluster_entries(entries, prefer=prefer, namespace=cluster.namespace, namespaced=namespaced)
    return warnings


def try_add_cluster_runtimes(
    registry: RuntimeRegistry, options: Any, *, prefer: bool, request: Any = None
) -> list[str]:
    """As `add_cluster_runtimes`, but a cluster that cannot be reached is one warning, and no
    kubeconfig at all is silence (and `kubernetes` is then never imported). A `request` given
    takes the context's namespace as its default, where the cluster's TrainingRuntimes live."""
    explicit = bool(options.kubeconfig or options.context)
    if not explicit and not kubeconfig_available(options.kubeconfig):
        return []
    from ktrain.errors import UsageError
    from ktrain.service.connection import connect

    try:
        cluster = connect(options)
    except KtrainError as exc:
        # --kubeconfig / --context that name nothing usable are the user's error, as in kubectl
        # (issue #19); an unconfigured or broken ambient kubeconfig is only a warning.
        if explicit and (isinstance(exc, UsageError) or not kubeconfig_available(options.kubeconfig)):
            raise
        return [f"cluster runtimes not shown: {exc.message}"]
    try:
        if request is not None:
            request.default_namespace = cluster.namespace
        return add_cluster_runtimes(registry, cluster, prefer=prefer)
    except KtrainError as exc:  # unreachable, timed out, forbidden...
        return [f"cluster runtimes not shown: {exc.message}"]


def runtime_file_notes(entry: RuntimeEntry, *, for_controller: bool) -> list[str]:
    """An explicit `--runtime-file` runtime that hides the cluster's of the same kind and name is
    used, and said so (never silently); for a TrainJob (`for_controller`) it is refused, as the
    Trainer controller would use the cluster's instead."""
    if entry.source != "file" or SOURCE_CLUSTER not in entry.shadows:
        return []
    runtime = entry.runtime
    if for_controller:
        from ktrain.errors import UsageError

        raise UsageError(
            f"--runtime-file {entry.path} defines {runtime.kind} {runtime.name}, but the cluster has its own "
            f"{runtime.kind} {runtime.name}, which the Trainer controller would use for this TrainJob",
            hint="drop --runtime-file to submit with the cluster's runtime, or use --target jobset "
            "to submit what the file renders",
        )
    return [f"using {runtime.kind} {runtime.name} from --runtime-file {entry.path}, not the cluster's of the same name"]


def find_runtime(registry: RuntimeRegistry, name: str, options: Any) -> tuple[RuntimeEntry, list[str]]:
    """A runtime by name as `job render` resolves it (`job init`): local first; with
    --kubeconfig/--context the cluster's win; a name found nowhere else is looked up on the
    current context's cluster. Returns (entry, warnings)."""
    from ktrain.errors import RuntimeNotFoundError

    explicit = bool(options.kubeconfig or options.context)
    warnings = try_add_cluster_runtimes(registry, options, prefer=True) if explicit else []
    try:
        return registry.get(name), warnings
    except RuntimeNotFoundError as exc:
        if explicit or not kubeconfig_available(options.kubeconfig):
            raise
        fallback = try_add_cluster_runtimes(registry, options, prefer=False)
        try:
            return registry.get(name), warnings
        except RuntimeNotFoundError:
            if fallback:
                exc.hint = f"{exc.hint}; {fallback[0]}" if exc.hint else fallback[0]
            raise exc from None
