"""`ktrain.local.processes`: every process a local pod starts is ended with it (issue #37): children
in a session of their own (`setsid`), double forks, orphans, and what is left when ktrain is sent
SIGTERM. The `Tracker` directly, then through a run. Real processes, each test bounded to a few
seconds; the sleepers carry a unique number so that a survivor is found by name in /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktrain.local.plan import PlanOptions, plan_run
from ktrain.local.processes import MARKER, Tracker
from ktrain.local.run import free_port
from ktrain.local.runner import Runner, write_files

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc") or sys.platform != "linux", reason="Linux /proc")


def _jobset(script: str) -> dict:
    container = {"name": "c", "command": ["sh", "-c", script]}
    job = {"parallelism": 1, "completions": 1, "template": {"spec": {"containers": [container]}}}
    return {
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": job}}]},
    }


def _alive(tag: str) -> list[int]:
    """Live (not zombie) `sleep TAG` processes."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if b"sleep\0" + tag.encode() + b"\0" in cmdline and state != "Z":
            found.append(int(name))
    return found


def _sleeper() -> tuple[str, str]:
    """A `sleep` whose argument is unique: (the tag to look for, the command)."""
    seconds = f"77.{uuid.uuid4().int % 10**9:09d}"
    return seconds, f"sleep {seconds}"


def _run(tmp_path: Path, script: str, **runner):
    plan = plan_run([_jobset(script)], PlanOptions(run_dir=str(tmp_path), alloc_port=free_port, python=sys.executable))
    write_files(plan)
    out = __import__("io").StringIO()
    start = time.monotonic()
    result = Runner(plan, base_env=dict(os.environ), out=out, grace=1, **runner).run()
    return result, out.getvalue(), time.monotonic() - start


def _start(tracker: Tracker, key: str, script: str, *, pipe: bool = False) -> subprocess.Popen[bytes]:
    """A container's main process as the runner starts it: its own session, the tracker's marker."""
    env = {**os.environ, **tracker.env(key)}
    out = subprocess.PIPE if pipe else subprocess.DEVNULL
    proc = subprocess.Popen(["sh", "-c", script], env=env, stdout=out, start_new_session=True)
    tracker.add(key, proc.pid, proc.stdout.fileno() if proc.stdout else None)
    return proc


def _wait_for(tag: str, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(_alive(tag)) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(_alive(tag)) == count


def _kill(*tags: str) -> None:
    """What a failed test leaves behind."""
    for tag in tags:
        for pid in _alive(tag):
            os.kill(pid, signal.SIGKILL)


def test_the_marker_names_the_run_and_the_container() -> None:
    tracker = Tracker()
    try:
        assert tracker.env("w-0") == {MARKER: f"{tracker.token}/w-0"}
        assert tracker.env("w-0") != Tracker().env("w-0")  # another run's processes are not this one's
    finally:
        tracker.close()


def test_a_container_not_started_has_no_members_and_nothing_is_signalled() -> None:
    tracker = Tracker()
    try:
        assert tracker.members("never") == {}
        assert tracker.signal("never", signal.SIGTERM) == 0
        assert tracker.end(["never"], grace=0.1) == []
    finally:
        tracker.close()


def test_members_are_the_main_process_and_its_detached_child_and_end_leaves_none() -> None:
    tag, sleep = _sleeper()
    tracker = Tracker()
    proc = _start(tracker, "w-0", f"setsid {sleep} & {sleep}")
    try:
        _wait_for(tag, 2)
        members = tracker.members("w-0")
        assert proc.pid in members
        assert set(_alive(tag)) <= set(members)  # the setsid child too: it carries the marker
        assert tracker.end(["w-0"], grace=1) == []
        proc.wait(timeout=5)
        assert _alive(tag) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill(tag)
        tracker.close()


def test_an_orphan_that_cleared_its_environment_is_known_by_the_output_pipe_it_holds() -> None:
    tag, sleep = _sleeper()
    tracker = Tracker()
    # the grandchild leaves the session and the environment, but keeps the container's stdout
    proc = _start(tracker, "w-0", f"(setsid env -i /bin/sh -c '{sleep}' &); exec sleep 30", pipe=True)
    try:
        _wait_for(tag, 1)
        assert set(_alive(tag)) <= set(tracker.members("w-0"))
        assert tracker.end(["w-0"], grace=1) == []
        assert _alive(tag) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=5)
        assert proc.stdout is not None
        proc.stdout.close()
        _kill(tag)
        tracker.close()


