"""`ktrain job list | get | logs | wait`: the typer declarations.

The bodies live typer-free in `ktrain.cli.jobs_view`, which the fast path
(`ktrain.cli.fastpath`) calls too.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ktrain.cli.jobs_view import list_jobs, print_logs, show_job, wait_job
from ktrain.cli.options import ContextOpt, KubeconfigOpt, NamespaceOpt, RequestTimeoutOpt


def list_command(
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="Jobs of every namespace.")] = False,
    selector: Annotated[
        Optional[str], typer.Option("-l", "--selector", help="Label selector, e.g. team=nlp,tier!=test.")
    ] = None,
    output: Annotated[str, typer.Option("-o", "--output", help="table | wide | yaml | json | name")] = "table",
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """List training jobs: TrainJobs, and JobSets made from Trainer runtimes."""
    list_jobs(all_namespaces, selector, output, kubeconfig, context, namespace, request_timeout)


def get_command(
    name: Annotated[str, typer.Argument(help="The job (TrainJob or JobSet) name.")],
    output: Annotated[str, typer.Option("-o", "--output", help="text | yaml | json")] = "text",
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """Show a job: state, conditions, replicated jobs, pods and its last warning events.

    Each pod shows its step, rank, phase, node, restarts and why it waits: enough to see why a job is not running.
    """
    show_job(name, output, kubeconfig, context, namespace, request_timeout)


def logs_command(
    name: Annotated[str, typer.Argument(help="The job (TrainJob or JobSet) name.")],
    node: Annotated[
        Optional[int], typer.Option("--node", help="Rank of the pod (of the node step unless --step).", min=0)
    ] = None,
    step: Annotated[
        Optional[str], typer.Option("--step", help="dataset-initializer | model-initializer | launcher | node")
    ] = None,
    all_pods: Annotated[
        bool, typer.Option("--all", help="Every pod of the job, each line prefixed with its step and rank.")
    ] = False,
    follow: Annotated[
        bool,
        typer.Option("-f", "--follow", help="Stream, including pods that start or restart later, until the job ends."),
    ] = False,
    tail: Annotated[Optional[int], typer.Option("--tail", help="Lines of recent log to show (per pod).")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only lines newer than this, e.g. 5m.")] = None,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="Prefix each line with its timestamp.")] = False,
    previous: Annotated[
        bool, typer.Option("-p", "--previous", help="The previous run of a restarted container.")
    ] = False,
    container: Annotated[
        Optional[str], typer.Option("-c", "--container", help="Container (default: the trainer's).")
    ] = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """Print a job's logs (default: rank 0 of the trainer step).

    The trainer step is the `node` replicated job, or for MPI the `launcher`, where mpirun prints every rank's output.
    """
    print_logs(
        name,
        node,
        step,
        all_pods,
        follow,
        tail,
        since,
        timestamps,
        previous,
        container,
        kubeconfig,
        context,
        namespace,
        request_timeout,
    )


def wait_command(
    name: Annotated[str, typer.Argument(help="The job (TrainJob or JobSet) name.")],
    for_: Annotated[str, typer.Option("--for", help="complete | failed | running")] = "complete",
    timeout: Annotated[
        Optional[str],
        typer.Option("--timeout", help="Give up after this long, e.g. 10m (default: wait until the job ends)."),
    ] = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """Wait for a job to be complete, failed or running.

    Exit 0 when reached, 1 when the job ended otherwise (Failed while waiting for complete), 124 on timeout.
    `--for running` is also met by a Complete job (it ran, and may have finished between two looks),
    never by a Failed one (exit 1: it will not run); `--for failed` is not met by a Complete job (exit 1).
    """
    wait_job(name, for_, timeout, kubeconfig, context, namespace, request_timeout)
