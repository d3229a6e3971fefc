"""Reading training jobs from a cluster: list, get, logs, wait.

The state rules live in `ktrain.cluster.job_state` (pure); this module fetches the objects they need and
streams logs. Reusable entry points for other commands (e.g. `job create --wait/--follow`):

- `wait_for_job(cluster, name, target, timeout=...)` -> JobSummary, or raises
  `JobFailedError` / `WaitTimeoutError`;
- `stream_logs(cluster, name, selection, options, emit=..., notice=...)`.

Everything returns plain dicts as the API serves them (`_preload_content=False`): the status
module reads camelCase fields, and no client models are built.
"""

from __future__ import annotations

import time

from ktrain import constants as c
from ktrain.cluster import client as k
from ktrain.cluster import job_state as status
from ktrain.cluster.client import ACCEPT_LOG, open_get
from ktrain.cluster.kube import ApiNotFoundError, KubeCluster, server_shaped
from ktrain.cluster.names import check_name
from ktrain.cluster.transport import TransportError
from ktrain.errors import (
    ApiError,
    ClusterError,
    JobFailedError,
    KtrainError,
    NotFoundError,
    UsageError,
    WaitTimeoutError,
)
from ktrain.util.structs import field, struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    import threading
    from collections.abc import Callable
    from typing import Any

    Emit = Callable[[status.PodSummary, str], None]
    Notice = Callable[[str], None]

Obj = dict[str, "Any"]

JOBSET = k.JOBSET
TRAINJOB = k.TRAINJOB
DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"

# Seconds between two looks at the job while waiting or following (tests lower it).
POLL_INTERVAL = 1.0


# --- reading objects ------------------------------------------------------------------------------


# Reads go to REST paths through `open_get`: the typed API classes cost far more to import than a
# whole `job list` takes otherwise (see ktrain.cluster.client.open_get). Paths come from
# `Resource.path`, which checks and encodes namespaces and names. Lists are read in pages
# (`k.list_pages`); every answer is checked for the shape asked for before it is used.


def _list_custom(cluster: KubeCluster, resource: k.Resource, namespace: str | None, selector: str | None) -> list[Obj]:
    what = f"{resource.plural}.{resource.group}" + (f" in {namespace}" if namespace is not None else "")
    items, _ = k.list_pages(
        cluster, resource.path(namespace), {"labelSelector": selector}, what=what, managed_fields=False
    )
    return items


def _get_custom(cluster: KubeCluster, resource: k.Resource, namespace: str, name: str) -> Obj | None:
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


def _list_pods_document(cluster: KubeCluster, namespace: str | None, selector: str) -> Obj:
    """The pods as one PodList (items, and metadata.resourceVersion to watch from)."""
    what = "pods" if namespace is None else f"pods in {namespace}"
    items, meta = k.list_pages(
        cluster, k.POD.path(namespace), {"labelSelector": selector}, what=what, managed_fields=False
    )
    return {"items": items, "metadata": meta}


def list_pods(cluster: KubeCluster, namespace: str | None, selector: str) -> list[Obj]:
    return list(_list_pods_document(cluster, namespace, selector)["items"])


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


@server_shaped
def list_jobs(
    cluster: KubeCluster,
    *,
    all_namespaces: bool = False,
    selector: str | None = None,
    warnings: list[str] | None = None,
) -> list[tuple[status.JobSummary, Obj]]:
    """Every training job: (summary, the object that stands for it: TrainJob or JobSet).

    TrainJobs we may not list (403) leave the JobSets to show, with a note in `warnings`."""
    namespace = None if all_namespaces else cluster.namespace
    try:
        jobsets = _list_custom(cluster, JOBSET, namespace, selector)
    except ApiNotFoundError:
        raise ClusterError(
            "the cluster does not serve JobSets (jobsets.jobset.x-k8s.io)",
            hint="install JobSet: https://jobset.sigs.k8s.io/docs/installation/",
        ) from None
    try:
        trainjobs = _list_custom(cluster, TRAINJOB, namespace, selector)
    except ApiNotFoundError:  # no Trainer CRDs: ktrain-made JobSets only
        trainjobs = []
    except ApiError as exc:
        if exc.status != 403:
            raise
        trainjobs = []
        if warnings is not None:
            warnings.append(f"{exc.message}; showing JobSets only")
    pairs = status.pair_jobs(trainjobs, jobsets)
    if not pairs:
        return []
    pods = list_pods(cluster, namespace, c.JOBSET_NAME_LABEL)
    by_job: dict[tuple[str, str], list[Obj]] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str((meta.get("labels") or {}).get(c.JOBSET_NAME_LABEL)))
        by_job.setdefault(key, []).append(pod)
    out = []
    for trainjob, jobset in pairs:
        main = trainjob or jobset or {}
        meta = main.get("metadata") or {}
        job_pods = by_job.get((str(meta.get("namespace") or ""), str(meta.get("name") or "")), [])
        out.append((status.summarize(trainjob, jobset, job_pods), main))
    return out


