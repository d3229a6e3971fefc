"""The bodies of `ktrain runtime list` and `ktrain runtime show`, typer-free.

The typer commands (`ktrain.cli.runtime`) and the fast path (`ktrain.cli.fastpath`) both call
`list_runtimes` / `show_runtime`, so what they print cannot depend on which of them parsed argv.
rich is imported only when a table is printed, the kubernetes client only when the cluster is read.
"""

from __future__ import annotations

import sys

from ktrain.cli.common import registry_from

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the fast path a few ms to import
    from typing import Any

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
    `local` never imports the kubernetes client."""
    from ktrain.cli.common import warn
    from ktrain.cli.jobinput import connection
    from ktrain.errors import UsageError

    if source not in SOURCES:
        raise UsageError(f"--source must be all, local or cluster, got {source!r}")
    options = connection(kubeconfig, context, namespace, request_timeout)
    if source == "local":
        return registry_from(runtime_file, runtimes_dir)
    from ktrain.cluster import runtimes as cluster_runtimes

    if source == "cluster":
        from ktrain.cluster.kube import connect
        from ktrain.inputs.registry import RuntimeRegistry

        registry = RuntimeRegistry(bundled=False)
        notes = cluster_runtimes.add_cluster_runtimes(registry, connect(options), prefer=True)
    else:
        registry = registry_from(runtime_file, runtimes_dir)
        notes = cluster_runtimes.try_add_cluster_runtimes(registry, options, prefer=True)
    for note in notes:
        warn(note)
    return registry


def _trainer_container(runtime: Any) -> dict[str, Any]:
    from ktrain import constants as c

    def at(node: Any, *keys: str) -> Any:  # a listing must not trip over a malformed runtime
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    rjobs = runtime.spec.template.spec.get("replicatedJobs")
    for rjob in rjobs if isinstance(rjobs, list) else []:
        labels = at(rjob, "template", "metadata", "labels")
        if isinstance(labels, dict) and labels.get(c.LABEL_ANCESTOR) == c.ANCESTOR_TRAINER:
            containers = at(rjob, "template", "spec", "template", "spec", "containers")
            for ct in containers if isinstance(containers, list) else []:
                if isinstance(ct, dict) and ct.get("name") == c.NODE:
                    return dict(ct)
    return {}


def summary(entry: Any) -> dict[str, Any]:
    runtime = entry.runtime
    ml = runtime.spec.ml_policy
    policy = ml.policy_keys[0] if ml and ml.policy_keys else "plainml"
    nproc = "-"
    if ml is not None:
        if ml.mpi is not None:
            nproc = str(ml.mpi.num_proc_per_node)
        elif ml.flux is not None:
            nproc = str(ml.flux.num_proc_per_node)
        elif ml.torch is not None:
            nproc = "auto"
    gang = runtime.spec.pod_group_policy
    gang_name = None
    if gang is not None:
        gang_name = "coscheduling" if gang.coscheduling else "volcano" if gang.volcano else None
    return {
        "name": runtime.name,
        "kind": runtime.kind,
        "framework": runtime.framework or "-",
        "mlPolicy": policy,
        "podGroupPolicy": gang_name or "-",
        "nodes": (ml.num_nodes if ml and ml.num_nodes is not None else 1),
        "procsPerNode": nproc,
        "image": _trainer_container(runtime).get("image", "-"),
        "source": entry.origin,
        "shadows": list(entry.shadows),
    }


def list_runtimes(
    runtime_file: list[str] | None = None,
    runtimes_dir: list[str] | None = None,
    output: str = "table",
    source: str = "all",
    namespace: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    request_timeout: float = 10.0,
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
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    columns = ["NAME", "KIND", "FRAMEWORK", "ML POLICY", "NODES", "PROCS/NODE", "IMAGE", "SOURCE"]
    if output == "wide":
        columns.insert(4, "GANG")
    for col in columns:
        table.add_column(col, overflow="fold")
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
        table.add_row(*row)
    Console(soft_wrap=False, width=None if sys.stdout.isatty() else 200).print(table)


def show_runtime(
    name: str,
    runtime_file: list[str] | None = None,
    runtimes_dir: list[str] | None = None,
    output: str = "text",
    source: str = "all",
    namespace: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    request_timeout: float = 10.0,
) -> None:
    """Show a blueprint, and what the engine injects when a job runs on it."""
    from ktrain.output.manifests import check_output, format_objects
    from ktrain.output.yamltext import dump

    check_output(output, ("text", "yaml", "json"))  # before any work
    registry = registry_for(source, runtime_file, runtimes_dir, kubeconfig, context, namespace, request_timeout)
    entry = registry.get(name)
    if output in ("yaml", "json"):
        sys.stdout.write(format_objects([entry.runtime.to_dict()], output))
        return
    s = summary(entry)
    out = [f"# {s['kind']} {s['name']} — framework {s['framework']}, ML policy {s['mlPolicy']}, source {s['source']}"]
    out.append(dump(entry.runtime.to_dict()).rstrip("\n"))
    out.append("")
    out.append("# What rendering a TrainJob on this runtime adds (1 node, no overrides):")
    out.extend("# " + line for line in injected(entry))
    sys.stdout.write("\n".join(out) + "\n")


def injected(entry: Any) -> list[str]:
    from ktrain import constants as c
    from ktrain.api.records import validate
    from ktrain.engine import RenderContext, SshKeyPair, render
    from ktrain.errors import KtrainError

    runtime = entry.runtime
    job = validate(
        "TrainJob",
        {
            "metadata": {"name": "example", "namespace": "default"},
            "spec": {"runtimeRef": {"name": runtime.name, "kind": runtime.kind}, "trainer": {}},
        },
    )
    ctx = RenderContext(ssh_key=SshKeyPair(b"<private key>", b"<public key>\n"))
    try:
        result = render(job, runtime, ctx)
    except KtrainError as exc:
        return [f"(cannot render a default job: {exc})"]
    lines = []
    original = {r.get("name"): r for r in runtime.spec.template.spec.get("replicatedJobs") or []}
    for obj in result.objects:
        lines.append(f"object: {obj['kind']} ({obj['apiVersion']}) {obj['metadata']['name']}")
        if obj["kind"] != c.JOBSET_KIND:
            continue
        for rjob in obj["spec"].get("replicatedJobs") or []:
            pod = rjob["template"]["spec"]["template"].get("spec") or {}
            before = original.get(rjob["name"]) or {}
            before_pod = (((before.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            before_env = {
                (ct.get("name"), e.get("name"))
                for ct in (before_pod.get("containers") or []) + (before_pod.get("initContainers") or [])
                for e in ct.get("env") or []
            }
            for ct in (pod.get("initContainers") or []) + (pod.get("containers") or []):
                for e in ct.get("env") or []:
                    if (ct.get("name"), e.get("name")) in before_env:
                        continue
                    value = e.get("value", "<from " + ", ".join((e.get("valueFrom") or {}).keys()) + ">")
                    lines.append(f"  {rjob['name']}/{ct['name']} env {e['name']}={value}")
                for p in ct.get("ports") or []:
                    lines.append(f"  {rjob['name']}/{ct['name']} port {p.get('containerPort')}")
            for v in pod.get("volumes") or []:
                if not any(v.get("name") == bv.get("name") for bv in before_pod.get("volumes") or []):
                    lines.append(f"  {rjob['name']} volume {v.get('name')}")
    return lines
