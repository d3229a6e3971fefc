"""Which pods and container `job logs` reads, and how a resumed stream skips what was shown.

Pure: pods as the API serves them in; the reads are `ktrain.cluster.reads`, the streaming
`ktrain.service.job_logs`.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import (
    KtrainError,
    NotFoundError,
    UsageError,
)
from ktrain.jobs import state as status
from ktrain.util.jsondata import Obj
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"


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


class LogLine:
    """Splits `<RFC3339 timestamp> <text>` lines as the API server sends them with timestamps=true."""

    __slots__ = ("stamp", "text")

    def __init__(self, raw: str) -> None:
        stamp, sep, text = raw.partition(" ")
        if sep and stamp[:4].isdigit() and "T" in stamp:
            self.stamp, self.text = stamp, text
        else:
            self.stamp, self.text = "", raw


def no_pod_error(name: str, pods: list[Obj], selection: LogSelection, step: str, state: str) -> KtrainError:
    if not pods:
        return KtrainError(
            f"job {name} has no pods yet (state {state})", hint=f"`ktrain job get {name}` shows why; -f waits for them"
        )
    have = sorted({f"{status.pod_step(p)} {status.pod_rank(p)}" for p in pods})
    return NotFoundError(
        f"job {name} has no pod for step {step} rank {selection.rank or 0} (pods: {', '.join(have)})",
        hint="pick one with --step and --node",
    )


class Cursor:
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
