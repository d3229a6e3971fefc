"""Every process a local pod starts, found and ended, as the kubelet ends a container's cgroup.

A container's process group is not enough: a command may leave a child in a session of its own
(`sh -c 'setsid sleep 77 & exit 0'`), which `killpg` misses and which keeps the pod's output pipe
open. So, on Linux:

- the runner becomes a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`) for the run: an orphan
  of a pod is re-parented to ktrain, never to init, so it cannot leave the tree;
- every container's processes carry a marker in their environment (`KTRAIN_LOCAL_PROCESS`,
  inherited through fork, setsid and exec), so an orphan is still known as that container's;
- a container's processes are then: those carrying its marker, those holding its output pipe
  (what would keep the run waiting), its process group and session, and every descendant of any
  of them. One that cleared its environment, closed its output and outlived its parent in a
  session of its own is the one a cgroup would catch and this does not.

Elsewhere (no /proc) a container is its process group, as before, and the run says only what it
could check. A pid is remembered with its start time, so a reused pid is never signalled.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MARKER = "KTRAIN_LOCAL_PROCESS"
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37
_PROC = "/proc"


def _prctl(option: int, value: int) -> int | None:
    """prctl(option, value) through libc, or None where there is none (not Linux)."""
    if not os.path.isdir(_PROC) or not hasattr(os, "sched_getaffinity"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if option == PR_GET_CHILD_SUBREAPER:
            out = ctypes.c_int(0)
            return 0 if libc.prctl(option, ctypes.byref(out), 0, 0, 0) != 0 else int(out.value)
        return int(libc.prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def _stat(pid: int) -> tuple[int, int, int, int, str] | None:
    """(ppid, pgid, sid, start time, state) of a live process, from /proc/PID/stat."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), fields[0]
    except (IndexError, ValueError):
        return None


def _marker(pid: int) -> str | None:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as fh:
            data = fh.read(1 << 20)
    except OSError:
        return None
    key = MARKER.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(key):
            return item[len(key) :].decode("ascii", "replace")
    return None


class Tracker:
    """The processes of a run's containers, each container known by its key."""

    def __init__(self) -> None:
        self.proc = os.path.isdir(_PROC)
        self.token = f"{os.getpid()}-{time.monotonic_ns()}"
        self.mains: dict[str, int] = {}  # key -> the container's main pid (its group and session)
        self.pipes: dict[str, str] = {}  # key -> "pipe:[inode]" of its output
        self.known: dict[str, dict[int, int]] = {}  # key -> {pid: start time}
        self.lock = threading.Lock()
        self._previous = _prctl(PR_GET_CHILD_SUBREAPER, 0)
        self.subreaper = self._previous is not None and _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0

    def close(self) -> None:
        if self.subreaper and not self._previous:
            _prctl(PR_SET_CHILD_SUBREAPER, 0)
        self.subreaper = False

    def env(self, key: str) -> dict[str, str]:
        return {MARKER: f"{self.token}/{key}"}

    def add(self, key: str, pid: int, output: int | None = None) -> None:
        """The container `key` runs as `pid`; `output`: the fd ktrain reads its output from."""
        with self.lock:
            self.mains[key] = pid
            if output is not None:
                self.pipes[key] = f"pipe:[{os.fstat(output).st_ino}]"
            self.known.setdefault(key, {})

    def members(self, key: str) -> dict[int, int]:
        """{pid: start time} of the container's live processes, its main process included."""
        with self.lock:
            main = self.mains.get(key)
            if main is None:
                return {}
            if not self.proc:
                return {main: 0}
            table: dict[int, tuple[int, int, int, int, str]] = {}
            for name in os.listdir(_PROC):
                if name.isdigit():
                    info = _stat(int(name))
                    if info is not None and info[4] not in ("Z", "X"):
                        table[int(name)] = info
            mark = f"{self.token}/{key}"
            found = {
                pid
                for pid, (_ppid, pgid, sid, start, _) in table.items()
                if pid == main or pgid == main or sid == main or self.known[key].get(pid) == start
            }
            pipe = self.pipes.get(key)
            found |= {pid for pid in table if pid not in found and (_marker(pid) == mark or _holds(pid, pipe))}
            children: dict[int, list[int]] = {}
            for pid, info in table.items():
                children.setdefault(info[0], []).append(pid)
            todo = list(found)
            while todo:  # and every descendant of them
                for child in children.get(todo.pop(), []):
                    if child not in found:
                        found.add(child)
                        todo.append(child)
            found.discard(os.getpid())
            members = {pid: table[pid][3] for pid in found}
            self.known[key].update(members)
            return members

    def signal(self, key: str, sig: int, *, skip: int | None = None) -> int:
        """Send `sig` to every process of the container (but `skip`); how many were signalled."""
        sent = 0
        main = self.mains.get(key)
        if main is not None and not self.proc:
            _killpg(main, sig)
            return 1
        for pid, start in self.members(key).items():
            if pid == skip or (self.proc and (_stat(pid) or (0, 0, 0, -1, ""))[3] != start):
                continue
            try:
                os.kill(pid, sig)
                sent += 1
            except (ProcessLookupError, PermissionError):
                pass
        self.reap()
        return sent

    def end(self, keys: Iterable[str], grace: float) -> list[int]:
        """SIGTERM to every process of `keys`, SIGKILL to what is left after `grace` seconds;
        the pids still alive after that (none, unless a process cannot be killed)."""
        keys = list(keys)
        for key in keys:
            self.signal(key, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(self.members(k) for k in keys):
            time.sleep(0.05)
            self.reap()
        for key in keys:
            self.signal(key, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        left = [pid for k in keys for pid in self.members(k)]
        while left and time.monotonic() < deadline:
            time.sleep(0.02)
            self.reap()
            left = [pid for k in keys for pid in self.members(k)]
        return left if self.proc else []

    def reap(self) -> None:
        """Collect the zombies of orphans re-parented to ktrain (never a container's main process:
        its Popen waits for it)."""
        with self.lock:
            mains = set(self.mains.values())
            pids = {pid for members in self.known.values() for pid in members} - mains
        for pid in pids:
            try:
                os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):
                pass


def _holds(pid: int, pipe: str | None) -> bool:
    if pipe is None or pid == os.getpid():
        return False
    try:
        fds = os.listdir(f"{_PROC}/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"{_PROC}/{pid}/fd/{fd}") == pipe:
                return True
        except OSError:
            continue
    return False


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
