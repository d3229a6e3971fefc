"""`ktrain job list`: the training jobs of a namespace (or of all), from the cluster."""

from __future__ import annotations

import sys

from ktrain.cli.common import cluster_for, dump_data, utc_now, warn
from ktrain.cli.spec import CONTEXT, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Option, command
from ktrain.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the fast path a few ms to import
    from typing import Annotated

LIST_FORMATS = ("table", "wide", "yaml", "json", "name")


@command("job", "list", fast=True)
def list_jobs(
    all_namespaces: Annotated[bool, Option("-A", "--all-namespaces", help="Jobs of every namespace.")] = False,
    selector: Annotated[
        str | None, Option("-l", "--selector", help="Label selector, e.g. team=nlp,tier!=test.")
    ] = None,
    output: Annotated[str, Option("-o", "--output", help="table | wide | yaml | json | name")] = "table",
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """List training jobs: TrainJobs, and JobSets made from Trainer runtimes.

    RESTARTS is the JobSet's restarts against its budget (--max-restarts): 1/3; restarts that do not
    count (a preemption, with --restart-on-preemption) put the total in front: 2 (1/3).
    """
    if output not in LIST_FORMATS:
        raise UsageError(f"unknown output format {output!r}: use " + ", ".join(LIST_FORMATS))
    from ktrain.jobs import state as status
    from ktrain.jobs.restarts import restarts_cell
    from ktrain.service.job_list import list_jobs as list_training_jobs

    cluster = cluster_for(kubeconfig, context, namespace, request_timeout)
    notes: list[str] = []
    jobs = list_training_jobs(cluster, all_namespaces=all_namespaces, selector=selector, warnings=notes)
    for note in notes:
        warn(note)
    if output == "name":
        sys.stdout.write("".join(job.summary.resource_name + "\n" for job in jobs))
        return
    if output in ("yaml", "json"):
        items = [job.obj for job in jobs]
        sys.stdout.write(dump_data({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}}, output))
        return
    if not jobs:
        where = "any namespace" if all_namespaces else f"namespace {cluster.namespace}"
        sys.stderr.write(f"No training jobs found in {where}.\n")
        return
    from ktrain.progress import view as progress
    from ktrain.progress.status import of_trainjob

    headers = ["NAME", "RUNTIME", "NODES", "STATE", "AGE", *progress.LIST_HEADERS]
    if output == "wide":
        headers += ["KIND", "TRAINER PODS", "QUEUE", "PRIORITY", "REASON", *progress.WIDE_HEADERS]
    if all_namespaces:
        headers.insert(0, "NAMESPACE")
    now = utc_now()
    at = headers.index("AGE")  # RESTARTS where kubectl puts a pod's, before AGE
    headers.insert(at, "RESTARTS")
    rows = []
    for job in jobs:
        s, obj = job.summary, job.obj
        row = [s.name, s.runtime or "-", "-" if s.nodes is None else str(s.nodes), s.state, status.age(s.created, now)]
        trainer_status = of_trainjob(obj if s.kind == "TrainJob" else None)
        row += progress.list_cells(trainer_status)
        if output == "wide":
            queue, priority = status.queue_and_priority(obj)
            pods = f"{s.trainer_pods_ready}/{s.trainer_pods_expected}"
            row += [s.kind, pods, queue or "-", priority or "-", s.reason or "-", *progress.wide_cells(trainer_status)]
        if all_namespaces:
            row.insert(0, s.namespace)
        row.insert(at, restarts_cell(s.restarts))
        rows.append(row)
    from ktrain.output.tables import print_table

    print_table(headers, rows)
