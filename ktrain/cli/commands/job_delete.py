"""`ktrain job delete`: a job's JobSet or TrainJob and every companion object, by known name.

The typer app and the fast path (`ktrain.cli.fastpath`) both call `delete_jobs`, so what it
asks, prints and deletes cannot depend on which of them parsed argv.
"""

from __future__ import annotations

import sys

from ktrain.cli.common import cluster_for, parse_timeout
from ktrain.cli.guard import Aborted
from ktrain.cli.spec import CONTEXT, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Argument, Option, command
from ktrain.errors import NotFoundError, UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated

    from ktrain.service.job_delete import Seen

CASCADES = {"background": "Background", "foreground": "Foreground", "orphan": "Orphan"}


def _confirm(question: str) -> bool:
    """Ask on a terminal; anything but y/yes declines."""
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


@command("job", "delete", fast=True)
def delete_jobs(
    names: Annotated[list[str] | None, Argument(help="Job names.", show_default=False)] = None,
    selector: Annotated[
        str | None, Option("-l", "--selector", help="Delete the jobs matching this label selector.")
    ] = None,
    all_jobs: Annotated[bool, Option("--all", help="Delete every job in the namespace.")] = False,
    cascade: Annotated[
        str, Option("--cascade", help="background | foreground | orphan (keep the pods and companions).")
    ] = "background",
    wait: Annotated[bool, Option("--wait", help="Wait until every object is gone.")] = False,
    timeout: Annotated[str | None, Option("--timeout", help="With --wait: give up after (e.g. 5m).")] = None,
    yes: Annotated[bool, Option("--yes", "-y", help="Do not ask before deleting several jobs.")] = False,
    dry_run: Annotated[
        str, Option("--dry-run", help="none | server (the API server checks, nothing is deleted).")
    ] = "none",
    namespace: Annotated[str | None, NAMESPACE] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
    force: Annotated[
        bool, Option("--force", help="Also delete a named JobSet that is not a training job (job list hides it).")
    ] = False,
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

    from ktrain.service.job_delete import delete_job, plain_jobsets, select_jobs, wait_deleted

    cluster = cluster_for(kubeconfig, context, namespace, request_timeout)
    ns = cluster.namespace
    targets = list(dict.fromkeys(names or [])) or select_jobs(cluster, ns, selector)
    if not targets:
        sys.stderr.write(f"no jobs found in namespace {ns}\n")
        return
    seen: Seen = {}  # the TrainJobs and JobSets read to check them, not read again to delete them
    plain = [] if force or not names else plain_jobsets(cluster, targets, ns, seen)
    if plain:
        raise UsageError(
            f"JobSet{'s' if len(plain) > 1 else ''} {', '.join(plain)} in namespace {ns} "
            f"{'are' if len(plain) > 1 else 'is'} not a training job (`ktrain job list` does not show "
            f"{'them' if len(plain) > 1 else 'it'}): not deleted",
            hint="pass --force to delete it all the same, or use kubectl delete jobset NAME",
        )
    question = f"delete {len(targets)} jobs in namespace {ns} ({', '.join(targets)})?"
    if len(targets) > 1 and not yes and sys.stdin.isatty() and not _confirm(question):
        raise Aborted()
    missing = []
    gone = []
    suffix = " (server dry run)" if dry_run == "server" else ""
    for name in targets:
        deleted = delete_job(cluster, name, ns, propagation=propagation, dry_run=dry_run == "server", seen=seen)
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
