"""The reads the job commands make: custom objects, a job's TrainJob and JobSet, its pods, the
namespace's events, a watch until something changes, a container's log.

Reads go to REST paths through `open_get`: the typed API classes cost far more to import than a
whole `job list` takes otherwise (see ktrain.cluster.client.open_get). Paths come from
`Resource.path`, which checks and encodes namespaces and names. Lists are read in pages
(`k.list_pages`); every answer is checked for the shape asked for before it is used. Everything
returns plain dicts as the API serves them: the job logic (`ktrain.jobs`) reads camelCase fields.
"""

from __future__ import annotations

import time

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster.client import ACCEPT_LOG, open_get
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster
from ktrain.cluster.names import check_name
from ktrain.cluster.transport import LIST_CHUNK, TransportError
from ktrain.errors import (
    ApiError,
    ClusterError,
    KtrainError,
    NotFoundError,
)
from ktrain.util.jsondata import Obj

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.jobs.logs import LogOptions


JOBSET = k.JOBSET
TRAINJOB = k.TRAINJOB


# Seconds between two looks at the job while waiting or following (tests lower it).
POLL_INTERVAL = 1.0


# --- reading objects ------------------------------------------------------------------------------


# Reads go to REST paths through `open_get`: the typed API classes cost far more to import than a
# whole `job list` takes otherwise (see ktrain.cluster.client.open_get). Paths come from
# `Resource.path`, which checks and encodes namespaces and names. Lists are read in pages
# (`k.list_pages`); every answer is checked for the shape asked for before it is used.


def list_custom(
    cluster: KubeCluster, resource: k.Resource, namespace: str | None, selector: str | None, *, chunk: int = LIST_CHUNK
) -> list[Obj]:
    """Every object of `resource` in `namespace` (None: all) matching `selector`, in pages of `chunk`."""
    what = f"{resource.plural}.{resource.group}" + (f" in {namespace}" if namespace is not None else "")
    items, _ = k.list_pages(
        cluster, resource.path(namespace), {"labelSelector": selector}, what=what, managed_fields=False, chunk=chunk
    )
    return items


def get_custom(cluster: KubeCluster, resource: k.Resource, namespace: str, name: str) -> Obj | None:
    """The object, or None when it (or its whole API) is not there."""
    path = resource.path(namespace, name)
    what = f"{resource.plural}.{resource.group} {namespace}/{name}"
    try:
        data = cluster.call(_get_json, cluster, path, what=what)
    except ApiNotFoundError:
        return None
    return k.object_or_error(cluster, data, resource.kind, what)


def _get_json(cluster: KubeCluster, path: str, *, _request_timeout: Any = None) -> Any:
    return k.read_json(open_get(cluster, path, _request_timeout=_request_timeout))


def list_pods_document(cluster: KubeCluster, namespace: str | None, selector: str, *, chunk: int = LIST_CHUNK) -> Obj:
    """The pods as one PodList (items, and metadata.resourceVersion to watch from)."""
    what = "pods" if namespace is None else f"pods in {namespace}"
    items, meta = k.list_pages(
        cluster, k.POD.path(namespace), {"labelSelector": selector}, what=what, managed_fields=False, chunk=chunk
    )
    return {"items": items, "metadata": meta}


def list_pods(cluster: KubeCluster, namespace: str | None, selector: str, *, chunk: int = LIST_CHUNK) -> list[Obj]:
    return list(list_pods_document(cluster, namespace, selector, chunk=chunk)["items"])


def list_warning_events(cluster: KubeCluster, namespace: str) -> list[Obj]:
    items, _ = k.list_pages(
        cluster,
        k.EVENT.path(namespace),
        {"fieldSelector": "type=Warning"},
        what=f"events in {namespace}",
        managed_fields=False,
    )
    return items


def list_events(cluster: KubeCluster, namespace: str) -> list[Obj]:
    """Every event in the namespace (the Python API's `get_job_events` picks a job's)."""
    items, _ = k.list_pages(cluster, k.EVENT.path(namespace), {}, what=f"events in {namespace}", managed_fields=False)
    return items


def find_job(cluster: KubeCluster, name: str, namespace: str | None = None) -> tuple[Obj | None, Obj | None]:
    """(TrainJob, JobSet) named `name`; NotFoundError when neither exists.

    A TrainJob's JobSet has the TrainJob's name."""
    ns = namespace or cluster.namespace
    check_name(name, "job")
    trainjob = get_custom(cluster, TRAINJOB, ns, name)
    jobset = get_custom(cluster, JOBSET, ns, name)
    if trainjob is None and jobset is None:
        raise job_not_found(name, ns)
    return trainjob, jobset


def find_jobset(cluster: KubeCluster, name: str, namespace: str | None = None) -> tuple[Obj | None, Obj | None]:
    """(TrainJob, JobSet) named `name`, the JobSet read first: when it is there the TrainJob is
    not read and comes back None (`job logs` picks its pods from the JobSet alone, as kubectl
    reads only the pod); NotFoundError when neither exists."""
    ns = namespace or cluster.namespace
    check_name(name, "job")
    jobset = get_custom(cluster, JOBSET, ns, name)
    if jobset is not None:
        return None, jobset
    trainjob = get_custom(cluster, TRAINJOB, ns, name)
    if trainjob is None:
        raise job_not_found(name, ns)
    return trainjob, None


def job_not_found(name: str, namespace: str) -> NotFoundError:
    return NotFoundError(
        f'job "{name}" not found in namespace {namespace} (no TrainJob or JobSet of that name)',
        hint="`ktrain job list` shows the jobs here; -n NAMESPACE or -A to look elsewhere",
    )


