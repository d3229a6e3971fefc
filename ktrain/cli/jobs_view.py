"""The bodies of `ktrain job list | get | logs | wait`, typer-free.

The typer commands (`ktrain.cli.job_observe`) and the fast path (`ktrain.cli.fastpath`) both
call these functions, so what they print cannot depend on which of them parsed argv. The
cluster code (`ktrain.cluster.observe`) and the kubernetes client are imported inside them.
"""

from __future__ import annotations

import datetime as dt
import sys

from ktrain.cli.common import parse_duration, warn
from ktrain.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the fast path a few ms to import
    from typing import Any

LIST_FORMATS = ("table", "wide", "yaml", "json", "name")
GET_FORMATS = ("text", "yaml", "json")
STEPS = ("dataset-initializer", "model-initializer", "launcher", "node")


def _cluster(kubeconfig: str | None, context: str | None, namespace: str | None, request_timeout: float) -> Any:
    from ktrain.cli.jobinput import connection
    from ktrain.cluster.kube import connect

    return connect(connection(kubeconfig, context, namespace, request_timeout))


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _dump(data: Any, output: str) -> str:
    if output == "json":
        import json

        return json.dumps(data, indent=4) + "\n"
    from ktrain.output.yamltext import dump

    return dump(data)


# --- list -----------------------------------------------------------------------------------------


def list_jobs(
    all_namespaces: bool = False,
    selector: str | None = None,
    output: str = "table",
    kubeconfig: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
    request_timeout: float = 30.0,
) -> None:
    """List training jobs: TrainJobs, and JobSets made from Trainer runtimes."""
    if output not in LIST_FORMATS:
        raise UsageError(f"unknown output format {output!r}: use " + ", ".join(LIST_FORMATS))
    from ktrain.cluster import job_state as status
    from ktrain.cluster import observe

    cluster = _cluster(kubeconfig, context, namespace, request_timeout)
    notes: list[str] = []
    jobs = observe.list_jobs(cluster, all_namespaces=all_namespaces, selector=selector, warnings=notes)
    for note in notes:
        warn(note)
    if output == "name":
        sys.stdout.write("".join(s.resource_name + "\n" for s, _ in jobs))
        return
    if output in ("yaml", "json"):
        items = [obj for _, obj in jobs]
        sys.stdout.write(_dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}}, output))
        return
    if not jobs:
        where = "any namespace" if all_namespaces else f"namespace {cluster.namespace}"
        sys.stderr.write(f"No training jobs found in {where}.\n")
        return
    headers = ["NAME", "RUNTIME", "NODES", "STATE", "AGE"]
    if output == "wide":
        headers += ["KIND", "TRAINER PODS", "REASON"]
    if all_namespaces:
        headers.insert(0, "NAMESPACE")
    now = _now()
    rows = []
    for s, _ in jobs:
        row = [s.name, s.runtime or "-", "-" if s.nodes is None else str(s.nodes), s.state, status.age(s.created, now)]
        if output == "wide":
            row += [s.kind, f"{s.trainer_pods_ready}/{s.trainer_pods_expected}", s.reason or "-"]
        if all_namespaces:
            row.insert(0, s.namespace)
        rows.append(row)
    from ktrain.output.tables import print_table

    print_table(headers, rows)


# --- get ------------------------------------------------------------------------------------------