def find_job(cluster: KubeCluster, name: str, namespace: str | None = None) -> tuple[Obj | None, Obj | None]:
    """(TrainJob, JobSet) named `name`; NotFoundError when neither exists.

    A TrainJob's JobSet has the TrainJob's name."""
    ns = namespace or cluster.namespace
    check_name(name, "job")
    trainjob = _get_custom(cluster, TRAINJOB, ns, name)
    jobset = _get_custom(cluster, JOBSET, ns, name)
    if trainjob is None and jobset is None:
        raise NotFoundError(
            f'job "{name}" not found in namespace {ns} (no TrainJob or JobSet of that name)',
            hint="`ktrain job list` shows the jobs here; -n NAMESPACE or -A to look elsewhere",
        )
    return trainjob, jobset


def job_pods(cluster: KubeCluster, name: str, namespace: str | None = None) -> list[Obj]:
    return list_pods(cluster, namespace or cluster.namespace, f"{c.JOBSET_NAME_LABEL}={name}")


@struct
class JobDetails:
    summary: status.JobSummary
    trainjob: Obj | None
    jobset: Obj | None
    warnings: list[Obj] = field(default_factory=list)
    # Why it is (not) running (ktrain.cluster.diagnosis.Verdict), when asked for (`job get`).
    verdict: Any = None
    progress: Any = None  # ktrain.progress.status.TrainerStatus: trainerStatus, else the rank-0 log's


def details_document(details: JobDetails) -> Obj:
    """`job get -o yaml|json` (and `ktrain.Client().get`): the derived view, in a fixed key order."""
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
        **({"why": _why_document(details.verdict)} if details.verdict is not None else {}),
        "progress": details.progress.to_dict() if details.progress is not None else None,
        "warnings": [
            {
                "object": "{}/{}".format(
                    (e.get("involvedObject") or {}).get("kind"), (e.get("involvedObject") or {}).get("name")
                ),
                "reason": e.get("reason"),
                "message": e.get("message"),
                "count": e.get("count"),
                "lastTimestamp": e.get("lastTimestamp"),
            }
            for e in details.warnings
        ],
    }


def why_document(facts: Any, verdict: Any) -> Obj:
    """`job why -o json|yaml` (and `ktrain.Client().why`): the job, its state, the verdict."""
    from ktrain.cluster.diagnosis import document

    state, _, _ = status.derive_state(facts.trainjob, facts.jobset, facts.pods or [])
    return {
        "name": facts.name,
        "namespace": facts.namespace,
        "state": state,
        "running": verdict.ok,
        **document(verdict),
    }


def _why_document(verdict: Any) -> Obj:
    from ktrain.cluster.diagnosis import document

    return {"running": verdict.ok, **document(verdict)}


@server_shaped
def get_job(
    cluster: KubeCluster, name: str, namespace: str | None = None, *, events: bool = True, explain: bool = False
) -> JobDetails:
    """The job, its pods and last warnings; with `explain`, the verdict of `job why` too (which
    reads more only when the job's state calls for it)."""
    ns = namespace or cluster.namespace
    trainjob, jobset = find_job(cluster, name, ns)
    pods = job_pods(cluster, name, ns)
    all_warnings = list_warning_events(cluster, ns) if events else None
    warnings = status.related_warnings(all_warnings, name) if all_warnings is not None else []
    verdict = None
    if explain:
        verdict = diagnose_job(
            cluster, job_facts(cluster, name, ns, known=(trainjob, jobset, pods), events=all_warnings)
        )
    from ktrain.cluster.progress_read import job_progress

    summary = status.summarize(trainjob, jobset, pods)
    progress = job_progress(cluster, trainjob, summary, logs=summary.state in (status.RUNNING, status.COMPLETE))
    return JobDetails(summary, trainjob, jobset, warnings, verdict, progress)


@server_shaped
def job_summary(cluster: KubeCluster, name: str, namespace: str | None = None) -> status.JobSummary:
    trainjob, jobset = find_job(cluster, name, namespace)
    return status.summarize(trainjob, jobset, job_pods(cluster, name, namespace))


# --- waiting --------------------------------------------------------------------------------------


