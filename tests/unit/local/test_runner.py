"""The runner on small hand-made JobSets: start order, init containers, success policy,
parallelism, prefixes (real `sh` processes, a few milliseconds each)."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ktrain.local.plan import PlanOptions, RunPlan, plan_run
from ktrain.local.run import free_port
from ktrain.local.runner import Runner, colour_wanted, write_files


def _jobset(rjobs: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "JobSet", "metadata": {"name": "js"}, "spec": {"replicatedJobs": rjobs, **spec}}


def _rjob(name: str, script: str, *, n: int = 1, parallelism: int | None = None, replicas: int = 1,
          **pod: Any) -> dict[str, Any]:  # fmt: skip
    container = {"name": "c", "command": ["sh", "-c", script], "volumeMounts": [{"name": "w", "mountPath": "/w"}]}
    spec = {"containers": [container], "volumes": [{"name": "w", "persistentVolumeClaim": {"claimName": "w"}}], **pod}
    job = {"parallelism": parallelism or n, "completions": n, "template": {"spec": spec}}
    return {"name": name, "replicas": replicas, "template": {"spec": job}}


def _run(tmp_path: Path, jobset: dict[str, Any], **runner: Any) -> tuple[int, str, RunPlan]:
    plan = plan_run([jobset], PlanOptions(run_dir=str(tmp_path), alloc_port=free_port, python=sys.executable))
    write_files(plan)
    out = io.StringIO()
    result = Runner(plan, base_env=dict(os.environ), out=out, grace=2, **runner).run()
    return result.exit_code, out.getvalue(), plan


def test_depends_on_complete_waits_for_the_step(tmp_path: Path) -> None:
    first = _rjob("first", "sleep 0.3; echo done > /w/first")
    second = {**_rjob("second", "cat /w/first"), "dependsOn": [{"name": "first", "status": "Complete"}]}
    code, out, _ = _run(tmp_path, _jobset([first, second]))
    assert code == 0
    assert out == "[second-0-0] done\n"


def test_in_order_starts_a_step_after_the_previous_one_started(tmp_path: Path) -> None:
    steps = [_rjob(n, f"echo {n} >> /w/order; sleep 0.2") for n in ("a", "b", "c")]
    code, _, _ = _run(tmp_path, _jobset(steps, startupPolicy={"startupPolicyOrder": "InOrder"}))
    assert code == 0
    assert (tmp_path / "claims" / "w" / "order").read_text() == "a\nb\nc\n"


def test_init_containers_run_first_one_by_one_and_sidecars_are_stopped(tmp_path: Path) -> None:
    scratch = [{"name": "e", "mountPath": "/e"}]
    inits = [
        {"name": "i1", "command": ["sh", "-c", "echo one > /e/log"], "volumeMounts": scratch},
        {"name": "i2", "command": ["sh", "-c", "echo two >> /e/log"], "volumeMounts": scratch},
        # `$$$$` is the kubelet's escape for the shell's `$$`
        {"name": "side", "restartPolicy": "Always", "command": ["sh", "-c", "echo $$$$ > /w/side; exec sleep 300"],
         "volumeMounts": [{"name": "w", "mountPath": "/w"}]},
    ]  # fmt: skip
    rjob = _rjob("a", "sleep 0.2; cat /e/log")
    pod = rjob["template"]["spec"]["template"]["spec"]
    pod["initContainers"] = inits
    pod["containers"][0]["volumeMounts"].append({"name": "e", "mountPath": "/e"})
    pod["volumes"].append({"name": "e", "emptyDir": {}})
    started = time.monotonic()
    code, out, _ = _run(tmp_path, _jobset([rjob]))
    assert code == 0 and out == "[a-0-0] one\n[a-0-0] two\n"
    assert time.monotonic() - started < 30
    side = int((tmp_path / "claims" / "w" / "side").read_text())
    assert not Path(f"/proc/{side}").exists() or "Z" in Path(f"/proc/{side}/stat").read_text().split()[2]


def test_a_failing_init_container_fails_the_pod(tmp_path: Path) -> None:
    rjob = _rjob("a", "echo never")
    rjob["template"]["spec"]["template"]["spec"]["initContainers"] = [{"name": "i", "command": ["sh", "-c", "exit 4"]}]
    code, out, _ = _run(tmp_path, _jobset([rjob]))
    assert code == 4 and out == ""


def test_success_policy_any_ends_the_run_at_the_first_job(tmp_path: Path) -> None:
    rjob = _rjob("w", 'if [ "$JOB_INDEX" = 0 ]; then echo quick; else sleep 300; fi', replicas=2)
    rjob["template"]["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {
            "name": "JOB_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/job-index']"}},
        }
    ]
    started = time.monotonic()
    code, out, _ = _run(tmp_path, _jobset([rjob], successPolicy={"operator": "Any", "targetReplicatedJobs": ["w"]}))
    assert code == 0 and out == "[w-0-0] quick\n"
    assert time.monotonic() - started < 30


def test_parallelism_below_completions_runs_indexes_in_turn(tmp_path: Path) -> None:
    script = 'echo "start $JOB_COMPLETION_INDEX" >> /w/log; sleep 0.1; echo "end $JOB_COMPLETION_INDEX" >> /w/log'
    rjob = _rjob("w", script, n=3, parallelism=1)
    code, _, _ = _run(tmp_path, _jobset([rjob]))
    assert code == 0
    log = (tmp_path / "claims" / "w" / "log").read_text().split("\n")
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2", ""]


def test_prefixes_are_aligned_and_coloured_on_request(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, _jobset([_rjob("a", "echo x"), _rjob("long", "sleep 0.1; echo y")]), colour=True)
    assert code == 0
    assert out.splitlines() == ["\x1b[36m[a-0-0]   \x1b[0m x", "\x1b[33m[long-0-0]\x1b[0m y"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("env", "expected"), [({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)])
def test_colour_only_on_a_terminal_without_no_color(
    env: dict[str, str], expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert colour_wanted(_Tty()) is expected
    assert colour_wanted(io.StringIO()) is False
