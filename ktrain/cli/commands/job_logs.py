"""`ktrain job logs`: a job's logs, one pod's or every pod's, optionally followed."""

from __future__ import annotations

import sys

from ktrain.cli.common import cluster_for, parse_duration
from ktrain.cli.spec import CONTEXT, JOB_NAME, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated, Any

STEPS = ("dataset-initializer", "model-initializer", "launcher", "node")


_COLOURS = ("36", "33", "32", "35", "34", "31", "96", "93", "92", "95")


class LogPrinter:
    """Writes log lines; with --all, prefixed `[step-rank]` and coloured per pod on a terminal."""

    def __init__(self, prefixed: bool) -> None:
        self.prefixed = prefixed
        self.colour = prefixed and sys.stdout.isatty()
        self.assigned: dict[str, str] = {}

    def emit(self, pod: Any, line: str) -> None:
        if self.prefixed:
            tag = f"[{pod.step}-{pod.rank if pod.rank is not None else '?'}]"
            if self.colour:
                code = self.assigned.setdefault(pod.name, _COLOURS[len(self.assigned) % len(_COLOURS)])
                tag = f"\x1b[{code}m{tag}\x1b[0m"
            line = f"{tag} {line}"
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    @staticmethod
    def notice(text: str) -> None:
        sys.stderr.write(f"ktrain: {text}\n")
        sys.stderr.flush()


@command("job", "logs", fast=True)
def print_logs(
    name: Annotated[str, JOB_NAME],
    node: Annotated[
        int | None, Option("--node", help="Rank of the pod (of the node step unless --step).", min=0)
    ] = None,
    step: Annotated[
        str | None, Option("--step", help="dataset-initializer | model-initializer | launcher | node")
    ] = None,
    all_pods: Annotated[
        bool, Option("--all", help="Every pod of the job, each line prefixed with its step and rank.")
    ] = False,
    follow: Annotated[
        bool,
        Option("-f", "--follow", help="Stream, including pods that start or restart later, until the job ends."),
    ] = False,
    tail: Annotated[int | None, Option("--tail", help="Lines of recent log to show (per pod).")] = None,
    since: Annotated[str | None, Option("--since", help="Only lines newer than this, e.g. 5m.")] = None,
    timestamps: Annotated[bool, Option("--timestamps", help="Prefix each line with its timestamp.")] = False,
    previous: Annotated[bool, Option("-p", "--previous", help="The previous run of a restarted container.")] = False,
    container: Annotated[str | None, Option("-c", "--container", help="Container (default: the trainer's).")] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Print a job's logs (default: rank 0 of the trainer step).

    The trainer step is the `node` replicated job, or for MPI the `launcher`, where mpirun prints every rank's output.
    """
    if step is not None and step not in STEPS:
        raise UsageError(f"--step {step!r}: use one of " + ", ".join(STEPS))
    if all_pods and (node is not None or step is not None):
        raise UsageError("--all shows every pod; leave out --node and --step")
    if tail is not None and tail < 0:
        tail = None  # kubectl's -1: everything
    since_seconds = None
    if since is not None:
        since_seconds = max(1, int(parse_duration(since, "--since") + 0.999))
    from ktrain.jobs.logs import LogOptions, LogSelection
    from ktrain.service.job_logs import stream_logs

    printer = LogPrinter(prefixed=all_pods)
    stream_logs(
        cluster_for(kubeconfig, context, namespace, request_timeout),
        name,
        LogSelection(step=step, rank=node, all_pods=all_pods, container=container),
        LogOptions(follow=follow, tail=tail, since_seconds=since_seconds, timestamps=timestamps, previous=previous),
        emit=printer.emit,
        notice=printer.notice,
    )