def _details_document(details: Any, now: dt.datetime) -> dict[str, Any]:
    """`job get -o yaml|json`: the derived view, in a fixed key order."""
    s = details.summary
    return {
        "name": s.name,
        "namespace": s.namespace,
        "kind": s.kind,
        "runtime": s.runtime,
        "nodes": s.nodes,
        "state": s.state,
        "reason": s.reason,
        "message": s.message,
        "waiting": s.stalled,  # why a job that is not running is not getting there (issue #19)
        "trainerPods": {"ready": s.trainer_pods_ready, "expected": s.trainer_pods_expected},
        "conditions": s.conditions,
        "replicatedJobs": [
            {
                "name": st.name,
                "step": st.ancestor,
                "pods": st.pods,
                "ready": st.ready,
                "active": st.active,
                "succeeded": st.succeeded,
                "failed": st.failed,
                "suspended": st.suspended,
            }
            for st in s.steps
        ],
        "pods": [
            {
                "name": p.name,
                "step": p.step,
                "rank": p.rank,
                "phase": p.phase,
                "node": p.node,
                "restarts": p.restarts,
                "reason": p.reason,
                "message": p.message,
            }
            for p in s.pods
        ],
        "warnings": [
            {
                "object": f"{(e.get('involvedObject') or {}).get('kind')}/{(e.get('involvedObject') or {}).get('name')}",
                "reason": e.get("reason"),
                "message": e.get("message"),
                "count": e.get("count"),
                "lastTimestamp": e.get("lastTimestamp"),
            }
            for e in details.warnings
        ],
    }


def _why_waiting(summary: Any) -> list[str]:
    """Plain sentences for a job that is not running yet: the pods that hold it back."""
    from ktrain.cluster import job_state as status

    if summary.state == status.SUSPENDED and summary.stalled:
        return [summary.stalled]
    if summary.state != status.CREATED:
        return []
    lines = [f"{summary.trainer_pods_ready} of {summary.trainer_pods_expected} trainer pods are running"]
    for pod in summary.pods:
        if pod.phase not in ("Running", "Succeeded"):
            text = f"pod {pod.name} is {pod.phase}"
            if pod.reason:
                text += f": {pod.reason}" + (f" - {pod.message}" if pod.message else "")
            lines.append(text)
    if summary.stalled and summary.stalled not in lines[1:]:
        lines.append(summary.stalled)
    elif not summary.pods:
        lines.append("no pods exist yet (see the warning events below, or the JobSet's controller)")
    return lines


def _event_object(event: dict[str, Any]) -> str:
    inv = event.get("involvedObject") or {}
    return f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"


def _section(title: str, header: list[str], rows: list[list[str]], empty: str = "<none>") -> list[str]:
    """A blank line, `Title:`, then an indented table (or `empty`)."""
    from ktrain.output.tables import plain_table

    body = plain_table(header, rows, indent="  ").rstrip("\n") if rows else f"  {empty}"
    return ["", f"{title}:", body]


def format_details(details: Any, now: dt.datetime) -> str:
    from ktrain.cluster import job_state as status

    s = details.summary
    out = [
        f"Name:       {s.name}",
        f"Namespace:  {s.namespace}",
        f"Kind:       {s.kind}",
        f"Runtime:    {s.runtime or '-'}",
        f"Nodes:      {'-' if s.nodes is None else s.nodes}",
        f"State:      {s.state}"
        + (
            f" ({s.reason}: {s.message})"
            if s.reason and s.message
            else f" ({s.reason})"
            if s.reason and s.reason != s.state
            else ""
        ),
        f"Age:        {status.age(s.created, now)}",
    ]
    why = _why_waiting(s)
    if why:
        out.append("Waiting:    " + why[0])
        out += ["            " + line for line in why[1:]]
    conditions = [
        [
            str(cd.get("type", "")),
            str(cd.get("status", "")),
            str(cd.get("reason") or "-"),
            str(cd.get("message") or "-"),
            status.age(cd.get("lastTransitionTime"), now),
        ]
        for cd in s.conditions
    ]
    steps = [
        [st.name, st.ancestor or "-", str(st.pods), str(st.ready), str(st.active), str(st.succeeded), str(st.failed)]
        for st in s.steps
    ]
    pods = [
        [
            p.name,
            p.step,
            "-" if p.rank is None else str(p.rank),
            p.phase,
            p.node or "-",
            str(p.restarts),
            p.reason or "-",
        ]
        for p in s.pods
    ]
    warnings = [
        [
            status.age(e.get("lastTimestamp") or e.get("eventTime"), now),
            _event_object(e),
            str(e.get("reason") or ""),
            str(e.get("message") or "").replace("\n", " "),
        ]
        for e in details.warnings
    ]
    out += _section("Conditions", ["TYPE", "STATUS", "REASON", "MESSAGE", "AGE"], conditions)
    out += _section(
        "Replicated jobs",
        # PODS/JOB is the pods of each Job; the other counts are Jobs (JobSet's replicatedJobsStatus).
        ["NAME", "STEP", "PODS/JOB", "READY JOBS", "ACTIVE JOBS", "SUCCEEDED JOBS", "FAILED JOBS"],
        steps,
        empty="<none> (no JobSet yet)",
    )
    out += _section("Pods", ["NAME", "STEP", "RANK", "PHASE", "NODE", "RESTARTS", "REASON"], pods)
    out += _section("Warning events", ["AGE", "OBJECT", "REASON", "MESSAGE"], warnings)
    return "\n".join(out) + "\n"


