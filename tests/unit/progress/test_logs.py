"""Progress from training logs: each format on what its library really printed (the fixtures made
by tests/training_logs.py, and a live run where the library is installed), and a hostile log."""

from __future__ import annotations

import time

import pytest
import training_logs as real

from ktrain.progress.logs import MAX_LINE, MAX_TAIL_BYTES, from_log, tail_lines
from ktrain.progress.status import MAX_METRICS
from ktrain.progress.view import eta_cell, percent_cell, summary

# (library, at the mark: percent, metrics that must be there; at the end: metrics)
EXPECTED = {
    # 100 steps, marked after step 45
    "tqdm": (45, {"loss"}, {"loss"}),
    # torchtune's description EPOCH|STEP|Loss: VALUE, 20 steps, marked at step 9
    "torchtune": (45, {"epoch", "step", "loss"}, {"epoch", "step", "loss"}),
    # transformers.Trainer, max_steps 20, logging every 5, marked at the end of step 9 (before its bar)
    "transformers": (40, {"loss", "learning_rate", "grad_norm", "epoch"}, {"train_loss", "loss"}),
    # Lightning's TQDMProgressBar, 2 epochs of 20 batches, marked in epoch 1's 9th batch (the epoch's %)
    "lightning": (40, {"epoch", "train_loss"}, {"epoch", "train_loss"}),
    # Keras, 3 epochs of 20 steps; a log (not a terminal) shows step 1 and the last of each epoch
    "keras": (35, {"epoch", "loss", "mae"}, {"epoch", "loss", "mae"}),
}
FORMATS = {"tqdm": "tqdm", "torchtune": "torchtune", "transformers": "transformers"}


# transformers' bar redraws at most every 0.1 s (tqdm's mininterval): live, the bar at the mark may
# be a few steps behind it (never ahead, never at 0); the fixture holds one exact run.
THROTTLED = {"transformers"}


def _check(name: str, log: bytes, *, live: bool = False) -> None:
    percent, mid_metrics, end_metrics = EXPECTED[name]
    mid = from_log(real.until_mark(log))
    assert mid is not None, name
    if live and name in THROTTLED:
        assert mid.progress_percentage is not None and 0 < mid.progress_percentage <= percent
    else:
        assert mid.progress_percentage == percent
    assert mid_metrics <= {m.name for m in mid.metrics}
    assert mid.source == f"log ({FORMATS.get(name, name)})"
    end = from_log(log)
    assert end is not None and end.progress_percentage == 100
    assert end_metrics <= {m.name for m in end.metrics}
    assert not mid.invalid and not end.invalid


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_format_as_its_library_printed_it(name: str) -> None:
    _check(name, real.fixture(name))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_format_as_the_installed_library_prints_it_now(name: str) -> None:
    if not real.installed(name):
        pytest.skip(f"{name} is not installed (the fixture test above still runs)")
    _check(name, real.run(name), live=True)


def test_lightnings_rich_bar_gives_the_runs_percentage_once_an_epoch_bar_ends() -> None:
    log = real.fixture("lightning-rich")
    assert from_log(real.until_mark(log)) is None  # nothing is printed while the bar runs
    end = from_log(log)
    assert end is not None and end.progress_percentage == 100 and end.source == "log (lightning)"
    halfway = "Epoch 0/1  ━━━━━━━━━━━━━ 10/20 0:00:01 • 0:00:01 89.31it/s train_loss: 1.115"
    found = from_log(halfway)
    assert found is not None and found.progress_percentage == 25 and found.estimated_remaining_seconds is None


def test_the_hugging_face_metrics_and_the_bars_percentage_combine() -> None:
    log = real.fixture("transformers")
    mid = from_log(real.until_mark(log))
    assert mid is not None and mid.estimated_remaining_seconds is not None
    assert mid.metric("loss") is not None and mid.metric("loss").number() is not None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "percent", "eta", "metrics"),
    [
        ("KTRAIN_PROGRESS percent=45 eta=3600 loss=0.2347 accuracy=0.9876", 45, 3600, {"loss", "accuracy"}),
        ("2026-06-12 INFO train: KTRAIN_PROGRESS step=450/1000 eta=1h2m3s loss=0.2", 45, 3723, {"step", "loss"}),
        ("KTRAIN_PROGRESS percent=99.9%", 99, None, set()),
    ],
)
def test_ktrains_own_line(line: str, percent: int, eta: int | None, metrics: set[str]) -> None:
    found = from_log(line + "\n")
    assert found is not None and found.source == "log (ktrain)"
    assert (found.progress_percentage, found.estimated_remaining_seconds) == (percent, eta)
    assert {m.name for m in found.metrics} == metrics


