"""ktrain/local/restarts.py: `job run --local` follows the rendered failure policy: real processes,
the workload tests/failure/workloads/resume.py (checkpoints every step, resumes from the last one)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ktrain.local.restarts import LocalPolicy, decide, policy_of

WORKLOADS = Path(__file__).resolve().parents[2] / "failure" / "workloads"
BIN = os.path.dirname(sys.executable)


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", os.defpath), **env}
    argv = [sys.executable, "-m", "ktrain", "job", "run", "--local", "--runtime", "torch-distributed", "--nodes", "2"]
    argv += [*args, "--code", "resume.py", "--", "python3", "resume.py"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=environ, cwd=WORKLOADS, check=False)


def lines(out: str, pod: str) -> list[str]:
    return [line.split("] ", 1)[1] for line in out.splitlines() if line.startswith(f"[{pod}]")]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_script_failing_on_attempt_0_resumes_from_its_checkpoint_on_attempt_1(tmp_path: Path) -> None:
    result = run("--max-restarts", "2", "--checkpoint", "ckpt:/ckpt", "--keep")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout, "node-0-1") == [
        "attempt 0 rank 1 resumes at step 0",
        "rank 1 fails at step 5",
        "attempt 1 rank 1 resumes at step 5",  # the checkpoint survived the restart
        "rank 1 done at step 10",
    ]
    assert lines(result.stdout, "node-0-0")[0] == "attempt 0 rank 0 resumes at step 0"
    assert lines(result.stdout, "node-0-0")[-1] == "rank 0 done at step 10"
    assert "exited with code 1 (BackoffLimitExceeded, the default action): restart 1 of 2; starting every pod" in (
        result.stderr
    )
    # rank 0 was still running attempt 0 when rank 1 failed: the restart stopped it
    kept = next(line for line in result.stderr.splitlines() if "the run's files are kept in" in line)
    claims = Path(kept.rsplit(" ", 1)[1]) / "claims" / "ckpt"
    try:
        first = int((claims / "pid-0-0").read_text())
        assert not _alive(first)
        assert (claims / "pid-0-1").is_file() and (claims / "pid-1-1").is_file()
    finally:
        import shutil

        shutil.rmtree(claims.parents[1], ignore_errors=True)


def test_a_fail_fast_exit_code_ends_the_run_at_once_with_that_code() -> None:
    start = time.monotonic()
    result = run("--max-restarts", "3", "--fail-on-exit-code", "3", "--checkpoint", "ckpt", FAIL_CODE="3")
    assert result.returncode == 3, result.stderr
    assert "the job fails at once (rule FailOnExitCode, FailJobSet" in result.stderr
    assert not any(line.startswith("attempt 1") for line in lines(result.stdout, "node-0-1"))
    assert time.monotonic() - start < 60  # rank 0's 120 s wait was cut short


def test_the_budget_is_honoured() -> None:
    result = run("--max-restarts", "2", "--checkpoint", "ckpt", FAIL_ALWAYS="1")
    assert result.returncode == 1
    attempts = [line for line in lines(result.stdout, "node-0-1") if line.startswith("attempt")]
    assert [a.split()[1] for a in attempts] == ["0", "1", "2"]  # the first run and two restarts
    assert "restart 1 of 2" in result.stderr and "restart 2 of 2" in result.stderr
    assert "the job fails, restarted 2 of 2 times (ReachedMaxRestarts)" in result.stderr


def test_without_a_failure_policy_a_failed_pod_ends_the_run() -> None:
    result = run("--checkpoint", "ckpt", FAIL_CODE="4")
    assert result.returncode == 4
    assert "starting every pod again" not in result.stderr


POLICY = LocalPolicy(
    max_restarts=1,
    rules=[
        {
            "name": "RestartOnPreemption",
            "action": "RestartJobSetAndIgnoreMaxRestarts",
            "onJobFailureReasons": ["PodFailurePolicy"],
            "onJobFailureMessagePatterns": ["has condition DisruptionTarget matching FailJob rule at index 0$"],
        },
        {
            "name": "FailOnExitCode",
            "action": "FailJobSet",
            "onJobFailureReasons": ["PodFailurePolicy"],
            "onJobFailureMessagePatterns": ["failed with exit code [0-9]+ matching FailJob rule at index 1$"],
        },
    ],
    pod_rules={
        "node": [
            {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [2, 42]}},
        ]
    },
)


@pytest.mark.parametrize(
    ("code", "counted", "action", "rule"),
    [
        (42, 0, "FailJobSet", "FailOnExitCode"),
        (1, 0, "RestartJobSet", None),
        (1, 1, "ReachedMaxRestarts", None),
        (137, 0, "RestartJobSet", None),  # an OOM kill is no preemption
    ],
)
def test_decide_follows_the_job_and_jobset_controllers(code: int, counted: int, action: str, rule: str | None) -> None:
    decision = decide(POLICY, counted, rjob="node", pod="j-node-0-1", container="node", code=code)
    assert (decision.action, decision.rule) == (action, rule)
    if code == 42:
        assert (
            decision.message
            == "Container node for pod default/j-node-0-1 failed with exit code 42 matching FailJob rule at index 1"
        )


def test_the_local_policy_is_read_from_the_rendered_jobset() -> None:
    import ktrain

    objects = ktrain.render(
        runtime="torch-distributed", max_restarts=2, fail_on_exit_codes=[2], command=["python3", "t.py"]
    )
    policy = policy_of(objects)
    assert policy is not None and policy.max_restarts == 2
    assert [r["name"] for r in policy.rules] == ["FailOnExitCode"]
    assert policy.pod_rules["node"][0]["onExitCodes"]["values"] == [2]
    assert policy_of(ktrain.render(runtime="torch-distributed", command=["python3", "t.py"])) is None
