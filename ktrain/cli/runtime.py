"""`ktrain runtime list|show`: the typer declarations.

The bodies live typer-free in `ktrain.cli.runtimes_view`, which the fast path
(`ktrain.cli.fastpath`) calls too.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ktrain.cli.options import ContextOpt, KubeconfigOpt, NamespaceOpt
from ktrain.cli.runtimes_view import list_runtimes, show_runtime

app = typer.Typer(help="Runtime blueprints (ClusterTrainingRuntime / TrainingRuntime).", no_args_is_help=True)

RuntimeFileOpt = Annotated[Optional[list[str]], typer.Option("--runtime-file", help="A runtime YAML file.")]
RuntimesDirOpt = Annotated[Optional[list[str]], typer.Option("--runtimes-dir", help="A directory of runtimes.")]
SourceOpt = Annotated[
    str,
    typer.Option(
        "--source",
        help="all | local | cluster: where to read runtimes from (the cluster's "
        "ClusterTrainingRuntimes and the namespace's TrainingRuntimes).",
    ),
]
ListTimeoutOpt = Annotated[float, typer.Option("--request-timeout", help="Seconds to wait for the cluster.")]


@app.command("list")
def list_command(
    runtime_file: RuntimeFileOpt = None,
    runtimes_dir: RuntimesDirOpt = None,
    output: Annotated[str, typer.Option("-o", "--output", help="table | wide | yaml | json | name")] = "table",
    source: SourceOpt = "all",
    namespace: NamespaceOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: ListTimeoutOpt = 10.0,
) -> None:
    """List the runtime blueprints ktrain can render against (local, and the cluster's)."""
    list_runtimes(runtime_file, runtimes_dir, output, source, namespace, kubeconfig, context, request_timeout)


@app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="Runtime name.")],
    runtime_file: RuntimeFileOpt = None,
    runtimes_dir: RuntimesDirOpt = None,
    output: Annotated[str, typer.Option("-o", "--output", help="text | yaml | json")] = "text",
    source: SourceOpt = "all",
    namespace: NamespaceOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: ListTimeoutOpt = 10.0,
) -> None:
    """Show a blueprint, and what the engine injects when a job runs on it."""
    show_runtime(name, runtime_file, runtimes_dir, output, source, namespace, kubeconfig, context, request_timeout)
