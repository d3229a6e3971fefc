"""`ktrain runtime list`: the runtime blueprints ktrain can render against, local and the cluster's.

Also the pieces `ktrain runtime show` shares: the `--source` options and `registry_for`, `summary`.
The typer app and the fast path (`ktrain.cli.fastpath`) both call `list_runtimes`, so what it
prints cannot depend on which of them parsed argv. rich is imported only for a table on a
terminal (`ktrain.output.tables.print_table`), the kubernetes client only when the cluster is read.
"""

from __future__ import annotations

import sys

from ktrain.cli.common import connection, registry_from, warn
from ktrain.cli.spec import CONTEXT, KUBECONFIG, NAMESPACE, Option, command

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated, Any

RUNTIME_FILE = Option("--runtime-file", help="A runtime YAML file.")
RUNTIMES_DIR = Option("--runtimes-dir", help="A directory of runtimes.")
SOURCE = Option(
    "--source",
    help="all | local | cluster: where to read runtimes from (the cluster's "
    "ClusterTrainingRuntimes and the namespace's TrainingRuntimes).",
)
LIST_TIMEOUT = Option("--request-timeout", help="Seconds to wait for the cluster.")

SOURCES = ("all", "local", "cluster")


def registry_for(
    source: str,
    runtime_file: list[str] | None,
    runtimes_dir: list[str] | None,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
) -> Any:
    """The runtimes of `--source`. `all`: local ones plus the cluster's, which win over a local
    one of the same kind and name (the controller would use them); an unreachable cluster is
    one warning, no kubeconfig is silence. `cluster`: only the cluster's, and failing loudly.
    `local` never reads a kubeconfig."""
    from ktrain.errors import UsageError

    if source not in SOURCES:
        raise UsageError(f"--source must be all, local or cluster, got {source!r}")
    options = connection(kubeconfig, context, namespace, request_timeout)
    if source == "local":
        return registry_from(runtime_file, runtimes_dir)
    from ktrain.service import cluster_runtimes

    if source == "cluster":
        from ktrain.inputs.registry import RuntimeRegistry
        from ktrain.service.connection import connect

        registry = RuntimeRegistry(bundled=False)
        notes = cluster_runtimes.add_cluster_runtimes(registry, connect(options), prefer=True)
    else:
        registry = registry_from(runtime_file, runtimes_dir)
        notes = cluster_runtimes.try_add_cluster_runtimes(registry, options, prefer=True)
    for note in notes:
        warn(note)
    return registry


def summary(entry: Any) -> dict[str, Any]:
    from ktrain.api.base import runtime_trainer_container
    from ktrain.api.policies import policy_named

    runtime = entry.runtime
    ml = runtime.spec.ml_policy
    policy = policy_named(ml.policy_keys[0] if ml and ml.policy_keys else None)
    # the policy's own numProcPerNode where it has one, else what its declaration says
    procs = getattr(getattr(ml, policy.key, None), "num_proc_per_node", None)
    nproc = policy.procs_per_node if procs is None else str(procs)
    gang = runtime.spec.pod_group_policy
    gang_name = None
    if gang is not None:
        gang_name = "coscheduling" if gang.coscheduling else "volcano" if gang.volcano else None
    return {
        "name": runtime.name,
        "kind": runtime.kind,
        "framework": runtime.framework or "-",
        "mlPolicy": policy.key,
        "podGroupPolicy": gang_name or "-",
        "nodes": (ml.num_nodes if ml and ml.num_nodes is not None else 1),
        "procsPerNode": nproc,
        "image": runtime_trainer_container(runtime.spec.template.spec).get("image", "-"),
        "source": entry.origin,
        "shadows": list(entry.shadows),
    }


@command("runtime", "list", fast=True)
def list_runtimes(
    runtime_file: Annotated[list[str] | None, RUNTIME_FILE] = None,
    runtimes_dir: Annotated[list[str] | None, RUNTIMES_DIR] = None,
    output: Annotated[str, Option("-o", "--output", help="table | wide | yaml | json | name")] = "table",
    source: Annotated[str, SOURCE] = "all",
    namespace: Annotated[str | None, NAMESPACE] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    request_timeout: Annotated[float, LIST_TIMEOUT] = 10.0,
) -> None:
    """List the runtime blueprints ktrain can render against (local, and the cluster's)."""
    from ktrain.output.manifests import check_output

    check_output(output, ("table", "wide", "yaml", "json", "name"))  # before any work
    registry = registry_for(source, runtime_file, runtimes_dir, kubeconfig, context, namespace, request_timeout)
    entries = registry.entries()
    if output in ("yaml", "json"):
        from ktrain.output.manifests import format_objects

        sys.stdout.write(format_objects([e.runtime.to_dict() for e in entries], output))
        return
    if output == "name":
        for e in entries:
            sys.stdout.write(f"{e.runtime.kind.lower()}.trainer.kubeflow.org/{e.runtime.name}\n")
        return
    if output not in ("table", "wide"):
        from ktrain.errors import UsageError

        raise UsageError(f"unknown output format {output!r}: use table, wide, yaml, json or name")
    from ktrain.output.tables import print_table

    columns = ["NAME", "KIND", "FRAMEWORK", "ML POLICY", "NODES", "PROCS/NODE", "IMAGE", "SOURCE"]
    if output == "wide":
        columns.insert(4, "GANG")
    rows = []
    for e in entries:
        s = summary(e)
        source = s["source"]
        if s["shadows"]:
            source += " (shadows " + ", ".join(s["shadows"]) + ")"
        row = [
            s["name"],
            s["kind"],
            s["framework"],
            s["mlPolicy"],
            str(s["nodes"]),
            s["procsPerNode"],
            s["image"],
            source,
        ]
        if output == "wide":
            row.insert(4, s["podGroupPolicy"])
        rows.append(row)
    print_table(columns, rows)