@server_shaped
def wait_for_job(
    cluster: KubeCluster,
    name: str,
    target: str,
    *,
    timeout: float | None,
    namespace: str | None = None,
    on_change: Callable[[status.JobSummary], None] | None = None,
    on_stall: Callable[[str], None] | None = None,
    explain: bool = False,
    on_progress: Callable[[Any], None] | None = None,
) -> status.JobSummary:
    """Wait until the job reaches `target` (complete | failed | running, see status.WAIT_TARGETS).

    `on_stall` hears why a job that is not running is not getting there, each time that changes:
    the quick reason of `status.stall_reason`, or with `explain` the verdict of `job why`
    (`<Reason>: <sentence>`; the diagnosis reads more, and only when the job or its pods changed).

    Returns the summary that satisfied it. Raises JobFailedError (exit 1) when the job ended in
    another terminal state, WaitTimeoutError (exit 124) when `timeout` seconds pass first, and
    NotFoundError when the job does not exist or is deleted while waiting.

    Between two looks it watches what the target depends on (the job's pods for `running`, the
    TrainJob/JobSet for the terminal states), so it wakes on a change instead of polling."""
    if target not in status.WAIT_TARGETS:
        raise UsageError(f"--for {target!r}: use one of " + ", ".join(status.WAIT_TARGETS))
    ns = namespace or cluster.namespace
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    last_state = None
    last_stall = None
    explainer = _Explainer(cluster, name, ns) if explain and on_stall is not None else None
    while True:
        trainjob, jobset = find_job(cluster, name, ns)
        pod_list = _list_pods_document(cluster, ns, f"{c.JOBSET_NAME_LABEL}={name}")
        pods = list(pod_list.get("items") or [])
        summary = status.summarize(trainjob, jobset, pods)
        if on_progress is not None and summary.state == status.RUNNING:  # ktrain.cluster.progress_read
            from ktrain.cluster.progress_read import job_progress

            on_progress(job_progress(cluster, trainjob, summary))
        if summary.state != last_state and on_change is not None:
            on_change(summary)
        last_state = summary.state
        outcome = status.wait_outcome(summary, target)
        if outcome:
            return summary
        stall = summary.stalled
        if explainer is not None and outcome is None and summary.state in (status.CREATED, status.SUSPENDED):
            stall = explainer.reason(trainjob, jobset, pods) or stall
        if _stall_key(stall) != _stall_key(last_stall) and stall and on_stall is not None:
            on_stall(stall)
        last_stall = stall
        if trainjob is not None and jobset is None and _waited_for_controller(trainjob, started) >= CONTROLLER_GRACE:
            raise NoControllerError(
                status.NO_CONTROLLER.format(name=name),
                hint="`kubectl get deployments -A | grep trainer` shows whether it is installed",
            )
        if outcome is False:
            why = ": ".join(p for p in (summary.reason, summary.message) if p)
            raise JobFailedError(
                f"job {name} is {summary.state}, it will not become {status.WAIT_TARGETS[target]}"
                + (f" ({why})" if why else ""),
                summary=summary,
            )
        remaining = WATCH_SECONDS if deadline is None else deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeoutError(
                f"timed out after {_seconds(timeout or 0)} waiting for job {name} to be "
                f"{status.WAIT_TARGETS[target]} (it is {summary.state}" + (f": {last_stall})" if last_stall else ")"),
                summary=summary,
            )
        watched: tuple[k.Resource | None, str, str, str | None]
        if target == "running":
            watched = (
                None,
                ns,
                str((pod_list.get("metadata") or {}).get("resourceVersion") or ""),
                f"{c.JOBSET_NAME_LABEL}={name}",
            )
        else:
            main = trainjob or jobset or {}
            resource = TRAINJOB if trainjob else JOBSET
            watched = (resource, ns, str((main.get("metadata") or {}).get("resourceVersion") or ""), None)
        seconds = min(remaining, WATCH_SECONDS)
        if trainjob is not None and jobset is None:  # look again when the controller's grace ends
            seconds = min(seconds, max(0.5, CONTROLLER_GRACE - (time.monotonic() - started)))
        await_change(cluster, *watched, name=name, seconds=seconds)


def _stall_key(reason: str | None) -> str | None:
    """A stall reason without its numbers: "(12s so far)" becoming "(42s so far)" is no news."""
    return None if reason is None else "".join(ch for ch in reason if not ch.isdigit())


