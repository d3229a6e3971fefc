"""`job watch`'s frame (`ktrain.progress.watch`): what one look shows, and the metric history that
feeds its sparklines, bounded whatever the job reports."""

from __future__ import annotations

from types import SimpleNamespace

from ktrain.progress.status import Metric, TrainerStatus
from ktrain.progress.watch import HISTORY, MAX_TRACKED, MetricHistory, frame, plain_line


def _summary(state: str = "Running", phases: tuple[str, ...] = ("Running", "Running"), restarts: int = 0) -> object:
    pods = [SimpleNamespace(name=f"p{i}", step="node", phase=p, restarts=restarts) for i, p in enumerate(phases)]
    steps = [SimpleNamespace(name="node", pods=len(phases), active=1, succeeded=0, failed=0)]
    return SimpleNamespace(
        name="demo", namespace="team", state=state, pods=pods, steps=steps,
        trainer_pods_ready=phases.count("Running"), trainer_pods_expected=len(phases),
    )  # fmt: skip


def _status(step: int, loss: float) -> TrainerStatus:
    return TrainerStatus(
        progress_percentage=step,
        estimated_remaining_seconds=600,
        metrics=[Metric("loss", f"{loss}"), Metric("phase", "warm-up")],
        last_updated_time=f"2026-06-12T03:00:{step:02d}Z",
    )


def test_a_frame_shows_pods_by_state_restarts_the_bar_and_a_sparkline_per_numeric_metric() -> None:
    history = MetricHistory()
    for step, loss in ((10, 3.0), (20, 2.0), (30, 1.0)):
        history.add(_status(step, loss))
    history.add(_status(30, 1.0))  # the same update read again: no new point
    lines = frame(_summary(phases=("Running", "Pending"), restarts=2), _status(30, 1.0), history, 0.0)
    assert lines[0] == "team/demo  Running  trainer pods 1/2  restarts 4"
    assert "  node: 1 Pending, 1 Running" in lines
    assert any(line.startswith("progress: [#########") and "30%  ETA 10m00s" in line for line in lines)
    loss = next(line for line in lines if line.strip().startswith("loss"))
    assert loss.endswith("█▅▁")  # three points, falling
    assert next(line for line in lines if line.strip().startswith("phase")).rstrip().endswith("warm-up")


def test_while_not_running_the_verdict_shows() -> None:
    lines = frame(
        _summary(state="Created", phases=("Pending",)), None, MetricHistory(), 0.0, ("Unschedulable", "no GPU")
    )
    assert "why: Unschedulable: no GPU" in lines and "progress: none reported yet" in lines
    assert plain_line(_summary(state="Created", phases=("Pending",)), None, ("Unschedulable", "x")).endswith(
        "why Unschedulable"
    )


def test_the_history_is_bounded_whatever_the_job_reports() -> None:
    history = MetricHistory()
    for i in range(500):
        metrics = [Metric(f"m{j}", str(i)) for j in range(300)]
        history.add(TrainerStatus(metrics=metrics, last_updated_time=f"t{i}"))
    assert len(history.values) == MAX_TRACKED
    assert all(len(series) == HISTORY for series in history.values.values())


def test_names_from_the_job_are_escaped() -> None:
    status = TrainerStatus(metrics=[Metric("loss\x1b[2J", "1\x07")])
    text = "\n".join(frame(_summary(), status, MetricHistory(), 0.0)) + plain_line(_summary(), status)
    assert "\x1b" not in text and "\x07" not in text
