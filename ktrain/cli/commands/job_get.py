"""`ktrain job get`: one job's state, conditions, replicated jobs, pods and warning events."""

from __future__ import annotations

import datetime as dt
import sys

from ktrain import constants as c
from ktrain.cli.common import cluster_for, dump_data, utc_now
from ktrain.cli.spec import CONTEXT, JOB_NAME, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the fast path a few ms to import
    from typing import Annotated, Any

GET_FORMATS = ("text", "yaml", "json")


def _why_waiting(summary: Any, explained: bool = False) -> list[str]:
    """Plain sentences for a job that is not running yet: the pods that hold it back (and, unless
    `Why:` says it already, the quick stall reason)."""
    from ktrain.jobs import state as status

    if summary.state == status.SUSPENDED and summary.stalled:
        return [] if explained else [summary.stalled]
    if summary.state != status.CREATED:
        return []
    lines = [f"{summary.trainer_pods_ready} of {summary.trainer_pods_expected} trainer pods are running"]
    for pod in summary.pods:
        if pod.phase not in ("Running", "Succeeded"):
            text = f"pod {pod.name} is {pod.phase}"
            if pod.reason:
                text += f": {pod.reason}" + (f" - {pod.message}" if pod.message else "")
            lines.append(text)
    if explained:
        pass  # `Why:` says what holds it
    elif summary.stalled and summary.stalled not in lines[1:]:
        lines.append(summary.stalled)
    elif not summary.pods:
        lines.append("no pods exist yet (see the warning events below, or the JobSet's controller)")
    return lines


def _code_digest(details: Any) -> str | None:
    """The digest of the files `--code` sent with the job (an annotation on the TrainJob or JobSet)."""
    for obj in (details.trainjob, details.jobset):
        value = ((obj or {}).get("metadata") or {}).get("annotations", {}).get(c.CODE_DIGEST_KEY)
        if value:
            return str(value)
    return None


def _event_object(event: dict[str, Any]) -> str:
    inv = event.get("involvedObject") or {}
    return f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"


def _section(title: str, header: list[str], rows: list[list[str]], empty: str = "<none>") -> list[str]:
    """A blank line, `Title:`, then an indented table (or `empty`)."""
    from ktrain.output.tables import plain_table

    body = plain_table(header, rows, indent="  ").rstrip("\n") if rows else f"  {empty}"
    return ["", f"{title}:", body]


def _restart_lines(details: Any) -> list[str]:
    """`Restarts:` against the budget (a JobSet with a failure policy, or one that restarted) and
    `Failure:`, the last failure: its Job, pod, exit code or condition, and the rule that fired."""
    from ktrain.jobs.restarts import failure_lines, restarts_text
    from ktrain.util.text import printable

    count = details.summary.restarts
    out = []
    if count is not None and (count.budget is not None or count.restarts):
        out.append("Restarts:   " + restarts_text(count))
    if details.failure is not None:
        lines = [printable(line) for line in failure_lines(details.failure, count)]
        out += ["Failure:    " + lines[0], *("            " + line for line in lines[1:])]
    return out


def _progress_section(details: Any, now: dt.datetime) -> list[str]:
    """`Progress:` (ktrain.progress.view.section): how far the run is, when the job has run."""
    from ktrain.jobs import state as status
    from ktrain.progress.view import section

    if details.progress is None and details.summary.state not in (status.RUNNING, status.COMPLETE):
        return []
    running = details.summary.state == status.RUNNING
    return ["", "Progress:", *("  " + line for line in section(details.progress, now.timestamp(), running=running))]


def format_details(details: Any, now: dt.datetime) -> str:
    from ktrain.jobs import state as status
    from ktrain.util.text import printable

    s = details.summary
    # The server's words go through printable() (control characters escaped, `\n` included, so
    # that no value can start a line of its own); plain_table does the same for the sections' cells.
    out = [
        f"Name:       {printable(s.name)}",
        f"Namespace:  {printable(s.namespace)}",
        f"Kind:       {s.kind}",
        f"Runtime:    {printable(s.runtime or '-')}",
        *(
            [f"Code:       {printable(code)} (--code: ConfigMaps labelled ktrain.io/code={printable(code)})"]
            if (code := _code_digest(details))
            else []
        ),
        f"Nodes:      {'-' if s.nodes is None else s.nodes}",
        f"State:      {s.state}"
        + (
            printable(f" ({s.reason}: {s.message})")
            if s.reason and s.message
            else printable(f" ({s.reason})")
            if s.reason and s.reason != s.state
            else ""
        ),
    ]
    verdict = details.verdict
    if verdict is not None:  # `job why`'s verdict under the state (its evidence is in the sections below)
        out.append("Why:        " + printable(f"{verdict.code}: {verdict.message}"))
        if verdict.next_step:
            out.append("Next:       " + printable(verdict.next_step))
        out += ["Not read:   " + printable(line) for line in verdict.unread]
    out += _restart_lines(details)
    out.append(f"Age:        {status.age(s.created, now)}")
    why = [printable(line) for line in _why_waiting(s, explained=verdict is not None)]
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
    out += _progress_section(details, now)
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


@command("job", "get", fast=True)
def show_job(
    name: Annotated[str, JOB_NAME],
    output: Annotated[str, Option("-o", "--output", help="text | yaml | json")] = "text",
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Show a job: state, why it is not running, conditions, replicated jobs, pods and its last warning events.

    `Why:` is the verdict of `ktrain job why`, for a job that is not running or complete. Each pod shows its step,
    rank, phase, node, restarts and why it waits.
    """
    if output not in GET_FORMATS:
        raise UsageError(f"unknown output format {output!r}: use " + ", ".join(GET_FORMATS))
    from ktrain.service.job_get import get_job

    details = get_job(cluster_for(kubeconfig, context, namespace, request_timeout), name, explain=True)
    now = utc_now()
    if output == "text":
        sys.stdout.write(format_details(details, now))
    else:
        from ktrain.jobs.views import details_document

        sys.stdout.write(dump_data(details_document(details), output))
