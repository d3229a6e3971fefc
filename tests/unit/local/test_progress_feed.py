"""A local run's progress lines: throttled, only on change, the newest at the end, status before log,
from the rank-0 pod only; and the pieces the runner hears a pod's output in (bounded)."""

from __future__ import annotations

import io
import time

from ktrain.local.progress_feed import ProgressFeed, rank0_pod
from ktrain.local.runner import output_pieces
from ktrain.progress.status import Metric, TrainerStatus
from ktrain.progress.view import summary


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def feed(interval: float = 1.0) -> tuple[ProgressFeed, list[str], Clock]:
    shown: list[str] = []
    clock = Clock()
    return ProgressFeed(lambda s: shown.append(summary(s)), "node-0-0", interval=interval, clock=clock), shown, clock


def bar(n: int, total: int = 1000) -> str:
    return f"\r {n * 100 // total:3d}%|####      | {n}/{total} [00:01<00:09,  9.98it/s, loss=0.{n}]"


def test_a_thousand_redraws_in_a_second_show_once_then_the_newest_at_the_end() -> None:
    progress, shown, _clock = feed(interval=3600)  # no timer fires during the test
    for n in range(1000):
        progress.line("node-0-0", bar(n))
    assert shown == ["0% ETA 9s loss=0.0 (log (tqdm))"]
    progress.close()
    assert shown[-1] == "99% ETA 9s loss=0.999 (log (tqdm))" and len(shown) == 2
    progress.line("node-0-0", bar(1000))
    assert len(shown) == 2  # nothing after the end


def test_one_line_per_interval_and_only_on_change() -> None:
    progress, shown, clock = feed(interval=3600)
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=10 eta=60\n")
    clock.now += 3600
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=10 eta=60\n")  # the same: not shown again
    clock.now += 3600
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=20 eta=50\n")
    progress.close()
    assert shown == ["10% ETA 1m00s (log (ktrain))", "20% ETA 50s (log (ktrain))"]


def test_a_throttled_change_is_shown_by_the_timer_without_a_next_line() -> None:
    shown: list[str] = []
    progress = ProgressFeed(lambda s: shown.append(summary(s)), "node-0-0", interval=0.2)
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=10\n")
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=20\n")
    assert shown == ["10% (log (ktrain))"]
    deadline = time.monotonic() + 5
    while len(shown) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert shown == ["10% (log (ktrain))", "20% (log (ktrain))"]
    progress.close()
    assert len(shown) == 2


def test_other_pods_lines_are_not_read() -> None:
    progress, shown, _ = feed()
    progress.line("node-0-1", "KTRAIN_PROGRESS percent=50\n")
    progress.close()
    assert shown == []


def test_once_the_status_endpoint_reports_the_log_is_not_shown() -> None:
    progress, shown, clock = feed(interval=3600)
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=10\n")
    progress.status(TrainerStatus(progress_percentage=45, metrics=[Metric("loss", "0.2")]))  # throttled
    clock.now += 3600
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=90\n")
    progress.close()
    assert shown == ["10% (log (ktrain))", "45% loss=0.2 (status)"]


def test_control_characters_never_reach_the_line() -> None:
    progress, shown, _ = feed()
    progress.line("node-0-0", "KTRAIN_PROGRESS percent=5 lo\x1b]0;x\x07ss=\x1b[2J1\n")
    progress.close()
    assert shown and not any(ord(ch) < 32 or ord(ch) == 127 for ch in shown[0]), shown


def test_the_rank0_pod_is_the_trainer_steps_first_or_the_mpi_launcher() -> None:
    from ktrain.local.plan import LocalPod, RunPlan, Step

    def pod(name: str, rjob: str, j: int, i: int) -> LocalPod:
        return LocalPod(name, name, rjob, j, i, [], [], 1)

    def plan(*steps: Step) -> RunPlan:
        p = RunPlan.__new__(RunPlan)
        p.steps = list(steps)
        return p

    node = Step.__new__(Step)
    node.name, node.skipped = "node", None
    node.pods = [pod("node-0-1", "node", 0, 1), pod("node-0-0", "node", 0, 0)]
    launcher = Step.__new__(Step)
    launcher.name, launcher.skipped, launcher.pods = "launcher", None, [pod("launcher-0-0", "launcher", 0, 0)]
    assert rank0_pod(plan(launcher, node), [], "torch") == "node-0-0"
    assert rank0_pod(plan(launcher, node), [], "mpi") == "launcher-0-0"


def test_output_comes_in_pieces_ended_by_cr_or_lf_and_bounded() -> None:
    data = b"a\r\nb\rc\n" + b"x" * 250 + b"\ntail"
    pieces = list(output_pieces(io.BufferedReader(io.BytesIO(data)), limit=100))  # type: ignore[arg-type]
    assert b"".join(pieces) == data
    assert pieces[:4] == [b"a\r", b"\n", b"b\r", b"c\n"]
    assert max(len(p) for p in pieces) <= 100 and pieces[-1] == b"tail"
