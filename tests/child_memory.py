"""Run a command in a fresh process and measure its own peak memory.

A child's `ru_maxrss` starts at the high-water mark of the process that spawned it: Linux carries
the spawner's RSS across fork/vfork + exec (`exec_mmap` records the old mm's high-water mark). A
command spawned straight from pytest, late in a full run, would report the test process's few
hundred MB. So a bare `python -S` (about 9 MiB) spawns the command, waits for it with `wait4` and
reports its rusage: the figure is the command's own (benchmarks/run.py measures the same way).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SPAWNER = """
import json, os, sys
argv, env, stderr, timeout = json.loads(sys.argv[1])
null = os.open(os.devnull, os.O_RDWR)
err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, err, 2)]
pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
import signal
signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))  # a hang fails the test, not the suite
signal.alarm(int(timeout))
_, status, usage = os.wait4(pid, 0)
sys.stdout.write(json.dumps([usage.ru_maxrss, os.waitstatus_to_exitcode(status)]))
"""


def run_measured(
    argv: list[str], stderr_file: Path, *, env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, str, float, float]:
    """(exit code, stderr, wall seconds, peak RSS in MiB) of `argv` run in a fresh process
    (stdin and stdout /dev/null); a run past `timeout` is killed."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-S", "-c", SPAWNER, json.dumps([argv, env or dict(os.environ), str(stderr_file), timeout])],
        capture_output=True,
        text=True,
        timeout=timeout + 30,
        check=True,
    )
    took = time.monotonic() - started
    peak_kib, code = json.loads(done.stdout)
    return int(code), stderr_file.read_text(errors="replace"), took, peak_kib / 1024
