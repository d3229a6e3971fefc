"""`ktrain job prune`: delete finished jobs (Complete or Failed) and their companions."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ktrain.cli.common import cluster_for, parse_duration, utc_now
from ktrain.cli.guard import Aborted
from ktrain.cli.spec import CONTEXT, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

if TYPE_CHECKING:
    from typing import Annotated, Any


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(int(seconds), 0)}s"


def _table(candidates: list[Any], all_namespaces: bool) -> str:
    from ktrain.output.tables import plain_table

    headers = (["NAMESPACE"] if all_namespaces else []) + ["NAME", "KIND", "STATE", "FINISHED"]
    rows = [
        ([c.namespace] if all_namespaces else []) + [c.name, c.kind, c.state, f"{_age(c.age)} ago"] for c in candidates
    ]
    return plain_table(headers, rows)


@command("job", "prune")
def prune_jobs(
    older_than: Annotated[
        str | None, Option("--older-than", help="Only jobs that finished at least this long ago (7d, 12h, 30m).")
    ] = None,
    state: Annotated[str | None, Option("--state", help="complete | failed (default: both).")] = None,
    selector: Annotated[str | None, Option("-l", "--selector", help="Only jobs matching this label selector.")] = None,
    all_namespaces: Annotated[bool, Option("-A", "--all-namespaces", help="Finished jobs of every namespace.")] = False,
    yes: Annotated[bool, Option("--yes", "-y", help="Delete without asking.")] = False,
    dry_run: Annotated[
        str, Option("--dry-run", help="none | client (list only) | server (the API server checks, nothing deleted).")
    ] = "none",
    namespace: Annotated[str | None, NAMESPACE] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Delete finished jobs and their companions: lists them, asks, deletes exactly those."""
    from ktrain.authoring.failure_policy import parse_duration_seconds
    from ktrain.service.prune import STATES, list_candidates, prune

    if dry_run not in ("none", "client", "server"):
        raise UsageError(f"--dry-run must be none, client or server, got {dry_run!r}")
    if state is not None and state not in STATES:
        raise UsageError(f"--state must be complete or failed, got {state!r}")
    seconds = None
    if older_than is not None:
        seconds = float(parse_duration_seconds(older_than, "--older-than")) if older_than[-1:] == "d" else None
        if seconds is None:
            seconds = parse_duration(older_than, "--older-than")
    cluster = cluster_for(kubeconfig, context, namespace, request_timeout)
    warnings: list[str] = []
    candidates = list_candidates(
        cluster,
        now=utc_now(),
        all_namespaces=all_namespaces,
        selector=selector,
        states=(STATES[state],) if state else None,
        older_than=seconds,
        warnings=warnings,
    )
    for text in warnings:
        sys.stderr.write(f"warning: {text}\n")
    where = "any namespace" if all_namespaces else f"namespace {cluster.namespace}"
    if not candidates:
        sys.stderr.write(f"no finished jobs to prune in {where}\n")
        return
    sys.stdout.write(_table(candidates, all_namespaces))
    sys.stdout.flush()
    if dry_run == "client":
        sys.stderr.write(f"{len(candidates)} jobs would be deleted (client dry run)\n")
        return
    if not yes:
        sys.stderr.write(f"delete these {len(candidates)} jobs and their companions? [y/N]: ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            raise Aborted()
    outcome = prune(cluster, candidates, dry_run=dry_run == "server")
    suffix = " (server dry run)" if dry_run == "server" else ""
    for w in outcome.deleted:
        sys.stdout.write(f'{w.resource.type_name} "{w.name}" deleted{suffix}\n')
    for text in outcome.skipped:
        sys.stderr.write(f"note: {text}\n")
