"""A job's progress on the cluster: its TrainJob's `status.trainerStatus` (the Trainer controller's
TrainJobStatus feature), else the tail of its trainer's rank-0 log (`--target jobset`, or a
controller without the gate), read with `ktrain.progress`.

The log read is bounded: the last `LOG_LINES` lines, at most `LOG_READ_BYTES` of them
(`tailLines`, `limitBytes`: the server cuts it), read as a stream of which only the last 64 KiB are
kept (a tqdm bar redrawn with `\r` and no newline is one long line whose newest part is its end),
within a request timeout of its own; then the parser's own bounds. It costs one GET of one pod's
log, and only when there is no status to read.
"""

from __future__ import annotations

from ktrain.cluster import client as k
from ktrain.cluster.client import ACCEPT_LOG, open_get
from ktrain.cluster.kube import KubeCluster
from ktrain.cluster.transport import TransportError
from ktrain.errors import ApiError
from ktrain.progress.logs import MAX_TAIL_BYTES, from_log
from ktrain.progress.status import TrainerStatus, of_trainjob

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

LOG_TIMEOUT = 10.0
LOG_LINES = 200
LOG_READ_BYTES = 16 << 20
ANCESTOR_TRAINER = "trainer"


status_progress = of_trainjob  # what the TrainJob's status says (None: no trainerStatus)


def rank_zero(summary: Any) -> Any:
    """The trainer step's rank-0 pod that has run (a PodSummary), or None."""
    trainer_steps = {st.name for st in summary.steps if st.ancestor == ANCESTOR_TRAINER}
    ran = ("Running", "Succeeded", "Failed")
    candidates = [
        p
        for p in summary.pods
        if (p.step in trainer_steps or not trainer_steps) and p.rank in (0, None) and p.phase in ran
    ]
    return candidates[0] if candidates else None


def log_progress(cluster: KubeCluster, namespace: str, pod: str, container: str = "node") -> TrainerStatus | None:
    """What the tail of one pod's log shows (None: nothing, or the log cannot be read yet)."""
    query: dict[str, Any] = {"container": container, "tailLines": LOG_LINES, "limitBytes": LOG_READ_BYTES}
    try:
        response = cluster.call(
            open_get,
            cluster,
            k.POD.path(namespace, pod, "log"),
            query=query,
            accept=ACCEPT_LOG,
            what=f"logs of pod {pod}",
            _request_timeout=LOG_TIMEOUT,
        )
    except ApiError as exc:
        if exc.status in (400, 403, 404):  # not started, not allowed, gone: no progress to show
            return None
        raise
    tail = b""
    read = 0
    try:
        for chunk in response.chunks(MAX_TAIL_BYTES):
            tail = (tail + chunk)[-MAX_TAIL_BYTES:]
            read += len(chunk)
            if read >= LOG_READ_BYTES:  # a server that ignores limitBytes: stop here
                break
    except TransportError:
        return None
    finally:
        response.close()
    return from_log(tail)


def job_progress(
    cluster: KubeCluster | None, trainjob: dict[str, Any] | None, summary: Any, *, logs: bool = True
) -> TrainerStatus | None:
    """The job's progress: its status's, else (with `logs` and a cluster) its rank-0 log's."""
    found = status_progress(trainjob)
    if found is not None or not logs or cluster is None:
        return found
    pod = rank_zero(summary)
    if pod is None:
        return None
    return log_progress(cluster, summary.namespace, pod.name)
