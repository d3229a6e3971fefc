"""`ktrain.Client`: the cluster commands (`job create | list | get | logs | wait | delete`) as methods."""

from __future__ import annotations

import queue
import threading
import warnings
from collections.abc import Iterator
from typing import Any

from ktrain.errors import NotFoundError, UsageError
from ktrain.jobs.logs import LogOptions, LogSelection
from ktrain.jobs.views import details_document, why_document
from ktrain.python_api import arguments as a
from ktrain.service.cluster_runtimes import runtime_file_notes
from ktrain.service.connection import ConnectionOptions, check_name
from ktrain.service.job_delete import delete_job
from ktrain.service.job_get import get_job
from ktrain.service.job_list import list_jobs
from ktrain.service.job_logs import stream_logs
from ktrain.service.job_wait import wait_for_job
from ktrain.service.job_why import why_job
from ktrain.service.submit import TARGET_TRAINJOB, controller_runtime_note, objects_for_target, refuse_for_target
from ktrain.util.jsondata import Obj

WAIT_CONDITIONS = ("complete", "failed", "running")


class KtrainWarning(UserWarning):
    """What the CLI prints as `warning: ...` (a runtime the cluster does not have, a render
    warning), issued through `warnings.warn` by the Python API's submissions."""


def warn(messages: list[str], depth: int = 0) -> None:
    """Each message as a KtrainWarning at the line that called the Python API (`depth`: the
    frames between that call and the one calling this, beyond `Client`'s own)."""
    for message in messages:
        warnings.warn(message, KtrainWarning, stacklevel=4 + depth)


def job_name(value: object, arg: str = "name") -> str:
    """A job name, checked as the API server would before any request (InvalidNameError)."""
    return check_name(a.text(value, arg), "job")


class Client:
    """The cluster side: `create`, `list`, `get`, `logs`, `wait`, `delete`, as the CLI's commands
    (same connection rules: kubeconfig, context, namespace; same errors)."""

    def __init__(
        self,
        kubeconfig: object = None,
        context: object = None,
        namespace: object = None,
        request_timeout: object = 30.0,
    ) -> None:
        self.kubeconfig = None if kubeconfig is None else a.path(kubeconfig, "kubeconfig")
        self.context = a.optional_text(context, "context")
        self.namespace = a.optional_text(namespace, "namespace")
        if self.namespace is not None:
            from ktrain.service.connection import check_namespace

            check_namespace(self.namespace)
        self.request_timeout = a.number(request_timeout, "request_timeout", positive=True)
        self._cluster: Any = None

    def _options(self) -> Any:
        return ConnectionOptions(
            kubeconfig=self.kubeconfig,
            context=self.context,
            namespace=self.namespace,
            request_timeout=self.request_timeout,
        )

    def connect(self) -> Any:
        """The cluster connection (made on first use, then kept)."""
        if self._cluster is None:
            from ktrain.service.connection import connect

            self._cluster = connect(self._options())
        return self._cluster

    def _submit(self, request: Any, registry: Any, *, target: str = "jobset", depth: int = 0) -> str:
        """`ktrain job create --target TARGET`: render with the cluster's runtimes preferred, then
        apply with rollback (ktrain.service.job_create.create_job); returns the job's name."""
        from ktrain.service.job_create import create_job
        from ktrain.service.render import render_resolving

        refuse_for_target(request.overrides, target)
        cluster = self.connect()
        request.default_namespace = cluster.namespace
        outcome, notes = render_resolving(request, registry, self._options(), cluster=cluster)
        notes += runtime_file_notes(outcome.runtime, for_controller=target == TARGET_TRAINJOB)
        objects = objects_for_target(outcome, request, target)
        if target == TARGET_TRAINJOB:
            notes += [n for n in [controller_runtime_note(outcome)] if n]
        warn([*notes, *outcome.result.warnings], depth)
        job = outcome.job
        result = create_job(cluster, objects, name=job.name, namespace=job.namespace, target=target)
        warn(result.warnings, depth)
        return str(job.name)

    def create(self, job: object = None, **options: Any) -> str:
        """`ktrain job create` (target JobSet): returns the job's name. A job that names itself
        nowhere (no `metadata.name`, no `name=`) gets a fresh name per call. The keywords are
        `ktrain.render`'s."""
        from ktrain.python_api.request import prepare, unique_name

        request, registry = prepare(job, options, function="create")
        request.fallback_name = unique_name()
        return self._submit(request, registry)

    def list(self, *, selector: object = None) -> list[Obj]:
        """`ktrain job list -o json`: the objects that stand for the jobs (TrainJob, else JobSet)."""
        chosen = a.optional_text(selector, "selector")
        return [job.obj for job in list_jobs(self.connect(), selector=chosen)]

    def get(self, name: object) -> Obj:
        """`ktrain job get NAME -o json`: the job's state as ktrain derives it."""
        checked = job_name(name)
        return details_document(get_job(self.connect(), checked, explain=True))

    def why(self, name: object) -> Obj:
        """`ktrain job why NAME -o json`: why the job is (not) running; `running` says which."""
        return why_document(*why_job(self.connect(), job_name(name)))

    def logs(self, name: object, *, follow: object = False, step: object = None, node: object = None) -> Iterator[str]:
        """`ktrain job logs`: the log lines; with `follow`, streamed as the pods write them until
        the job ends (the reading runs in a thread; errors are raised here). The arguments are
        checked at the call, the cluster is read as the lines are."""
        checked = job_name(name)
        return self._lines(
            checked,
            follow=a.boolean(follow, "follow"),
            step=a.optional_text(step, "step"),
            node=a.optional_integer(node, "node"),
        )

    def _lines(self, name: str, *, follow: bool, step: str | None, node: int | None) -> Iterator[str]:
        cluster = self.connect()
        lines: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=10_000)

        def read() -> None:
            try:
                stream_logs(
                    cluster,
                    name,
                    LogSelection(step=step, rank=node),
                    LogOptions(follow=follow),
                    emit=lambda _pod, line: lines.put(("line", line)),
                    notice=lambda _text: None,
                )
                lines.put(("end", None))
            except BaseException as exc:  # handed to the reader below
                lines.put(("error", exc))

        thread = threading.Thread(target=read, name=f"ktrain-logs-{name}", daemon=True)
        thread.start()
        while True:
            kind, value = lines.get()
            if kind == "line":
                yield str(value)
            elif kind == "error":
                raise value
            else:
                return

    def wait(self, name: object, *, condition: object = "complete", timeout: object = None) -> str:
        """`ktrain job wait --for CONDITION`: returns the state reached; raises as the CLI exits
        (WaitTimeoutError on timeout, JobFailedError when the job ended otherwise)."""
        checked = job_name(name)
        wanted = a.text(condition, "condition")
        if wanted not in WAIT_CONDITIONS:
            raise UsageError(f"condition must be one of {', '.join(WAIT_CONDITIONS)}, not {a.shown(wanted)}")
        seconds = None if timeout is None else a.number(timeout, "timeout")
        return str(wait_for_job(self.connect(), checked, wanted, timeout=seconds).state)

    def delete(self, name: object) -> None:
        """`ktrain job delete NAME`: the job and every object it owns."""
        checked = job_name(name)
        cluster = self.connect()
        if not delete_job(cluster, checked, cluster.namespace):
            raise NotFoundError(f"job {checked} not found in namespace {cluster.namespace}")