def job_pods(cluster: KubeCluster, name: str, namespace: str | None = None) -> list[Obj]:
    return list_pods(cluster, namespace or cluster.namespace, f"{c.JOBSET_NAME_LABEL}={name}")


def await_change(
    cluster: KubeCluster,
    resource: k.Resource | None,
    namespace: str,
    resource_version: str,
    selector: str | None,
    *,
    name: str,
    seconds: float,
) -> None:
    """Block until something changes after `resource_version` (pods matching `selector` when
    `resource` is None, else the custom object `name`), or `seconds` pass.

    Any failure of the watch just ends the wait early: the caller reads the job again."""
    if seconds < 1 or not resource_version:
        time.sleep(max(0.0, min(seconds, POLL_INTERVAL)))
        return
    query: dict[str, Any] = {"watch": True, "resourceVersion": resource_version, "timeoutSeconds": int(seconds)}
    timeout = (cluster.request_timeout, seconds + cluster.request_timeout)
    started = time.monotonic()
    try:
        if resource is None:
            response = cluster.call(
                open_get,
                cluster,
                k.POD.path(namespace),
                query={"labelSelector": selector, **query},
                what="a watch on pods",
                stream=True,
                _request_timeout=timeout,
            )
        else:
            response = cluster.call(
                open_get,
                cluster,
                resource.path(namespace),
                query={"fieldSelector": f"metadata.name={name}", **query},
                what=f"a watch on {resource.plural}",
                stream=True,
                _request_timeout=timeout,
            )
        try:
            for _ in iter_lines(response):
                break  # one event (a change, or an ERROR such as 410 Gone) is reason to look again
        finally:
            response.abort()  # the rest of the watch is not wanted: do not read it to reuse the connection
            response.close()
    except Exception:  # noqa: BLE001 - the caller re-reads the job; real errors surface there
        # Never spin: a failing watch waits like a poll would.
        time.sleep(max(0.0, min(POLL_INTERVAL, seconds) - (time.monotonic() - started)))


# A log line longer than this is passed on in pieces of this size: a container that prints
# without newlines must not make ktrain hold its whole output (kubelet itself splits at 16 KiB).
MAX_LOG_LINE = 1024 * 1024


def iter_lines(response: Any) -> Any:
    pending = b""
    for chunk in response.chunks(65536):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", "replace")
        while len(pending) > MAX_LOG_LINE:
            yield pending[:MAX_LOG_LINE].decode("utf-8", "replace")
            pending = pending[MAX_LOG_LINE:]
    if pending:
        yield pending.decode("utf-8", "replace")


def read_log(cluster: KubeCluster, pod: Obj, container: str, *, follow: bool, options: LogOptions, first: bool) -> Any:
    meta = pod.get("metadata") or {}
    query: dict[str, Any] = {"container": container, "timestamps": True}
    if follow:
        query["follow"] = True
    if options.previous:
        query["previous"] = True
    if first and options.tail is not None:
        query["tailLines"] = options.tail
    if first and options.since_seconds is not None:
        query["sinceSeconds"] = options.since_seconds
    path = k.POD.path(str(meta.get("namespace") or cluster.namespace), str(meta.get("name")), "log")
    try:
        return cluster.call(
            open_get,
            cluster,
            path,
            query=query,
            accept=ACCEPT_LOG,
            what=f"logs of pod {meta.get('name')}",
            stream=follow,
        )
    except ApiError as exc:
        if exc.status == 406:  # a server (or proxy) that negotiates otherwise than kube-apiserver
            raise ClusterError(
                f"the API server refused to send the logs of pod {meta.get('name')} in any media type ktrain "
                f"accepts (406 Not Acceptable, Accept: {ACCEPT_LOG}); the server says: {exc.message}",
                hint="a proxy in front of the API server may filter the Accept header; "
                "`kubectl logs` goes through the same path",
            ) from None
        if exc.status == 400:  # "waiting to start", "previous terminated container ... not found"
            hint = None
            if options.previous:
                hint = "--previous shows a restarted container's earlier run; this one has not restarted"
            from ktrain.jobs.logs import describe_pod

            raise KtrainError(f"{describe_pod(pod)}; the server says: {exc.message}", hint=hint) from None
        raise


LOG_TAIL_BYTES = 64 * 1024  # a diagnosis reads a few lines: a line of megabytes is cut


def log_tail(cluster: KubeCluster, namespace: str, pod: str, container: str, previous: bool) -> list[tuple[str, str]]:
    """The container's last lines as (RFC 3339 timestamp, text); [] when it has not started."""
    from ktrain.jobs.logs import LogLine
    from ktrain.jobs.why.facts import LOG_LINES

    query: dict[str, Any] = {"container": container, "timestamps": True, "tailLines": LOG_LINES}
    query["limitBytes"] = LOG_TAIL_BYTES
    if previous:
        query["previous"] = True
    try:
        response = cluster.call(
            open_get,
            cluster,
            k.POD.path(namespace, pod, "log"),
            query=query,
            accept=ACCEPT_LOG,
            what=f"logs of pod {pod}",
        )
    except ApiError as exc:
        if exc.status == 400:  # waiting to start / no previous run: nothing to show
            return []
        raise
    try:
        text = response.read().decode("utf-8", "replace")
    except TransportError as exc:
        raise cluster.translate(exc, f"logs of pod {pod}") from None
    finally:
        response.close()
    lines = []
    for raw in text.splitlines():
        line = LogLine(raw)
        lines.append((line.stamp, line.text))
    return lines
