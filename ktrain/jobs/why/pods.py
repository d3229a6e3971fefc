"""`job why` for pods that fail or do not start: image pulls, crash loops (the last log lines), OOM
kills, container errors, a failed job's exits, a pod stuck starting (the kubelet's events). Reads:
the Warning events (`EVENTS`) and a container's last log lines (`LOG`).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.jobs import state as js
from ktrain.jobs.why.facts import (
    EVENTS,
    LOG,
    LOG_LINES,
    Facts,
    Read,
    Verdict,
    age_of,
    container_spec,
    container_statuses,
    event_line,
    events_about,
    need,
    plural,
    pod_name,
    pod_where,
    sorted_pods,
    spec_of,
    status_of,
)
from ktrain.jobs.why.nodes import amount, q_of
from ktrain.jobs.why.volumes import MULTI_ATTACH, multi_attach

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    import datetime as dt

    from ktrain.util.jsondata import Obj


FAILED = "Failed"


STARTING = "Starting"


IMAGE_PULL = "ImagePull"
CRASH_LOOP = "CrashLoopBackOff"
OOM_KILLED = "OOMKilled"
CONTAINER_ERROR = "ContainerError"
POD_FAILED = "PodFailed"


# --- ended ---


def failed_of(f: Facts, reason: str | None, message: str | None) -> Verdict:
    said = ": ".join(p for p in (reason, message) if p)
    evidence = []
    sentence = f"job {f.name} failed" + (f": {said}" if said else "")
    for pod in sorted_pods(f.pods or []):
        oom = _oom(pod)
        if oom is not None:
            text = _oom_text(pod, *oom)
            sentence = f"job {f.name} failed: {text}"
            evidence.append(f"{pod_where(pod)}: {text}")
            continue
        for cs in container_statuses(pod):
            term = (cs.get("state") or {}).get("terminated") or {}
            if term.get("exitCode") not in (None, 0):
                evidence.append(
                    f"{pod_where(pod)}: container {cs.get('name')} exited with code {term.get('exitCode')}"
                    + (f" ({term.get('reason')})" if term.get("reason") else "")
                )
    return Verdict(
        FAILED, sentence, evidence, f"`ktrain job logs {f.name}` shows its output; fix it and create the job again"
    )


# Seconds a pod bound to a node may take to start (pull, mount) before its events are read.
START_GRACE = 120.0
# The kubelet's Warning events for a pod that cannot start (pkg/kubelet/events/event.go): volumes
# (FailedMount, FailedAttachVolume) and the sandbox (FailedCreatePodSandBox).
_START_FAILURES = ("FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "FailedPostStartHook")


def stuck_starting(f: Facts, waiting: list[Obj], now: dt.datetime) -> Verdict | None:
    """A pod on a node that has not started its containers for minutes: the kubelet's last word."""
    late = [p for p in waiting if spec_of(p).get("nodeName") and age_of(p, now) >= START_GRACE]
    if not late:
        return None
    events = need(f, Read(EVENTS))
    for pod in late:
        said = [ev for ev in events_about(events, "Pod", {pod_name(pod)}) if ev.get("reason") in _START_FAILURES]
        attach = [ev for ev in said if str(ev.get("message") or "").startswith(MULTI_ATTACH)]
        if attach:
            return multi_attach(f, pod, attach[-1])
        if said:
            last = said[-1]
            return Verdict(
                CONTAINER_ERROR,
                f"{pod_where(pod)} cannot start on node {spec_of(pod).get('nodeName')}: "
                f"{last.get('reason')}: {last.get('message')}",
                [event_line(ev) for ev in said[-3:]],
                "the message names the volume, Secret or network the pod waits for",
            )
    return None


def waiting_reason(pod: Obj) -> str:
    for cs in container_statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            return f" ({waiting.get('reason')})"
    return ""


def initializer_running(f: Facts, pods: list[Obj]) -> Obj | None:
    for pod in pods:
        if js.pod_step(pod) in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER) and status_of(pod).get("phase") in (
            "Running",
            "Pending",
        ):
            return pod
    return None


# --- containers ---
# kubelet: ErrImagePull / ImagePullBackOff / InvalidImageName / ErrImageNeverPull
# (pkg/kubelet/images/types.go), the pull's error in the waiting message and in the "Failed" event
# `Failed to pull image "<image>": <error>` (pkg/kubelet/images/image_manager.go); CrashLoopBackOff
# (pkg/kubelet/container/sync_result.go, message "back-off <d> restarting failed container=..."
# from pkg/kubelet/kuberuntime/kuberuntime_manager.go); OOMKilled is the runtime's terminated reason.

_PULL = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
_CONTAINER_ERRORS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreStartHookError")


def _oom(pod: Obj, current: bool = False) -> tuple[str, Obj] | None:
    """(container, its terminated state) when a container of the pod was OOMKilled (now or in its
    last run); with `current`, only a container that is not running again since."""
    for cs in container_statuses(pod):
        if current and "running" in (cs.get("state") or {}):
            continue
        for state in (cs.get("state") or {}, cs.get("lastState") or {}):
            term = state.get("terminated") or {}
            if term.get("reason") == "OOMKilled":
                return str(cs.get("name")), term
    return None


