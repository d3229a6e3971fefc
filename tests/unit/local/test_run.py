"""A local run's steps (ktrain.local.run.LocalRun: prepare, execute, close) on a tiny JobSet run
as real `sh` processes, and what `run_objects` does with them."""

from __future__ import annotations

import io
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from local_wheels import make_wheel, offline_cache_at

from ktrain.errors import UsageError
from ktrain.local.run import LocalRun, LocalRunOptions, free_port, make_run_dir, run_objects


def jobset(script: str, *, n: int = 1, argv: list[str] | None = None) -> dict[str, Any]:
    container = {"name": "node", "command": argv or ["sh", "-c", script]}
    job = {"parallelism": n, "completions": n, "template": {"spec": {"containers": [container]}}}
    rjob = {"name": "node", "replicas": 1, "template": {"spec": job}}
    return {"kind": "JobSet", "metadata": {"name": "tiny"}, "spec": {"replicatedJobs": [rjob]}}


def options(**kw: Any) -> tuple[LocalRunOptions, io.StringIO, list[str]]:
    out = io.StringIO()
    notes: list[str] = []
    kw.setdefault("status", False)
    return LocalRunOptions(out=out, notify=notes.append, colour=False, grace=2, **kw), out, notes


def test_the_steps_of_a_run(tmp_path: Path) -> None:
    opts, out, _ = options(cwd=str(tmp_path))
    run = LocalRun([jobset("echo hello from $JOB_COMPLETION_INDEX; pwd", n=2)], None, opts)
    assert run.pod_states() == {}  # nothing planned yet
    run.prepare()
    assert run.run_dir is not None and os.path.isdir(run.run_dir)
    assert run.plan is not None and [p.name for p in run.plan.pods()] == ["node-0-0", "node-0-1"]
    assert set(run.pod_states().values()) == {"pending"}
    result = run.execute()
    assert (result.exit_code, result.message) == (0, "")
    lines = sorted(out.getvalue().splitlines())
    assert lines == [
        f"[node-0-0] {tmp_path}",
        "[node-0-0] hello from 0",
        f"[node-0-1] {tmp_path}",
        "[node-0-1] hello from 1",
    ]
    run_dir = run.run_dir
    run.close()
    assert not os.path.exists(run_dir) and run.run_dir is None
    run.close()  # twice is fine


def test_a_failing_pod_gives_the_run_its_exit_code() -> None:
    opts, _, _ = options()
    result = run_objects([jobset("exit 3")], None, opts)
    assert result.exit_code == 3
    assert result.failed_pod == "node-0-0"


def test_keep_keeps_the_run_directory_and_says_where() -> None:
    opts, _, notes = options(keep=True)
    run = LocalRun([jobset("true")], None, opts)
    run.prepare()
    run_dir = run.run_dir
    assert run_dir is not None
    try:
        run.execute()
        run.close()
        assert os.path.isdir(run_dir)
        assert f"the run's files are kept in {run_dir}" in notes
    finally:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)


def test_a_missing_program_is_refused_before_any_pod_starts() -> None:
    opts, out, _ = options()
    run = LocalRun([jobset("", argv=["ktrain-no-such-program-here"])], None, opts)
    try:
        with pytest.raises(UsageError) as err:
            run.prepare()
        assert "runs `ktrain-no-such-program-here`, which is not found on this machine" in str(err.value)
        assert out.getvalue() == ""
    finally:
        run.close()


def test_a_cancel_before_execute_stops_the_run() -> None:
    opts, _, _ = options()
    run = LocalRun([jobset("sleep 30")], None, opts)
    try:
        run.prepare()
        run.cancel("stopped by the test")
        result = run.execute()
        assert result.exit_code != 0
        assert "stopped by the test" in result.message
    finally:
        run.close()


def test_the_status_endpoint_lives_as_long_as_the_run() -> None:
    opts, _, _ = options(status=True, on_progress=lambda _: None)
    run = LocalRun([jobset("true")], None, opts)
    run.prepare()
    try:
        assert run.status_server is not None
    finally:
        run.close()
    assert run.status_server is None


@pytest.mark.slow  # makes a virtual environment (python -m venv, ensurepip): ~10 s
def test_pip_packages_are_on_the_pods_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    offline_cache_at(tmp_path, monkeypatch)
    wheel = str(make_wheel(tmp_path))
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    opts, out, notes = options(pip=[wheel], env=env)
    script = 'python -c "import ktrain_tinypkg; print(ktrain_tinypkg.VALUE)"; echo "$VIRTUAL_ENV"'
    result = run_objects([jobset(script)], None, opts)
    assert result.exit_code == 0, out.getvalue()
    value, venv = out.getvalue().splitlines()
    assert value == "[node-0-0] 42"
    assert venv.startswith(f"[node-0-0] {tmp_path / 'cache' / 'venvs'}")
    assert any("making a virtual environment" in n for n in notes)


def test_the_run_directory_needs_no_quoting() -> None:
    path = make_run_dir()
    try:
        assert os.path.basename(path).startswith("ktrain-run-")
        assert all(ch.isalnum() or ch in "/_.+-" for ch in path)
    finally:
        os.rmdir(path)


def test_a_free_port_can_be_bound() -> None:
    port = free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))
