"""`ktrain job why`: why a job is not running, in one sentence, with its evidence and the next step."""

from __future__ import annotations

import sys

from ktrain.cli.common import cluster_for, dump_data
from ktrain.cli.spec import CONTEXT, JOB_NAME, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated, Any

WHY_FORMATS = ("text", "yaml", "json")


def verdict_lines(verdict: Any) -> list[str]:
    """The verdict in text: `<Reason>: <sentence>`, the evidence indented, `next:`, `not read:`.
    Everything the server wrote is escaped (no control character reaches the terminal)."""
    from ktrain.util.text import printable

    lines = [printable(f"{verdict.code}: {verdict.message}")]
    lines += ["  " + printable(line) for line in verdict.evidence]
    if verdict.next_step:
        lines.append("next: " + printable(verdict.next_step))
    lines += ["not read: " + printable(line) for line in verdict.unread]
    return lines


@command("job", "why", fast=True)
def explain_job(
    name: Annotated[str, JOB_NAME],
    output: Annotated[str, Option("-o", "--output", help="text | yaml | json")] = "text",
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Say why a job is not running: one reason, its evidence and what to do next.

    Reads the TrainJob and/or JobSet, its pods, and as much more as the case needs: events, Jobs,
    nodes (allocatable, labels, taints), the PodGroup, the Kueue Workload and LocalQueue, the
    namespace's ResourceQuotas and PersistentVolumeClaims, the last log lines of a crashing or
    stuck container. A read the cluster refuses (RBAC) is skipped and listed under `not read`.
    Exit 0 when the job is running or has succeeded, 1 when it is not running (the reason on
    stdout), above 1 on errors (4: no such job, 5: the cluster).
    """
    if output not in WHY_FORMATS:
        raise UsageError(f"unknown output format {output!r}: use " + ", ".join(WHY_FORMATS))
    from ktrain.cli.guard import ExitStatus
    from ktrain.errors import ExitCode, KtrainError
    from ktrain.jobs.views import why_document
    from ktrain.service.job_why import diagnose_job, job_facts

    try:
        cluster = cluster_for(kubeconfig, context, namespace, request_timeout)
        facts = job_facts(cluster, name)
        verdict = diagnose_job(cluster, facts)
    except KtrainError as exc:
        if exc.exit_code <= ExitCode.ERROR:  # 1 means "not running" here: an error is never 1
            exc.exit_code = ExitCode.CLUSTER
        raise
    from ktrain.service.job_why import how_far

    progress = how_far(cluster, facts) if verdict.ok else None
    if output == "text":
        lines = verdict_lines(verdict)
        if progress is not None:  # a running job: how far it is
            from ktrain.progress.view import summary

            lines.append(f"progress: {summary(progress)}")
        sys.stdout.write("\n".join(lines) + "\n")
    else:
        document = why_document(facts, verdict)
        if progress is not None:
            document["progress"] = progress.to_dict()
        sys.stdout.write(dump_data(document, output))
    if not verdict.ok:
        raise ExitStatus(int(ExitCode.ERROR))
