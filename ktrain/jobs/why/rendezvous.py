"""`job why` for a running job: running, or stuck at the rendezvous (rank 0's last log lines say it
waits for its peers).
"""

from __future__ import annotations

from ktrain.jobs import state as js
from ktrain.jobs.why.facts import (
    LOG,
    LOG_LINES,
    RUNNING,
    Facts,
    Read,
    Verdict,
    ago_of,
    main_container,
    meta,
    need,
    pod_name,
    pod_where,
    sorted_pods,
    status_of,
)
from ktrain.jobs.why.pods import container_trouble

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt

    from ktrain.util.jsondata import Obj


RENDEZVOUS_WAIT = "RendezvousWait"


# Seconds rank 0 may sit at the rendezvous, all its peers running, before the job is called stuck.
RENDEZVOUS_GRACE = 60.0


# --- running ---
# torch: "[<role>] Rendezvous'ing worker group" (torch/distributed/elastic/agent/server/api.py), "Waiting
# in store based barrier to initialize process group" (torch/distributed/distributed_c10d.py), "The client
# socket has failed to connect to" (c10d socket.cpp), etcd rendezvous "Attempting to join next rendezvous".

_RENDEZVOUS_MARKS = (
    "Rendezvous'ing worker group",
    "Waiting in store based barrier",
    "socket has failed to connect",
    "Attempting to join next rendezvous",
    "Added self to waiting list",
    "Waiting for the rendezvous",
)


def _is_rendezvous(text: str) -> bool:
    return any(mark in text for mark in _RENDEZVOUS_MARKS)


def _is_banner(text: str) -> bool:
    """What torchrun prints around its start that is no progress: blank lines, rows of `*`, the
    OMP_NUM_THREADS notice (torch/distributed/run.py)."""
    stripped = text.strip()
    return (
        not stripped.strip("*") or "OMP_NUM_THREADS" in stripped or stripped.startswith("WARNING:torch.distributed.run")
    )


def rendezvous_wait(lines: list[tuple[str, str]], now: dt.datetime) -> float | None:
    """Seconds rank 0 has sat at the rendezvous: its log ends in rendezvous lines (torchrun's
    banner may follow them), and the first of those is that old. None when the log moved on."""
    marks = [i for i, (_, text) in enumerate(lines) if _is_rendezvous(text)]
    if not marks or not all(_is_banner(text) for _, text in lines[marks[-1] + 1 :]):
        return None
    first = marks[-1]
    while first > 0 and (first - 1) in marks:
        first -= 1
    since = js.parse_time(lines[first][0]) if lines[first][0] else None
    if since is None:
        return None
    return (now - since).total_seconds()


def _rank0(f: Facts) -> Obj | None:
    step = js.trainer_step(f.jobset)
    candidates = [p for p in f.pods or [] if js.pod_step(p) == step and (js.pod_rank(p) or 0) == 0]
    candidates = [p for p in candidates if status_of(p).get("phase") == "Running"] or candidates
    candidates.sort(key=lambda p: str(meta(p).get("creationTimestamp") or ""))
    return candidates[-1] if candidates else None


def running_of(f: Facts, now: dt.datetime) -> Verdict:
    # Running by ENGINE.md §10 (every trainer pod Running), yet a container may be crash-looping in it.
    for each in sorted_pods(f.pods or []):
        verdict = container_trouble(f, each, now)
        if verdict is not None:
            return verdict
    ready, want = js.trainer_pod_counts(f.trainjob, f.jobset, f.pods or [])
    pod = _rank0(f)
    sentence = f"job {f.name} is running ({ready} of {want} trainer pods)"
    if pod is None:
        return Verdict(RUNNING, sentence)
    container = main_container(pod)
    lines = need(f, Read(LOG, name=pod_name(pod), container=container))
    if not lines:
        return Verdict(RUNNING, sentence, [f"{pod_where(pod)}: no log lines yet"] if lines is not None else [])
    waited = rendezvous_wait(lines, now)
    tail = [f"  {text}" for _, text in lines[-LOG_LINES:]]
    if waited is not None and waited >= RENDEZVOUS_GRACE:
        return Verdict(
            RENDEZVOUS_WAIT,
            f"job {f.name} runs but is stuck: rank 0 has waited {ago_of(waited)} at the rendezvous for its peers",
            [f"last lines of {pod_where(pod)}:", *tail],
            "every rank must reach the same rendezvous: `ktrain job logs "
            f"{f.name} --all` shows which did not (a wrong MASTER_ADDR/port, a blocked port, a rank that died)",
        )
    last = js.parse_time(lines[-1][0]) if lines[-1][0] else None
    quiet = f", {ago_of((now - last).total_seconds())} ago" if last else ""
    return Verdict(RUNNING, sentence, [f"last line of {pod_where(pod)}{quiet}:", tail[-1]])