class _Explainer:
    """`job why`'s verdict while waiting: diagnosed again when the job or its pods changed (at most
    every EXPLAIN_MIN_SECONDS), or every EXPLAIN_SECONDS (the verdicts that depend on time: a
    scheduler or controller that never acts)."""

    def __init__(self, cluster: KubeCluster, name: str, namespace: str) -> None:
        self.cluster, self.name, self.namespace = cluster, name, namespace
        self.seen: tuple[Any, ...] | None = None
        self.when = 0.0
        self.said: str | None = None

    def reason(self, trainjob: Obj | None, jobset: Obj | None, pods: list[Obj]) -> str | None:
        versions = tuple(
            str(((o or {}).get("metadata") or {}).get("resourceVersion")) for o in (trainjob, jobset, *pods)
        )
        since = time.monotonic() - self.when
        if self.seen is not None and (
            since < EXPLAIN_MIN_SECONDS or (versions == self.seen and since < EXPLAIN_SECONDS)
        ):
            return self.said  # unchanged, or changing faster than a diagnosis is worth (pods starting)
        self.seen, self.when = versions, time.monotonic()
        facts = job_facts(self.cluster, self.name, self.namespace, known=(trainjob, jobset, pods))
        verdict = diagnose_job(self.cluster, facts)
        from ktrain.cluster.diagnosis import STARTING

        # A job that is starting normally is not held: nothing to say (as status.stall_reason).
        self.said = None if verdict.ok or verdict.code == STARTING else f"{verdict.code}: {verdict.message}"
        return self.said


# Seconds between two diagnoses of a job that does not change while `job wait` waits, and at least
# between two of a job that does (a hundred pods starting are a hundred changes).
EXPLAIN_SECONDS = 20.0
EXPLAIN_MIN_SECONDS = 5.0
# Longest single watch while waiting: the job is re-read at least this often.
WATCH_SECONDS = 60.0
# How long a TrainJob may go without a JobSet before the wait gives up on the Trainer controller.
CONTROLLER_GRACE = 60.0


class NoControllerError(ClusterError):
    """A TrainJob that no controller picks up: no JobSet is made for it."""


def _waited_for_controller(trainjob: Obj, started: float) -> float:
    """Seconds the TrainJob has gone without a JobSet: since this wait began, or since it was
    created when that is longer (an old TrainJob is not given the grace again)."""
    import datetime as dt

    waited = time.monotonic() - started
    created = status.parse_time((trainjob.get("metadata") or {}).get("creationTimestamp"))
    if created is not None:
        waited = max(waited, (dt.datetime.now(dt.timezone.utc) - created).total_seconds())
    return waited


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
            for _ in _iter_lines(response):
                break  # one event (a change, or an ERROR such as 410 Gone) is reason to look again
        finally:
            response.abort()  # the rest of the watch is not wanted: do not read it to reuse the connection
            response.close()
    except Exception:  # noqa: BLE001 - the caller re-reads the job; real errors surface there
        # Never spin: a failing watch waits like a poll would.
        time.sleep(max(0.0, min(POLL_INTERVAL, seconds) - (time.monotonic() - started)))


def _seconds(value: float) -> str:
    return f"{value:g}s"


# --- logs -----------------------------------------------------------------------------------------


@struct(frozen=True)
class LogSelection:
    """Which pods: by default the trainer step's rank 0 (see `default_step`)."""

    step: str | None = None  # replicated job: node, launcher, dataset-initializer, model-initializer
    rank: int | None = None  # --node N
    all_pods: bool = False
    container: str | None = None


@struct(frozen=True)
class LogOptions:
    follow: bool = False
    tail: int | None = None
    since_seconds: int | None = None
    timestamps: bool = False
    previous: bool = False


def default_step(jobset: Obj | None, selection: LogSelection) -> str:
    """`--step`, else `node` when a rank was asked for (`--node N` is a node rank), else the
    trainer step: `node`, or `launcher` for MPI, where mpirun prints every rank's output."""
    if selection.step:
        return selection.step
    if selection.rank is not None:
        return c.NODE
    return status.trainer_step(jobset)


def select_pods(pods: list[Obj], selection: LogSelection, step: str) -> list[Obj]:
    if selection.all_pods:
        chosen = pods
    else:
        rank = selection.rank or 0
        chosen = [p for p in pods if status.pod_step(p) == step and (status.pod_rank(p) or 0) == rank]
    return sorted(chosen, key=lambda p: status.pod_order(status.summarize_pod(p)))


