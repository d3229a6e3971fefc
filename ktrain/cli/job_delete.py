"""`ktrain job delete`: the typer declaration.

The body lives typer-free in `ktrain.cli.job_remove`, which the fast path
(`ktrain.cli.fastpath`) calls too.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ktrain.cli.job_remove import delete_jobs
from ktrain.cli.options import (
    ContextOpt,
    KubeconfigOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
)


def delete_command(
    names: Annotated[Optional[list[str]], typer.Argument(help="Job names.", show_default=False)] = None,
    selector: Annotated[
        Optional[str], typer.Option("-l", "--selector", help="Delete the jobs matching this label selector.")
    ] = None,
    all_jobs: Annotated[bool, typer.Option("--all", help="Delete every job in the namespace.")] = False,
    cascade: Annotated[
        str, typer.Option("--cascade", help="background | foreground | orphan (keep the pods and companions).")
    ] = "background",
    wait: Annotated[bool, typer.Option("--wait", help="Wait until every object is gone.")] = False,
    timeout: Annotated[Optional[str], typer.Option("--timeout", help="With --wait: give up after (e.g. 5m).")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before deleting several jobs.")] = False,
    dry_run: Annotated[
        str, typer.Option("--dry-run", help="none | server (the API server checks, nothing is deleted).")
    ] = "none",
    namespace: NamespaceOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
    force: Annotated[
        bool, typer.Option("--force", help="Also delete a named JobSet that is not a training job (job list hides it).")
    ] = False,
) -> None:
    """Delete jobs: the JobSet (or TrainJob) and its PodGroup, MPI, snapshot and Flux objects."""
    delete_jobs(
        names,
        selector,
        all_jobs,
        cascade,
        wait,
        timeout,
        yes,
        dry_run,
        namespace,
        kubeconfig,
        context,
        request_timeout,
        force,
    )