@pytest.mark.parametrize(
    "line",
    [
        "KTRAIN_PROGRESS percent=250 eta=-5",
        "KTRAIN_PROGRESS step=1200/1000",
        " 250%|##########| 250/100 [00:10<-00:05, 25it/s]",
    ],
)
def test_out_of_range_percentages_and_negative_etas_are_invalid_not_trusted(line: str) -> None:
    found = from_log("KTRAIN_PROGRESS percent=10 eta=60\n" + line + "\n")
    assert found is not None
    assert found.progress_percentage is None  # not the older 10%
    assert percent_cell(found) == "invalid"
    assert found.invalid
    if "-5" in line:
        assert eta_cell(found) == "invalid"


def test_an_evaluation_bar_does_not_replace_the_training_percentage() -> None:
    log = "Epoch 1:  45%|████▌     | 9/20 [00:04<00:05, 2it/s, loss=1.2]\r"
    log += "Validation DataLoader 0: 100%|██| 5/5 [00:00<00:00]\n"
    found = from_log(log)
    assert found is not None and found.progress_percentage == 45


def test_a_hostile_log_is_read_in_bounded_time_and_memory_and_prints_safely() -> None:
    evil_names = "".join(f" m{i}\x1b]0;pwned\x07=1" for i in range(2000))
    hostile = (
        "x" * (5 * MAX_TAIL_BYTES)
        + "\n"
        + ("{" * 50000)
        + "\n"
        + ("9" * 3000 + "%|" + "#" * 3000 + "|\n") * 20
        + "KTRAIN_PROGRESS percent=45 loss=\x1b[2J\x1b]52;c;ZXZpbA==\x07"
        + evil_names
        + "\n"
    )
    start = time.perf_counter()
    found = from_log(hostile)
    assert time.perf_counter() - start < 2.0
    assert all(len(line) <= MAX_LINE for line in tail_lines(hostile))
    assert found is not None and len(found.metrics) <= MAX_METRICS
    text = summary(found)
    assert "\x1b" not in text and "\x07" not in text and all(len(m.value) <= 64 for m in found.metrics)


def test_a_log_without_progress_says_nothing() -> None:
    assert from_log("starting\nepoch done\n{'not': 'a training dict'}\n") is None
    assert from_log(b"\xff\xfe binary \x00 junk") is None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_log_fed_piece_by_piece_reads_as_the_whole_log(name: str) -> None:
    from ktrain.progress.logs import LogTail

    log = real.fixture(name).decode("utf-8", "replace")
    tail = LogTail()
    for start in range(0, len(log), 997):  # pieces that cut lines anywhere
        tail.feed(log[start : start + 997])
    assert tail.status() == from_log(log)


def test_a_log_tail_stays_bounded_however_long_the_log() -> None:
    from ktrain.progress.logs import MAX_LINES, LogTail

    tail = LogTail()
    text = "".join(f"\r {n % 100:3d}%|#   | {n % 100}/100 [00:01<00:09,  9.98it/s, loss={n}]" for n in range(50_000))
    for start in range(0, len(text), 997):
        tail.feed(text[start : start + 997])
    assert tail.size <= MAX_TAIL_BYTES and len(tail.lines) <= MAX_LINES
    status = tail.status()
    assert status is not None and status.progress_percentage == 99 and status.metric("loss") is not None
    tail.feed("x" * (10 * MAX_LINE) + "\n")
    assert len(tail.lines[-1]) == MAX_LINE and tail.size <= MAX_TAIL_BYTES


def test_a_log_without_a_keras_time_per_step_never_compiles_the_keras_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines with `/` but no `s/` (`step 3/100`) cannot be Keras bars: they are passed over unparsed."""
    from ktrain.progress import logs

    monkeypatch.setattr(logs, "_PATTERNS", {})
    text = "".join(f"[rank0] epoch 1 step {i}/100 loss=0.5 lr=3.0e-05\n" for i in range(1, 50))
    assert logs.from_log(text) is None
    assert "keras" not in logs._PATTERNS
    assert logs.from_log("  3/10 ━━━━━━━━━━━━━━━━━━━━ 1s 5ms/step - loss: 0.5000\n") is not None
    assert "keras" in logs._PATTERNS
