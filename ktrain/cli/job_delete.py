"""`ktrain job delete`: a job's JobSet or TrainJob and every companion object, by known name."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ktrain.cli.common import parse_timeout
from ktrain.cli.options import (
    ContextOpt,
    KubeconfigOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
)
from ktrain.errors import NotFoundError, UsageError

CASCADES = {"background": "Background", "foreground": "Foreground", "orphan": "Orphan"}


def _confirm(question: str) -> bool:
    """Ask on a terminal; anything but y/yes declines."""
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


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
) -> None:
    """Delete jobs: the JobSet (or TrainJob) and its PodGroup, MPI, snapshot and Flux objects."""
    propagation = CASCADES.get(cascade)
    if propagation is None:
        raise UsageError(f"--cascade must be background, foreground or orphan, got {cascade!r}")
    if dry_run not in ("none", "server"):
        raise UsageError(f"--dry-run must be none or server, got {dry_run!r}")
    chosen = sum([bool(names), selector is not None, all_jobs])
    if chosen == 0:
        raise UsageError("name the jobs to delete, or pass -l SELECTOR or --all")
    if chosen > 1:
        raise UsageError("give job names, -l SELECTOR or --all, not several of them")
    wait_timeout = parse_timeout(timeout)

    from ktrain.cli.options import connection
    from ktrain.cluster.kube import connect
    from ktrain.submit import delete_job, select_jobs, wait_deleted

    cluster = connect(connection(kubeconfig, context, namespace, request_timeout))
    ns = cluster.namespace
    targets = list(dict.fromkeys(names or [])) or select_jobs(cluster, ns, selector)
    if not targets:
        sys.stderr.write(f"no jobs found in namespace {ns}\n")
        return
    if len(targets) > 1 and not yes and sys.stdin.isatty():
        if not _confirm(f"delete {len(targets)} jobs in namespace {ns} ({', '.join(targets)})?"):
            raise typer.Abort()
    missing = []
    gone = []
    suffix = " (server dry run)" if dry_run == "server" else ""
    for name in targets:
        deleted = delete_job(cluster, name, ns, propagation=propagation, dry_run=dry_run == "server")
        if not deleted:
            missing.append(name)
            continue
        for w in deleted:
            sys.stdout.write(f'{w.resource.type_name} "{w.name}" deleted{suffix}\n')
        gone.extend(deleted)
    if wait and gone and dry_run == "none":
        wait_deleted(cluster, gone, timeout=wait_timeout)
    if missing:
        raise NotFoundError(
            f"job{'s' if len(missing) > 1 else ''} {', '.join(missing)} not found in namespace {ns}",
            hint=f"`ktrain job list -n {ns}` lists what is there",
        )