def test_a_process_of_another_container_is_left_alone() -> None:
    mine, other = _sleeper(), _sleeper()
    tracker = Tracker()
    first = _start(tracker, "a-0", mine[1])
    second = _start(tracker, "b-0", other[1])
    try:
        _wait_for(mine[0], 1)
        _wait_for(other[0], 1)
        assert not set(tracker.members("a-0")) & set(tracker.members("b-0"))
        assert tracker.end(["a-0"], grace=1) == []
        assert _alive(mine[0]) == [] and len(_alive(other[0])) == 1
    finally:
        tracker.end(["a-0", "b-0"], grace=0.5)
        for proc in (first, second):
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=5)
        _kill(mine[0], other[0])
        tracker.close()


def test_a_detached_child_does_not_hold_the_run_and_is_ended(tmp_path: Path) -> None:
    tag, sleep = _sleeper()
    result, out, took = _run(tmp_path, f"setsid {sleep} & echo started; exit 0")
    assert result.exit_code == 0 and "started" in out
    assert took < 10
    assert _alive(tag) == []


def test_a_double_forked_orphan_that_cleared_its_environment_is_ended_too(tmp_path: Path) -> None:
    tag, sleep = _sleeper()
    # the grandchild outlives its parent at once, in a new session, with an empty environment
    script = f"(setsid env -i /bin/sh -c '{sleep}' &) ; sleep 0.3; exit 0"
    result, _, took = _run(tmp_path, script)
    assert result.exit_code == 0 and took < 10
    assert _alive(tag) == []


def test_a_timeout_stops_every_process_and_says_so_truthfully(tmp_path: Path) -> None:
    tag, sleep = _sleeper()
    result, _, _ = _run(tmp_path, f"setsid {sleep} & {sleep}", timeout=0.5)
    assert result.exit_code == 124
    assert result.message == "timed out after 0.5s: every pod was stopped"
    assert _alive(tag) == []


def test_sigterm_to_ktrain_ends_detached_children_before_it_says_every_pod_was_stopped(tmp_path: Path) -> None:
    tag, sleep = _sleeper()
    argv = [sys.executable, "-m", "ktrain", "job", "run", "--local", "--runtime", "torch-distributed", "--"]
    argv += ["sh", "-c", f"setsid {sleep} & echo ready; {sleep}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        while len(_alive(tag)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_alive(tag)) == 2
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert "every pod was stopped" in err
    assert _alive(tag) == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shapes=st.lists(st.sampled_from(["plain", "setsid", "subshell", "nohup", "double"]), min_size=1, max_size=3),
    main_exit=st.sampled_from([0, 3]),
)
def test_any_process_tree_a_pod_leaves_is_ended_with_it(tmp_path: Path, shapes: list[str], main_exit: int) -> None:
    tags, parts = [], []
    for shape in shapes:
        tag, sleep = _sleeper()
        tags.append(tag)
        parts.append(
            {
                "plain": f"{sleep} &",
                "setsid": f"setsid {sleep} &",
                "subshell": f"( {sleep} & ) ;",
                "nohup": f"nohup {sleep} >/dev/null 2>&1 &",
                "double": f"(setsid sh -c '{sleep} & exit 0' &) ;",
            }[shape]
        )
    result, _, took = _run(tmp_path, " ".join(parts) + f" sleep 0.2; exit {main_exit}")
    assert result.exit_code == main_exit and took < 10
    assert [t for t in tags if _alive(t)] == []