def _oom_text(pod: Obj, container: str, term: Obj) -> str:
    limits = (container_spec(pod, container).get("resources") or {}).get("limits") or {}
    limit = q_of(limits.get("memory")) if limits.get("memory") is not None else None
    pod_limit = (((spec_of(pod).get("resources") or {}).get("limits")) or {}).get("memory")
    if limit is None and pod_limit is not None:
        limit = q_of(pod_limit)
    hit = f"its memory limit {amount('memory', limit)}" if limit is not None else "the node's memory (no limit set)"
    return f"container {container} was OOMKilled: it used more than {hit} (exit code {term.get('exitCode', 137)})"


def _log_tail(f: Facts, pod: Obj, container: str, previous: bool) -> list[str] | None:
    lines = need(f, Read(LOG, name=pod_name(pod), container=container, previous=previous))
    if lines is None:
        return None
    return [text for _, text in lines[-LOG_LINES:]]


def container_trouble(f: Facts, pod: Obj, now: dt.datetime) -> Verdict | None:
    oom = _oom(pod, current=True)
    if oom is not None:
        container, term = oom
        text = _oom_text(pod, container, term)
        return Verdict(
            OOM_KILLED,
            f"{pod_where(pod)}: {text}",
            [f"{pod_where(pod)}: {text}"],
            "ask for more memory (--memory, and a limit to match) or use less (smaller batches)",
        )
    for cs in container_statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        name = str(cs.get("name"))
        if reason in _PULL:
            return _image_verdict(f, pod, name, str(reason), str(waiting.get("message") or ""))
        if reason == "CrashLoopBackOff":
            last = (cs.get("lastState") or {}).get("terminated") or {}
            code = last.get("exitCode")
            lines = _log_tail(f, pod, name, previous=True)
            evidence = [f"{pod_where(pod)}: {waiting.get('message') or 'CrashLoopBackOff'}"]
            if lines:
                evidence.append(f"last lines of container {name} before it ended:")
                evidence += [f"  {line}" for line in lines]
            elif lines is not None:
                evidence.append(f"container {name} wrote nothing before it ended")
            return Verdict(
                CRASH_LOOP,
                f"container {name} of {pod_where(pod)} keeps crashing "
                f"({plural(int(cs.get('restartCount') or 0), 'restart')}"
                + (f", last exit code {code}" if code is not None else "")
                + ")",
                evidence,
                f"`ktrain job logs {f.name} --previous` shows the whole output of the last run",
            )
        if reason in _CONTAINER_ERRORS:
            return Verdict(
                CONTAINER_ERROR,
                f"container {name} of {pod_where(pod)} cannot start: {reason}: {waiting.get('message') or ''}".rstrip(
                    ": "
                ),
                [f"{pod_where(pod)}: {reason}: {waiting.get('message') or ''}"],
                "the message names what is missing (a Secret, a ConfigMap, a volume)",
            )
    if status_of(pod).get("phase") == "Failed":
        for cs in container_statuses(pod):
            term = (cs.get("state") or {}).get("terminated") or {}
            if term.get("exitCode") not in (None, 0):
                name = str(cs.get("name"))
                lines = _log_tail(f, pod, name, previous=False)
                evidence = [f"{pod_where(pod)}: container {name} exited with code {term.get('exitCode')}"]
                if lines:
                    evidence.append(f"last lines of container {name}:")
                    evidence += [f"  {line}" for line in lines]
                return Verdict(
                    POD_FAILED,
                    f"container {name} of {pod_where(pod)} failed with exit code {term.get('exitCode')}"
                    + (f" ({term.get('reason')})" if term.get("reason") not in (None, "Error") else ""),
                    evidence,
                    f"`ktrain job logs {f.name}` shows its output; the JobSet restarts it if its failure policy allows",
                )
    return None


def _image_verdict(f: Facts, pod: Obj, container: str, reason: str, message: str) -> Verdict:
    image = str(container_spec(pod, container).get("image") or "")
    # The registry's words: in the waiting message (ErrImagePull; since 1.33 ImagePullBackOff's
    # `Back-off pulling image "<image>": ErrImagePull: <error>` too), else in the last "Failed" event.
    words = (
        message.removeprefix(f'Back-off pulling image "{image}"').lstrip(": ").removeprefix("ErrImagePull").lstrip(": ")
    )
    pulls: list[Obj] = []
    if not words:
        events = need(f, Read(EVENTS))
        pulls = [
            ev
            for ev in events_about(events, "Pod", {pod_name(pod)})
            if str(ev.get("message") or "").startswith("Failed to pull image")
        ]
        if pulls:
            said = str(pulls[-1].get("message"))
            words = said.split(": ", 1)[1] if ": " in said else said
    evidence = [f"{pod_where(pod)}: container {container}: {reason}" + (f": {message}" if message else "")]
    evidence += [event_line(ev) for ev in pulls[-2:]]
    return Verdict(
        IMAGE_PULL,
        f"image {image} cannot be pulled" + (f": {words}" if words else f" ({reason})"),
        evidence,
        "check the image name and tag (--image), and that the registry lets the cluster pull it "
        "(a pull secret in the runtime's imagePullSecrets)",
    )
