"""`ktrain job watch`: a live view of one job until it ends."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from ktrain.cli.common import cluster_for, parse_duration
from ktrain.cli.spec import CONTEXT, JOB_NAME, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

if TYPE_CHECKING:
    from typing import Annotated, Any

MIN_INTERVAL = 0.2


@command("job", "watch", fast=True)
def watch_job(
    name: Annotated[str, JOB_NAME],
    interval: Annotated[str, Option("--interval", help="Time between two looks, e.g. 2s, 1m.")] = "2s",
    timeout: Annotated[
        str | None, Option("--timeout", help="Give up after this long, e.g. 1h (default: until the job ends).")
    ] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Watch a job until it ends: its steps and pods by state, restarts, the progress bar and ETA,
    each numeric metric with a sparkline of its recent values, and while it does not run, why.

    Each look reads the TrainJob and JobSet and lists the job's pods once (and, when the TrainJob
    reports no progress, the tail of the trainer's rank-0 log). On a terminal the view is redrawn in
    place; elsewhere (a pipe, a CI log) one plain line is printed per change. NO_COLOR turns colour
    off. Exit codes as `ktrain job wait`: 0 when the job completed, 1 when it failed, 124 on
    --timeout.
    """
    seconds = parse_duration(interval, "--interval")
    if seconds < MIN_INTERVAL:
        raise UsageError(f"--interval must be at least {MIN_INTERVAL}s")
    deadline = None if timeout is None else time.monotonic() + parse_duration(timeout, "--timeout")
    from ktrain.errors import JobFailedError, WaitTimeoutError
    from ktrain.jobs import state as job_state
    from ktrain.progress.watch import MetricHistory, frame, plain_line
    from ktrain.service.job_watch import look, verdict

    cluster = cluster_for(kubeconfig, context, namespace, request_timeout)
    ns = namespace or cluster.namespace
    live = sys.stdout.isatty()
    colour = live and not os.environ.get("NO_COLOR")
    history = MetricHistory()
    last_plain: str | None = None
    verdict_key: Any = None
    why: tuple[str, str] | None = None
    while True:
        seen = look(cluster, name, ns)
        summary, progress = seen.summary, seen.progress
        history.add(progress)
        if summary.state in (job_state.CREATED, job_state.SUSPENDED):
            key = (summary.state, tuple((p.name, p.phase, p.reason) for p in summary.pods))
            if key != verdict_key:  # the diagnosis reads more: only when the job or its pods changed
                why, verdict_key = verdict(cluster, name, ns, seen), key
        else:
            why, verdict_key = None, None
        if live:
            lines = frame(summary, progress, history, time.time(), why)
            head = "\x1b[1m" + lines[0] + "\x1b[0m" if colour else lines[0]
            sys.stdout.write("\x1b[H\x1b[2J" + "\n".join([head, *lines[1:]]) + "\n")
            sys.stdout.flush()
        else:
            line = plain_line(summary, progress, why)
            if line != last_plain:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            last_plain = line
        if summary.state == job_state.COMPLETE:
            return
        if summary.state == job_state.FAILED:
            reason = ": ".join(p for p in (summary.reason, summary.message) if p)
            raise JobFailedError(f"job {name} failed" + (f" ({reason})" if reason else ""), summary=summary)
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeoutError(f"timed out watching job {name} (it is {summary.state})", summary=summary)
        time.sleep(seconds if deadline is None else max(0.0, min(seconds, deadline - time.monotonic())))