def pick_container(pod: Obj, requested: str | None) -> str:
    spec = pod.get("spec") or {}
    names = [ct.get("name") for ct in spec.get("containers") or []]
    init_names = [ct.get("name") for ct in spec.get("initContainers") or []]
    pod_name = (pod.get("metadata") or {}).get("name")
    if requested:
        if requested not in names + init_names:
            raise UsageError(f"pod {pod_name} has no container {requested!r} (containers: {', '.join(names)})")
        return requested
    annotated = ((pod.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CONTAINER_ANNOTATION)
    if annotated in names:
        return str(annotated)
    step = status.pod_step(pod)
    for preferred in (c.NODE, step):
        if preferred in names:
            return str(preferred)
    if not names:
        raise KtrainError(f"pod {pod_name} has no containers")
    return str(names[0])


def container_status(pod: Obj, container: str) -> Obj:
    st = pod.get("status") or {}
    for cs in list(st.get("containerStatuses") or []) + list(st.get("initContainerStatuses") or []):
        if cs.get("name") == container:
            found: Obj = cs
            return found
    return {}


def has_started(pod: Obj, container: str) -> bool:
    """Whether the container has output to read (it runs or has run)."""
    cs = container_status(pod, container)
    state = cs.get("state") or {}
    return "running" in state or "terminated" in state or bool(cs.get("lastState", {}).get("terminated"))


def describe_pod(pod: Obj) -> str:
    s = status.summarize_pod(pod)
    where = f"{s.step} rank {s.rank}" if s.rank is not None else s.step
    text = f"pod {s.name} ({where}) is {s.phase}"
    if s.reason:
        text += f": {s.reason}"
        if s.message:
            text += f" - {s.message}"
    from ktrain.util.text import printable

    return printable(text)  # the server's words, printed: control characters escaped


class _LogLine:
    """Splits `<RFC3339 timestamp> <text>` lines as the API server sends them with timestamps=true."""

    __slots__ = ("stamp", "text")

    def __init__(self, raw: str) -> None:
        stamp, sep, text = raw.partition(" ")
        if sep and stamp[:4].isdigit() and "T" in stamp:
            self.stamp, self.text = stamp, text
        else:
            self.stamp, self.text = "", raw


# A log line longer than this is passed on in pieces of this size: a container that prints
# without newlines must not make ktrain hold its whole output (kubelet itself splits at 16 KiB).
MAX_LOG_LINE = 1024 * 1024


def _iter_lines(response: Any) -> Any:
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


def _read_log(cluster: KubeCluster, pod: Obj, container: str, *, follow: bool, options: LogOptions, first: bool) -> Any:
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
            raise KtrainError(f"{describe_pod(pod)}; the server says: {exc.message}", hint=hint) from None
        raise


def _emit_lines(cluster: KubeCluster, emit: Emit, pod: Obj, response: Any, timestamps: bool) -> None:
    summary = status.summarize_pod(pod)
    try:
        for raw in _iter_lines(response):
            line = _LogLine(raw)
            emit(summary, raw if timestamps else line.text)
    except TransportError as exc:  # the stream broke after it began
        raise cluster.translate(exc, f"logs of pod {(pod.get('metadata') or {}).get('name')}") from None
    finally:
        response.close()


@server_shaped
def stream_logs(
    cluster: KubeCluster,
    name: str,
    selection: LogSelection,
    options: LogOptions,
    *,
    emit: Emit,
    notice: Notice,
    namespace: str | None = None,
    poll: float | None = None,
) -> None:
    """Write the job's logs through `emit(pod, line)`; diagnostics through `notice(text)`.

    Without follow: the selected pods' logs so far; a pod that has not started is an error
    (single pod) or a notice (--all). With follow: every selected pod, including pods created or
    restarted later, until the job reaches Complete/Failed (or is deleted)."""
    ns = namespace or cluster.namespace
    trainjob, jobset = find_job(cluster, name, ns)
    step = default_step(jobset, selection)
    if options.follow and not options.previous:
        _Follower(
            cluster, name, ns, selection, options, step, emit, notice, POLL_INTERVAL if poll is None else poll
        ).run()
        return
    pods = job_pods(cluster, name, ns)
    chosen = select_pods(pods, selection, step)
    if not chosen:
        raise _no_pod_error(name, pods, selection, step, status.summarize(trainjob, jobset, pods).state)
    if not selection.all_pods:
        chosen = chosen[-1:]  # after a JobSet restart, the newest pod of that rank
    for pod in chosen:
        container = pick_container(pod, selection.container)
        if not options.previous and not has_started(pod, container):
            if selection.all_pods:
                notice(describe_pod(pod) + " (no logs yet)")
                continue
            raise KtrainError(
                describe_pod(pod) + "; it has no logs yet",
                hint=f"`ktrain job logs {name} -f` waits for it to start; `ktrain job get {name}` shows why it waits",
            )
        response = _read_log(cluster, pod, container, follow=False, options=options, first=True)
        _emit_lines(cluster, emit, pod, response, options.timestamps)


def _no_pod_error(name: str, pods: list[Obj], selection: LogSelection, step: str, state: str) -> KtrainError:
    if not pods:
        return KtrainError(
            f"job {name} has no pods yet (state {state})", hint=f"`ktrain job get {name}` shows why; -f waits for them"
        )
    have = sorted({f"{status.pod_step(p)} {status.pod_rank(p)}" for p in pods})
    return NotFoundError(
        f"job {name} has no pod for step {step} rank {selection.rank or 0} (pods: {', '.join(have)})",
        hint="pick one with --step and --node",
    )


class _Follower:
    """Follow the selected pods as they come and go, until the job ends.

    One supervising loop reads the job and its pods every `poll` seconds and publishes that
    snapshot; one thread per selected pod streams its log and consults the snapshots to see
    the container start, restart or end. Requests stay at three per poll, however many pods."""

    def __init__(
        self,
        cluster: KubeCluster,
        name: str,
        namespace: str,
        selection: LogSelection,
        options: LogOptions,
        step: str,
        emit: Emit,
        notice: Notice,
        poll: float,
    ) -> None:
        self.cluster, self.name, self.namespace = cluster, name, namespace
        self.selection, self.options, self.step, self.poll = selection, options, step, poll
        import threading  # only `-f` needs threads

        self.lock = threading.Lock()
        self._emit, self._notice = emit, notice
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.responses: set[Any] = set()
        self.threads: dict[str, threading.Thread] = {}
        self.changed = threading.Condition()
        self.generation = 0
        self.pods_now: dict[str, Obj] = {}
        self.final = False  # the last snapshot: the job has ended

    def emit(self, pod: status.PodSummary, line: str) -> None:
        with self.lock:
            self._emit(pod, line)

    def notice(self, text: str) -> None:
        with self.lock:
            self._notice(text)

    def run(self) -> None:
        announced_empty = False
        unsettled_looks = 0
        try:
            while not self.errors:
                try:
                    trainjob, jobset = find_job(self.cluster, self.name, self.namespace)
                except NotFoundError:
                    self.notice(f"job {self.name} was deleted")
                    return
                pods = job_pods(self.cluster, self.name, self.namespace)
                summary = status.summarize(trainjob, jobset, pods)
                if jobset is not None:  # a TrainJob's JobSet may appear later: it decides the step
                    self.step = default_step(jobset, self.selection)
                # Pods listed after a read that found no JobSet may belong to one created in between:
                # until it is seen the trainer step (launcher or node) is not known, so look once more.
                selection = self.selection
                step_known = jobset is not None or bool(selection.step) or selection.rank is not None
                settled = step_known or selection.all_pods or not pods or unsettled_looks > 0
                unsettled_looks += 0 if settled else 1
                chosen = select_pods(pods, self.selection, self.step) if settled else []
                self._publish(pods, final=summary.terminal)
                if not chosen and not self.threads and not announced_empty and not summary.terminal:
                    self.notice(f"waiting for the pods of job {self.name} (state {summary.state})")
                    announced_empty = True
                for pod in chosen:
                    pod_name = str((pod.get("metadata") or {}).get("name"))
                    if pod_name not in self.threads:
                        container = pick_container(pod, self.selection.container)
                        import threading

                        thread = threading.Thread(
                            target=self._guard, args=(pod_name, container), daemon=True, name=f"ktrain-logs-{pod_name}"
                        )
                        self.threads[pod_name] = thread
                        thread.start()
                if summary.terminal and settled:
                    self._drain()
                    if not chosen:
                        self.notice(f"job {self.name} is {summary.state}")
                    return
                self.stop.wait(self.poll)
        finally:
            self.stop.set()
            with self.changed:
                self.changed.notify_all()
            for response in list(self.responses):
                response.abort()  # a stream another thread reads: its read returns at once
        if self.errors:
            raise self.errors[0]

    def _publish(self, pods: list[Obj], *, final: bool) -> None:
        with self.changed:
            self.pods_now = {str((p.get("metadata") or {}).get("name")): p for p in pods}
            self.final = final
            self.generation += 1
            self.changed.notify_all()

    def _snapshot(self, pod_name: str, seen: int) -> tuple[Obj | None, int, bool]:
        """The pod as of the first snapshot newer than `seen` (None once it is gone)."""
        with self.changed:
            self.changed.wait_for(lambda: self.generation > seen or self.stop.is_set())
            return self.pods_now.get(pod_name), self.generation, self.final

    def _drain(self) -> None:
        """The job ended: let streams deliver their last lines, then stop the rest."""
        deadline = time.monotonic() + max(5 * self.poll, 2.0)
        for thread in self.threads.values():
            thread.join(max(0.0, deadline - time.monotonic()))

    def _guard(self, pod_name: str, container: str) -> None:
        try:
            self._follow_pod(pod_name, container)
        except BaseException as exc:  # noqa: BLE001 - handed to the supervising thread
            if not self.stop.is_set():
                self.errors.append(exc)

    def _follow_pod(self, pod_name: str, container: str) -> None:
        announced = False
        first = True
        streamed: int | None = None  # restartCount of a container streamed after it terminated
        cursor, cursor_restarts = _Cursor(), None
        generation = 0
        while not self.stop.is_set():
            pod, generation, final = self._snapshot(pod_name, generation)
            if pod is None or self.stop.is_set():
                return
            cs = container_status(pod, container)
            state = cs.get("state") or {}
            restarts = int(cs.get("restartCount") or 0)
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed") and (streamed == restarts or not has_started(pod, container)):
                return
            if "running" in state or ("terminated" in state and streamed != restarts):
                if cursor_restarts is not None and restarts != cursor_restarts:
                    self.notice(f"pod {pod_name}: container {container} restarted (restarts: {restarts})")
                    cursor = _Cursor()
                cursor_restarts = restarts
                self._stream(pod, container, cursor, first)
                first = False
                if "terminated" in state:
                    streamed = restarts
                if final:
                    return
                continue
            if final:
                return
            if not announced and not has_started(pod, container):
                self.notice(describe_pod(pod) + "; waiting for it to start")
                announced = True

    def _stream(self, pod: Obj, container: str, cursor: _Cursor, first: bool) -> None:
        response = _read_log(self.cluster, pod, container, follow=True, options=self.options, first=first)
        self.responses.add(response)
        summary = status.summarize_pod(pod)
        try:
            for raw in _iter_lines(response):
                line = _LogLine(raw)
                if cursor.fresh(line.stamp):
                    self.emit(summary, raw if self.options.timestamps else line.text)
        except Exception:  # noqa: BLE001 - a dropped stream is resumed by the caller unless stopping
            if self.stop.is_set():
                return
        finally:
            self.responses.discard(response)
            response.close()
            cursor.reconnected()


class _Cursor:
    """How far a container's log was printed, so a resumed stream skips what was shown.

    Lines carry the server's timestamps; several lines may share one."""

    def __init__(self) -> None:
        self.stamp = ""
        self.count = 0  # lines printed with `stamp`
        self.skip = 0  # lines with `stamp` still to skip after reconnecting

    def fresh(self, stamp: str) -> bool:
        if not stamp:
            return True
        if stamp < self.stamp:
            return False
        if stamp == self.stamp and self.skip > 0:
            self.skip -= 1
            return False
        if stamp == self.stamp:
            self.count += 1
        else:
            self.stamp, self.count = stamp, 1
        return True

    def reconnected(self) -> None:
        self.skip = self.count


# --- why a job is not running (issue #29) ---------------------------------------------------------
# The verdict is `ktrain.cluster.diagnosis.diagnose` (pure); here are its reads. It asks for one
# read at a time, only those its case needs, so a job is read as deep as its state requires. Every
# read but the job itself may fail (RBAC above all): the failure is recorded and the diagnosis
# goes on without it.

# At most this many reads beyond the job and its pods (there are eleven kinds; a log read twice at most).
MAX_READS = 12


def _optional(cluster: KubeCluster, resource: k.Resource, namespace: str, name: str, notes: list[str]) -> Obj | None:
    """GET an object the job may lack; None when absent, or refused (noted)."""
    try:
        return _get_custom(cluster, resource, namespace, name)
    except ApiError as exc:
        if exc.status != 403:
            raise
        notes.append(_refusal(exc))
        return None


def _refusal(exc: KtrainError) -> str:
    """What `unread` says about a refused read: the server's own words (they name the resource)."""
    return exc.message


@server_shaped
def job_facts(
    cluster: KubeCluster,
    name: str,
    namespace: str | None = None,
    *,
    known: tuple[Obj | None, Obj | None, list[Obj]] | None = None,
    events: list[Obj] | None = None,
) -> Any:
    """The job as `diagnose` starts from: its TrainJob and/or JobSet and its pods (`known` when the
    caller has read them). Either object may be unreadable (403) as long as the other one is read;
    pods we may not list are diagnosed without."""
    from ktrain.cluster import diagnosis as d

    ns = namespace or cluster.namespace
    notes: list[str] = []
    if known is not None:
        trainjob, jobset, pods = known
        facts = d.Facts(name, ns, trainjob, jobset, list(pods), notes=notes)
    else:
        check_name(name, "job")
        trainjob = _optional(cluster, TRAINJOB, ns, name, notes)
        jobset = _optional(cluster, JOBSET, ns, name, notes)
        if trainjob is None and jobset is None:
            if notes:
                raise ClusterError(
                    notes[0], hint="ask a cluster admin for read access (RBAC), or look in another namespace (-n)"
                )
            find_job(cluster, name, ns)  # raises the usual NotFoundError
        pods_read: list[Obj] | None
        try:
            pods_read = job_pods(cluster, name, ns)
        except ApiError as exc:
            if exc.status != 403:
                raise
            notes.append(_refusal(exc))
            pods_read = None
        facts = d.Facts(name, ns, trainjob, jobset, pods_read, notes=notes)
    if events is not None:
        facts.record(d.Read(d.EVENTS), events)
    return facts


@server_shaped
def diagnose_job(cluster: KubeCluster, facts: Any, now: Any = None) -> Any:
    """The verdict on the job `facts` hold (ktrain.cluster.diagnosis.Verdict), reading what it needs."""
    import datetime as dt

    from ktrain.cluster import diagnosis as d

    now = now or dt.datetime.now(dt.timezone.utc)
    for _ in range(MAX_READS + 1):
        verdict = d.diagnose(facts, now)
        if verdict.needs is None:
            return verdict
        _perform(cluster, facts, verdict.needs)
    return d.Verdict(
        d.UNKNOWN, f"job {facts.name}: no verdict after {MAX_READS} reads", unread=list(facts.unread.values())
    )


def _perform(cluster: KubeCluster, facts: Any, read: Any) -> None:
    """Carry out one read of the diagnosis; a refusal or an error is recorded, never raised."""
    try:
        facts.record(read, _read(cluster, facts, read))
    except ApiError as exc:
        facts.refuse(
            read, f"forbidden: {exc.message.partition(' is forbidden: ')[2]}" if exc.status == 403 else exc.message
        )
    except KtrainError as exc:  # the connection broke: say so, decide without it
        facts.refuse(read, exc.message)


def _list_all(cluster: KubeCluster, resources: tuple[k.Resource, ...], namespace: str) -> Any:
    """List the first of `resources` (one kind in several API versions) the cluster serves."""
    from ktrain.cluster import diagnosis as d

    for resource in resources:
        try:
            return k.list_objects(cluster, resource, namespace)
        except ApiNotFoundError:
            continue
    return d.NOT_SERVED


def _read(cluster: KubeCluster, facts: Any, read: Any) -> Any:
    from ktrain.cluster import diagnosis as d

    ns = facts.namespace
    if read.what == d.EVENTS:
        return list_warning_events(cluster, ns)
    if read.what == d.JOBS:
        return k.list_objects(cluster, k.BATCH_JOB, ns, label_selector=f"{c.JOBSET_NAME_LABEL}={facts.name}")
    if read.what == d.NODES:
        return k.list_objects(cluster, k.NODE)
    if read.what == d.NODE_PODS:
        # What the scheduler counts as taken: pods bound to a node that have not ended (any namespace).
        selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
        return k.list_objects(cluster, k.POD, all_namespaces=True, field_selector=selector)
    if read.what == d.QUOTAS:
        return k.list_objects(cluster, k.RESOURCE_QUOTA, ns)
    if read.what == d.CLAIMS:  # one list for every claim the pods mount
        return k.list_objects(cluster, k.PVC, ns)
    if read.what == d.WORKLOADS:
        return _list_all(cluster, k.KUEUE_WORKLOADS, ns)
    if read.what == d.LOCAL_QUEUE:
        for resource in k.KUEUE_LOCAL_QUEUES:
            found = _get_custom(cluster, resource, ns, read.name)
            if found is not None:
                return found
        return None
    if read.what == d.POD_GROUP:
        resource = k.COSCHEDULING_PODGROUP if read.api_version == c.COSCHEDULING_API_VERSION else k.VOLCANO_PODGROUP
        return _get_custom(cluster, resource, ns, read.name)
    if read.what == d.SERVED:
        return k.served_kinds(cluster, read.api_version) is not None
    if read.what == d.LOG:
        return _log_tail(cluster, ns, read.name, read.container, read.previous)
    raise ValueError(f"unknown read {read.what!r}")


LOG_TAIL_BYTES = 64 * 1024  # a diagnosis reads a few lines: a line of megabytes is cut


def _log_tail(cluster: KubeCluster, namespace: str, pod: str, container: str, previous: bool) -> list[tuple[str, str]]:
    """The container's last lines as (RFC 3339 timestamp, text); [] when it has not started."""
    from ktrain.cluster import diagnosis as d

    query: dict[str, Any] = {"container": container, "timestamps": True, "tailLines": d.LOG_LINES}
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
        line = _LogLine(raw)
        lines.append((line.stamp, line.text))
    return lines
