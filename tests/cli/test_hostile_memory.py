"""Huge and slow answers from a hostile server (issue #25), each command run in its own process
through both transports: the answer is refused past the body cap with an error naming its size,
the process's peak memory stays under 200 MB, and it ends within a second of its deadline."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from apiserver.hostile import HUGE, SCENARIOS, HostileServer, MiB, dense_page
from child_memory import run_measured

from ktrain.cluster.transport import MAX_BODY_BYTES
from ktrain.errors import ExitCode

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

DEADLINE = 2.0
MAX_RSS_MB = 200
COMMANDS = {
    "job list": ["job", "list"],
    "job get": ["job", "get", "x"],
    "job logs": ["job", "logs", "x"],
    "job delete": ["job", "delete", "x", "--yes"],
    "job delete -l": ["job", "delete", "-l", "team=a", "--yes"],
}


def run_ktrain(args: list[str], tmp_path: Path) -> tuple[int, str, float, float]:
    """(exit code, stderr, seconds, peak RSS in MB) of `python -m ktrain ARGS` in a fresh process
    (its own ru_maxrss: see tests/child_memory.py)."""
    env = {**os.environ, "KTRAIN_NO_FASTPATH": ""}
    return run_measured([sys.executable, "-m", "ktrain", *args], tmp_path / "stderr", env=env, timeout=60)


@pytest.mark.parametrize("command", ["job list", "job get", "job logs", "job delete"])
@pytest.mark.parametrize("scenario", HUGE)
def test_a_huge_answer_is_refused_by_size_in_bounded_memory(tmp_path: Path, scenario: str, command: str) -> None:
    with HostileServer(SCENARIOS[scenario]) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        args = [*COMMANDS[command], "--kubeconfig", str(kc), "--request-timeout", str(DEADLINE)]
        code, stderr, took, peak = run_ktrain(args, tmp_path)
    assert code == ExitCode.CLUSTER, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    assert "an answer too large to read" in stderr, stderr
    assert f"ktrain reads at most {MAX_BODY_BYTES // MiB} MiB" in stderr, stderr
    assert peak < MAX_RSS_MB, peak
    assert took < DEADLINE + 1 + 1.5, took  # + start-up of a fresh interpreter


@pytest.mark.parametrize("command", ["job list", "job logs"])
def test_a_drip_fed_body_is_cut_at_the_deadline_in_a_fresh_process(tmp_path: Path, command: str) -> None:
    with HostileServer(SCENARIOS["drip-body"]) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        started = time.monotonic()
        code, stderr, _, _ = run_ktrain(
            [*COMMANDS[command], "--kubeconfig", str(kc), "--request-timeout", "2"], tmp_path
        )
        took = time.monotonic() - started
    assert code == ExitCode.CLUSTER and "did not answer within 2s" in stderr, stderr
    assert took < 2 + 1 + 1.5, took


@pytest.mark.parametrize("command", ["job list", "job delete -l"])
def test_a_dense_page_that_ignores_the_limit_is_refused_in_bounded_memory(tmp_path: Path, command: str) -> None:
    """Small objects just under the body cap, where 500 were asked for: parsed once, refused."""
    with HostileServer(dense_page()) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        code, stderr, _, peak = run_ktrain([*COMMANDS[command], "--kubeconfig", str(kc)], tmp_path)
    assert code == ExitCode.CLUSTER, stderr
    assert "objects where at most 500 were asked for" in stderr
    assert peak < MAX_RSS_MB, peak