def show_job(
    name: str,
    output: str = "text",
    kubeconfig: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
    request_timeout: float = 30.0,
) -> None:
    """Show a job: state, conditions, replicated jobs, pods and its last warning events."""
    if output not in GET_FORMATS:
        raise UsageError(f"unknown output format {output!r}: use " + ", ".join(GET_FORMATS))
    from ktrain.cluster.observe import get_job

    details = get_job(_cluster(kubeconfig, context, namespace, request_timeout), name)
    now = _now()
    if output == "text":
        sys.stdout.write(format_details(details, now))
    else:
        sys.stdout.write(_dump(_details_document(details, now), output))


# --- logs -----------------------------------------------------------------------------------------

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


def print_logs(
    name: str,
    node: int | None = None,
    step: str | None = None,
    all_pods: bool = False,
    follow: bool = False,
    tail: int | None = None,
    since: str | None = None,
    timestamps: bool = False,
    previous: bool = False,
    container: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
    request_timeout: float = 30.0,
) -> None:
    """Print a job's logs (default: rank 0 of the trainer step)."""
    if step is not None and step not in STEPS:
        raise UsageError(f"--step {step!r}: use one of " + ", ".join(STEPS))
    if all_pods and (node is not None or step is not None):
        raise UsageError("--all shows every pod; leave out --node and --step")
    if tail is not None and tail < 0:
        tail = None  # kubectl's -1: everything
    since_seconds = None
    if since is not None:
        since_seconds = max(1, int(parse_duration(since, "--since") + 0.999))
    from ktrain.cluster.observe import LogOptions, LogSelection, stream_logs

    printer = LogPrinter(prefixed=all_pods)
    stream_logs(
        _cluster(kubeconfig, context, namespace, request_timeout),
        name,
        LogSelection(step=step, rank=node, all_pods=all_pods, container=container),
        LogOptions(follow=follow, tail=tail, since_seconds=since_seconds, timestamps=timestamps, previous=previous),
        emit=printer.emit,
        notice=printer.notice,
    )


# --- wait -----------------------------------------------------------------------------------------


def stall_notice(reason: str) -> None:
    """While waiting: why the job is not moving (once per new reason), on stderr."""
    sys.stderr.write(f"waiting: {reason}\n")


def wait_job(
    name: str,
    for_: str = "complete",
    timeout: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
    request_timeout: float = 30.0,
) -> None:
    """Wait for a job to be complete, failed or running (exit 1 when it ended otherwise, 124 on timeout)."""
    from ktrain.cluster import job_state as status

    if for_ not in status.WAIT_TARGETS:
        raise UsageError(f"--for {for_!r}: use one of " + ", ".join(status.WAIT_TARGETS))
    seconds = None if timeout is None else parse_duration(timeout, "--timeout")
    from ktrain.cluster.observe import wait_for_job

    summary = wait_for_job(
        _cluster(kubeconfig, context, namespace, request_timeout), name, for_, timeout=seconds, on_stall=stall_notice
    )
    sys.stdout.write(f"{summary.resource_name} {summary.state.lower()}\n")
