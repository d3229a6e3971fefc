"""The language of `job why`: what a diagnosis reads (`Read`), what it has read (`Facts`), its
answer (`Verdict`), the codes every area shares, and the small helpers the areas use.

Pure: plain dicts as the API server serves them in; no client, clock or printing. An area module
(`ktrain.jobs.why.queues`, `scheduling`, `gangs`, `volumes`, `placement`, `pods`, `rendezvous`,
`controllers`) names its own reads beside its verdicts (`read_kind`); `ktrain.service.job_why`
performs them.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs import state as js
from ktrain.util.jsondata import Obj
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt
    from typing import Any


# --- verdict codes ----------------------------------------------------------------------------------
RUNNING = "Running"
SUCCEEDED = "Succeeded"
OK_CODES = (RUNNING, SUCCEEDED)
UNKNOWN = "Unknown"

# Seconds a controller may take before it is suspected (a TrainJob without a JobSet, a JobSet
# without Jobs, a Workload Kueue has not made), and a pod before its scheduler is.
CONTROLLER_GRACE = 30.0
SCHEDULER_GRACE = js.SCHEDULER_GRACE
LOG_LINES = 10  # log lines read (and shown) for a crash loop or a stuck rank 0

# --- what the diagnosis reads ----------------------------------------------------------------------
# Every read, by name: how `unread` describes it ({name}, {api_version}, {container} and {previous}
# are the read's). Each area names its reads with `read_kind`, beside the verdicts that ask for them;
# `ktrain.service.job_why.perform` performs them.
READ_KINDS: dict[str, str] = {}


def read_kind(what: str, description: str) -> str:
    """Name a read the diagnosis may ask for (`Read.what`), and how `unread` describes it."""
    READ_KINDS[what] = description
    return what


EVENTS = read_kind("events", "events")  # Warning events in the job's namespace
# Whether the cluster serves an API group/version (api_version).
SERVED = read_kind("served", "API discovery of {api_version}")
# The last lines of a container's log (name = pod, container, previous).
LOG = read_kind("log", "the {previous}log of pod {name} (container {container})")


# A read whose API the cluster does not serve (Kueue, Volcano not installed).
NOT_SERVED = "not served"


@struct(frozen=True)
class Read:
    """One more thing the diagnosis wants to see."""

    what: str  # one of READ_KINDS
    name: str = ""
    api_version: str = ""
    container: str = ""
    previous: bool = False

    @property
    def key(self) -> str:
        return "/".join((self.what, self.api_version, self.name, self.container, "previous" if self.previous else ""))

    def describe(self) -> str:
        """How `unread` names it: `nodes`, `Kueue LocalQueue gpu`, `the log of pod x (container node)`."""
        template = READ_KINDS.get(self.what, self.what)
        previous = "previous " if self.previous else ""
        return template.format(
            name=self.name, api_version=self.api_version, container=self.container, previous=previous
        )


@struct
class Facts:
    """What was read about one job. `values` and `unread` are keyed by `Read.key`; a read in
    neither has not been tried. `pods` is None when the pods could not be read."""

    name: str
    namespace: str
    trainjob: Obj | None
    jobset: Obj | None
    pods: list[Obj] | None
    values: dict[str, Any] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)  # key -> "nodes: forbidden (...)"
    notes: list[str] = field(default_factory=list)  # base reads that failed (TrainJob, pods)

    def record(self, read: Read, value: Any) -> None:
        self.values[read.key] = value

    def refuse(self, read: Read, why: str) -> None:
        self.unread[read.key] = f"{read.describe()}: {why}"


@struct(frozen=True)
class Verdict:
    """The answer: a reason code, one sentence, the evidence, the next step."""

    code: str
    message: str
    evidence: list[str] = field(default_factory=list)
    next_step: str | None = None
    unread: list[str] = field(default_factory=list)  # what could not be read (RBAC, errors)
    needs: Read | None = None  # set: not decided yet, read this and ask again

    @property
    def ok(self) -> bool:
        """Running or succeeded: `job why` exits 0."""
        return self.code in OK_CODES


class Missing(Exception):
    def __init__(self, read: Read) -> None:
        super().__init__(read.key)
        self.read = read


def need(facts: Facts, read: Read) -> Any:
    """The value read, None when it could not be read; not read yet: ask for it."""
    if read.key in facts.values:
        return facts.values[read.key]
    if read.key in facts.unread:
        return None
    raise Missing(read)


def document(verdict: Verdict) -> Obj:
    """The verdict as `-o json|yaml` shows it (key order fixed)."""
    return {
        "reason": verdict.code,
        "message": verdict.message,
        "evidence": list(verdict.evidence),
        "next": verdict.next_step,
        "unread": list(verdict.unread),
    }


# --- small helpers ------------------------------------------------------------------------------------


def meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def spec_of(obj: Obj | None) -> Obj:
    return (obj or {}).get("spec") or {}


def status_of(obj: Obj | None) -> Obj:
    return (obj or {}).get("status") or {}


def age_of(obj: Obj | None, now: dt.datetime) -> float:
    created = js.parse_time(meta(obj).get("creationTimestamp"))
    return (now - created).total_seconds() if created else 0.0


def ago_of(seconds: float) -> str:
    return js.short_duration(seconds)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def condition_of(obj: Obj | None, kind: str) -> Obj | None:
    for cond in status_of(obj).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def event_time(ev: Obj) -> str:
    return str(
        ev.get("lastTimestamp") or ev.get("eventTime") or ev.get("firstTimestamp") or meta(ev).get("creationTimestamp")
    )


def events_about(events: list[Obj] | None, kind: str, names: set[str]) -> list[Obj]:
    """Warning events about objects of `kind` named in `names`, oldest first."""
    found = [
        ev
        for ev in events or []
        if (ev.get("involvedObject") or {}).get("kind") == kind
        and (ev.get("involvedObject") or {}).get("name") in names
    ]
    found.sort(key=event_time)
    return found


def event_line(ev: Obj) -> str:
    inv = ev.get("involvedObject") or {}
    count = int(ev.get("count") or 1)
    times = f" (×{count})" if count > 1 else ""
    return f"event on {inv.get('kind')} {inv.get('name')}: {ev.get('reason')}{times}: {ev.get('message') or ''}"


def pod_name(pod: Obj) -> str:
    return str(meta(pod).get("name") or "")


def pod_where(pod: Obj) -> str:
    """`pod x (node rank 1)`."""
    step, rank = js.pod_step(pod), js.pod_rank(pod)
    where = f"{step} rank {rank}" if rank is not None else step
    return f"pod {pod_name(pod)} ({where})"


def sorted_pods(pods: list[Obj]) -> list[Obj]:
    return sorted(pods, key=lambda p: js.pod_order(js.summarize_pod(p)))


def container_statuses(pod: Obj) -> list[Obj]:
    status = status_of(pod)
    return [
        cs
        for cs in list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
        if isinstance(cs, dict)
    ]


def container_spec(pod: Obj, name: str) -> Obj:
    spec = spec_of(pod)
    for ct in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        if isinstance(ct, dict) and ct.get("name") == name:
            return ct
    return {}


def main_container(pod: Obj) -> str:
    """The container whose log is the training's: kubectl's default-container annotation, else
    `node` (or `launcher`), else the first."""
    names = [str(ct.get("name")) for ct in spec_of(pod).get("containers") or [] if isinstance(ct, dict)]
    preferred = (meta(pod).get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    for name in (preferred, c.NODE, c.LAUNCHER):
        if name in names:
            return str(name)
    return names[0] if names else c.NODE
