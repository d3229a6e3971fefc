"""`ktrain.local.run_plan`: the plan's types. The runner starts `RunPlan.pods()`, so a skipped
step's pods (MPI workers, which only run sshd for the launcher's mpirun) must not be among them,
and the order must be JobSet's (the steps' order, then each step's pods)."""

from __future__ import annotations

from ktrain.local import plan
from ktrain.local.netmap import NetMap
from ktrain.local.run_plan import LocalContainer, LocalPod, PlanOptions, RunPlan, Step


def _pod(rjob: str, index: int) -> LocalPod:
    ct = LocalContainer(name="node", argv=["python", "train.py"], env={}, cwd=None)
    return LocalPod(
        name=f"{rjob}-0-{index}",
        hostname=f"demo-{rjob}-0-{index}",
        rjob=rjob,
        job_index=0,
        index=index,
        init=[],
        containers=[ct],
        processes=1,
    )


def _plan(steps: list[Step]) -> RunPlan:
    netmap = NetMap(jobset="demo", rjobs=[s.name for s in steps], subdomain="demo", namespace="default")
    return RunPlan(
        jobset="demo",
        namespace="default",
        steps=steps,
        in_order=True,
        success_operator="All",
        success_targets=[],
        dirs=[],
        files=[],
        notes=[],
        processes=3,
        netmap=netmap,
    )


def test_pods_are_the_steps_pods_in_order_without_the_skipped_steps() -> None:
    launcher = Step("launcher", 1, 1, 1, [], [_pod("launcher", 0)])
    workers = Step("node", 1, 2, 2, [("launcher", "Ready")], [_pod("node", 0), _pod("node", 1)], skipped="sshd")
    trainer = Step("trainer", 1, 2, 2, [], [_pod("trainer", 0), _pod("trainer", 1)])
    assert [p.name for p in _plan([launcher, workers, trainer]).pods()] == [
        "launcher-0-0",
        "trainer-0-0",
        "trainer-0-1",
    ]


def test_the_planner_and_the_plan_share_one_set_of_types() -> None:
    """`ktrain.local.plan.RunPlan` & co. are these classes (callers and docs name them there)."""
    assert (plan.RunPlan, plan.PlanOptions, plan.LocalPod) == (RunPlan, PlanOptions, LocalPod)
    options = PlanOptions(run_dir="/tmp/run", alloc_port=lambda: 0, python="python3")
    assert (options.max_processes, options.restart_attempt, options.container) == (64, 0, False)
