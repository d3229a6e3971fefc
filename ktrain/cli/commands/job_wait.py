"""`ktrain job wait`: block until a job is complete, failed or running."""

from __future__ import annotations

import sys

from ktrain.cli.common import cluster_for, parse_duration, stall_notice
from ktrain.cli.spec import CONTEXT, JOB_NAME, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated


@command("job", "wait", fast=True)
def wait_job(
    name: Annotated[str, JOB_NAME],
    for_: Annotated[str, Option("--for", help="complete | failed | running")] = "complete",
    timeout: Annotated[
        str | None,
        Option("--timeout", help="Give up after this long, e.g. 10m (default: wait until the job ends)."),
    ] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Wait for a job to be complete, failed or running.

    Exit 0 when reached, 1 when the job ended otherwise (Failed while waiting for complete), 124 on timeout.
    `--for running` is also met by a Complete job (it ran, and may have finished between two looks),
    never by a Failed one (exit 1: it will not run); `--for failed` is not met by a Complete job (exit 1).
    While the job does not run, stderr says why (`waiting: <Reason>: ...`, the verdict of `ktrain job why`),
    again each time that changes.
    """
    from ktrain.jobs import state as status

    if for_ not in status.WAIT_TARGETS:
        raise UsageError(f"--for {for_!r}: use one of " + ", ".join(status.WAIT_TARGETS))
    seconds = None if timeout is None else parse_duration(timeout, "--timeout")
    from ktrain.cli.progress_display import ProgressDisplay
    from ktrain.service.job_wait import wait_for_job

    display = ProgressDisplay()
    try:
        summary = wait_for_job(
            cluster_for(kubeconfig, context, namespace, request_timeout),
            name,
            for_,
            timeout=seconds,
            on_stall=stall_notice,
            explain=True,
            on_progress=display.update,
        )
    finally:
        display.close()
    sys.stdout.write(f"{summary.resource_name} {summary.state.lower()}\n")
