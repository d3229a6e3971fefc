"""Progress read from the tail of a trainer's log, where no Trainer controller writes a status.

The formats real training code prints (each tested on lines the library itself printed:
tests/unit/progress/):

- tqdm bars: ` 45%|████▌     | 45/100 [00:04<00:05,  9.98it/s, loss=0.235]` (percentage, ETA from
  `elapsed<remaining`, metrics from the postfix);
- Hugging Face `transformers.Trainer`: its tqdm bar (above) and the dict each logging step prints,
  `{'loss': '0.2347', 'grad_norm': '1.2', 'learning_rate': '4.5e-05', 'epoch': '0.45'}`;
- PyTorch Lightning's progress bar: `Epoch 2:  45%|████▌     | 45/100 [00:04<00:05, 9.98it/s, v_num=0,
  train_loss=0.234]` (TQDMProgressBar: the epoch becomes a metric, the percentage is the epoch's),
  or `Epoch 1/3 ━━━━━━━━ 20/20 0:00:01 • 0:00:00 89.31it/s train_loss: 1.115` (RichProgressBar, which
  in a log prints a line per finished epoch bar: the percentage is the run's);
- torchtune recipes: their tqdm bar described `EPOCH|STEP|Loss: VALUE`;
- Keras: `Epoch 2/3` then ` 45/100 ━━━━━━━━━━━━━━━━━━━━ 4s 89ms/step - accuracy: 0.9876 - loss: 0.2347`
  (the percentage over all epochs: `((epoch - 1) + step / steps) / epochs`);
- ktrain's own line, for everything else (docs/observing.md):
  `KTRAIN_PROGRESS percent=45 eta=3600 loss=0.2347 accuracy=0.9876`
  (`percent` 0-100 or `step=450/1000`; `eta` in seconds, or `1h2m3s`; every other `name=value`
  is a metric).

Bounded whatever the log holds: only the last `MAX_TAIL_BYTES` are read, each line is cut at
`MAX_LINE` characters and at most `MAX_LINES` lines are looked at, metrics are capped at 256 with
names and values of 64 characters; a percentage outside 0-100 or a negative ETA is reported as
invalid, not trusted. Control characters are kept in the values (they are escaped where shown).
"""

from __future__ import annotations

from ktrain.progress.status import MAX_METRIC_TEXT, MAX_METRICS, Metric, TrainerStatus
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from re import Pattern

MAX_TAIL_BYTES = 64 * 1024
MAX_LINE = 4096
MAX_LINES = 2000
KTRAIN_PREFIX = "KTRAIN_PROGRESS"
EVAL_WORDS = ("validation", "validating", "evaluating", "eval", "testing", "test", "predicting", "predict", "sanity")

_PATTERNS: dict[str, Pattern[str]] = {}


def _pattern(name: str) -> Pattern[str]:
    found = _PATTERNS.get(name)
    if found is None:
        import re

        source = {
            # ESC [ ... final byte, and the other ESC sequences terminals act on
            "ansi": r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]",
            # after the last `%|` of a line (the percentage before it is read by hand: linear time)
            "tqdm": (
                r"[^|]{0,400}\|\s*(?P<n>[\d.]+[kMGTP]?)"
                r"/(?P<total>[\d.]+[kMGTP]?)\s*\[(?P<elapsed>[\d:]+|\?)<(?P<remaining>-?[\d:]+|\?)"
                r"(?:,\s*(?P<rate>[^,\]]*))?(?:,\s*(?P<postfix>[^\]]{0,2000}))?\]"
            ),
            "keras": (
                r"^\s*(?P<n>\d+)/(?P<total>\d+)\s+(?:━+\s+(?P<eta>\d+:\d\d:\d\d|\d+:\d\d|\d+s)\s+\d+(?:us|ms|s)/\w+"
                r"|-\s+(?P<elapsed>\d+s)\s+-\s+\d+(?:us|ms|s)/\w+)(?P<rest>(?:\s+-\s+[^\s:]+:\s+\S+)*)\s*$"
            ),
            "keras_epoch": r"^\s*Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\s*$",
            "rich": (
                r"^\s*Epoch (?P<epoch>\d+)/(?P<last>\d+)\s+[━╸╺─ ]*\s(?P<n>\d+)/(?P<total>\d+)\s+"
                r"(?P<elapsed>[\d:]+)\s+•\s+(?P<remaining>-:--:--|[\d:]+)?\s*(?:[\d.]+it/s)?\s*(?P<rest>.*)$"
            ),
            "lightning": r"^\s*Epoch (?P<epoch>\d+)(?:/(?P<epochs>\d+))?\s*:?\s*$",
            "torchtune": r"^\s*(?P<epoch>\d+)\|(?P<step>\d+)\|Loss:\s*(?P<loss>\S+?)\s*:?\s*$",
            "duration": r"^(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+(?:\.\d+)?)s?)?$",
        }[name]
        found = _PATTERNS[name] = re.compile(source)
    return found


@struct(slots=True)
class LineProgress:
    """What one line says (None: not said)."""

    format: str
    percent: float | None = None
    eta: float | None = None
    metrics: list[Metric] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    evaluation: bool = False  # an evaluation/validation bar: its percentage is not the run's

    @property
    def says_progress(self) -> bool:
        """A percentage was given, trusted or not."""
        return self.percent is not None or any("progress" in text for text in self.invalid)


def _clock_seconds(text: str) -> float | None:
    """tqdm's `[H:]MM:SS` (`?` and negatives: unknown)."""
    if not text or text == "?" or text.startswith("-"):
        return None
    parts = text.split(":")
    if not all(p.isdigit() for p in parts) or len(parts) > 3:
        return None
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return float(seconds)


def _metric(name: str, value: str) -> Metric | None:
    name, value = name.strip().strip("'\""), value.strip().strip("'\"")
    if not name or not value:
        return None
    return Metric(name[:MAX_METRIC_TEXT], value[:MAX_METRIC_TEXT])


def _postfix(text: str | None) -> list[Metric]:
    out: list[Metric] = []
    for item in (text or "").split(","):
        name, sep, value = item.partition("=")
        if sep:
            found = _metric(name, value)
            if found is not None:
                out.append(found)
    return out


def _percent(value: float, fmt: str, invalid: list[str]) -> float | None:
    if not 0 <= value <= 100:
        invalid.append(f"{fmt}: progress {value:g}% is outside 0-100")
        return None
    return value


def _eta(value: float | None, fmt: str, invalid: list[str]) -> float | None:
    if value is not None and value < 0:
        invalid.append(f"{fmt}: ETA {value:g}s is negative")
        return None
    return value


def _tqdm(line: str) -> LineProgress | None:
    at = line.rfind("%|")
    if at < 1:
        return None
    start = at
    while start > 0 and at - start < 4 and line[start - 1].isdigit():
        start -= 1
    if start == at:
        return None
    negative = start > 0 and line[start - 1] == "-"
    match = _pattern("tqdm").match(line, at + 2)
    if match is None:
        return None
    pct = -float(line[start:at]) if negative else float(line[start:at])
    desc = line[: start - 1 if negative else start].strip().rstrip(":").strip()
    metrics = _postfix(match.group("postfix"))
    fmt = "tqdm"
    lightning = _pattern("lightning").match(desc)
    torchtune = _pattern("torchtune").match(desc)
    if lightning is not None:
        fmt = "lightning"
        metrics.insert(0, Metric("epoch", lightning.group("epoch")))
    elif torchtune is not None:
        fmt = "torchtune"
        metrics[:0] = [
            Metric("epoch", torchtune.group("epoch")),
            Metric("step", torchtune.group("step")),
            Metric("loss", torchtune.group("loss")[:MAX_METRIC_TEXT]),
        ]
    invalid: list[str] = []
    remaining = match.group("remaining")
    eta = -1.0 if remaining.startswith("-") else _clock_seconds(remaining)
    return LineProgress(
        format=fmt,
        percent=_percent(pct, fmt, invalid),
        eta=_eta(eta, fmt, invalid),
        metrics=metrics,
        invalid=invalid,
        evaluation=bool(desc) and desc.split()[0].lower().rstrip(":") in EVAL_WORDS,
    )


def _keras_eta(text: str | None) -> float | None:
    if not text:
        return None
    if text.endswith("s"):
        return float(text[:-1])
    return _clock_seconds(text)


def _keras(line: str, epoch: tuple[int, int] | None) -> LineProgress | None:
    # Both forms of the line have a time per step (`5ms/step`, `1s/epoch`): without `s/` the
    # pattern cannot match, and a log of other lines never compiles it (0.3 ms of `job get`).
    if "s/" not in line:
        return None
    match = _pattern("keras").match(line)
    if match is None:
        return None
    n, total = int(match.group("n")), int(match.group("total"))
    invalid: list[str] = []
    metrics: list[Metric] = []
    for part in (match.group("rest") or "").split(" - "):
        name, sep, value = part.partition(":")
        if sep:
            found = _metric(name, value)
            if found is not None:
                metrics.append(found)
    percent: float | None = None
    if total > 0:
        fraction = n / total
        if epoch is not None and epoch[1] > 0:
            fraction = (epoch[0] - 1 + fraction) / epoch[1]
            metrics.insert(0, Metric("epoch", f"{epoch[0]}/{epoch[1]}"))
        percent = _percent(100 * fraction, "keras", invalid)
    eta = 0.0 if match.group("elapsed") is not None or n >= total else _keras_eta(match.group("eta"))
    if epoch is not None and epoch[1] > 0 and eta is not None and n < total and epoch[0] < epoch[1]:
        eta = None  # the bar's ETA is this epoch's; the run's is not known
    return LineProgress(format="keras", percent=percent, eta=eta, metrics=metrics, invalid=invalid)


def _lightning_rich(line: str) -> LineProgress | None:
    if not line.lstrip().startswith("Epoch ") or "•" not in line:
        return None
    match = _pattern("rich").match(line)
    if match is None:
        return None
    epoch, last = int(match.group("epoch")), int(match.group("last"))
    n, total = int(match.group("n")), int(match.group("total"))
    invalid: list[str] = []
    metrics = [Metric("epoch", str(epoch))]
    words = (match.group("rest") or "").split()
    for name, value in zip(words[::2], words[1::2], strict=False):
        if name.endswith(":"):
            found = _metric(name[:-1], value)
            if found is not None:
                metrics.append(found)
    percent = _percent(100 * (epoch + n / total) / (last + 1), "lightning", invalid) if total > 0 else None
    remaining = match.group("remaining")
    eta = _clock_seconds(remaining) if remaining and epoch >= last else None  # the epoch's, else
    return LineProgress(format="lightning", percent=percent, eta=eta, metrics=metrics, invalid=invalid)


def _duration(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    if text.lstrip("-").replace(".", "", 1).isdigit():
        return float(text)
    match = _pattern("duration").match(text)
    if match is None or not any(match.groups()):
        return None
    return int(match.group("h") or 0) * 3600 + int(match.group("m") or 0) * 60 + float(match.group("s") or 0)


def _ktrain(line: str) -> LineProgress | None:
    at = line.find(KTRAIN_PREFIX)
    if at < 0:
        return None
    invalid: list[str] = []
    percent: float | None = None
    eta: float | None = None
    metrics: list[Metric] = []
    for word in line[at + len(KTRAIN_PREFIX) :].split():
        name, sep, value = word.partition("=")
        if not sep:
            continue
        if name == "percent":
            try:
                percent = _percent(float(value.rstrip("%")), "ktrain", invalid)
            except ValueError:
                invalid.append(f"ktrain: percent {value[:40]!r} is not a number")
        elif name == "step":
            done, slash, total = value.partition("/")
            if slash and done.isdigit() and total.isdigit() and int(total) > 0:
                percent = _percent(100 * int(done) / int(total), "ktrain", invalid)
                metrics.append(Metric("step", value[:MAX_METRIC_TEXT]))
            else:
                invalid.append(f"ktrain: step {value[:40]!r} is not DONE/TOTAL")
        elif name == "eta":
            seconds = _duration(value)
            if seconds is None:
                invalid.append(f"ktrain: eta {value[:40]!r} is not a duration")
            else:
                eta = _eta(seconds, "ktrain", invalid)
        else:
            found = _metric(name, value)
            if found is not None:
                metrics.append(found)
    return LineProgress(format="ktrain", percent=percent, eta=eta, metrics=metrics, invalid=invalid)


def _hf_dict(line: str) -> LineProgress | None:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")) or ("'loss'" not in text and "'epoch'" not in text):
        return None
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    metrics = []
    for name, item in value.items():
        if isinstance(name, str) and isinstance(item, int | float | str) and not isinstance(item, bool):
            found = _metric(name, item if isinstance(item, str) else f"{item:.6g}")
            if found is not None:
                metrics.append(found)
    return LineProgress(format="transformers", metrics=metrics)


def parse_line(line: str, epoch: tuple[int, int] | None = None) -> LineProgress | None:
    """What one line (without its control sequences) says, if it is one of the formats."""
    for parse in (_ktrain, _tqdm, _hf_dict, _lightning_rich):
        found = parse(line)
        if found is not None:
            return found
    return _keras(line, epoch)


def strip_sequences(text: str) -> str:
    """Terminal control sequences removed (colours, cursor moves, Keras' backspaces), as a
    terminal would not show them."""
    if "\x08" in text:
        text = text.replace("\x08", "")
    if "\x1b" not in text:
        return text
    return _pattern("ansi").sub("", text)


def tail_lines(text: str | bytes) -> list[str]:
    """The last lines of `text`, bounded: `MAX_TAIL_BYTES`, `MAX_LINES`, `MAX_LINE` each.
    tqdm and Keras redraw a bar with `\\r`: each redraw counts as a line."""
    tail = text[-MAX_TAIL_BYTES:]
    text = tail.decode("utf-8", "replace") if isinstance(tail, bytes) else tail
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [line[:MAX_LINE] for line in lines[-MAX_LINES:]]


def from_log(text: str | bytes) -> TrainerStatus | None:
    """The newest progress a log's tail shows, or None when it shows none.

    The percentage and ETA come from the newest line that has one (an evaluation bar's only when
    no training bar is left in the tail); the metrics are the newest value of each name, across
    lines (a Hugging Face dict, a bar's postfix, a Keras line)."""
    lines = [strip_sequences(line) for line in tail_lines(text)]
    epoch: tuple[int, int] | None = None
    found: list[LineProgress] = []
    for line in lines:
        if "Epoch" in line:
            match = _pattern("keras_epoch").match(line)
            if match is not None:
                epoch = (int(match.group("epoch")), int(match.group("epochs")))
                continue
        parsed = parse_line(line, epoch)
        if parsed is not None:
            found.append(parsed)
    if not found:
        return None
    with_percent = [p for p in found if p.says_progress]
    training = [p for p in with_percent if not p.evaluation] or with_percent
    lead = training[-1] if training else found[-1]
    metrics: dict[str, Metric] = {}
    for parsed in found:
        for metric in parsed.metrics:
            metrics.pop(metric.name, None)  # newest last, in the order they were last seen
            metrics[metric.name] = metric
    kept = list(metrics.values())[-MAX_METRICS:]
    invalid = lead.invalid[:8]
    percent = int(lead.percent) if lead.percent is not None else None
    eta = int(lead.eta) if lead.eta is not None else None
    fmt = lead.format
    if fmt == "tqdm" and any(p.format == "transformers" for p in found):
        fmt = "transformers"  # the Trainer's bar is a plain tqdm bar; its log dicts say whose it is
    return TrainerStatus(
        progress_percentage=percent,
        estimated_remaining_seconds=eta,
        metrics=kept,
        source=f"log ({fmt})",
        invalid=invalid,
    )


class LogTail:
    """A log read as it is written (`feed` each piece), keeping only the tail `from_log` reads:
    at most `MAX_LINES` lines of `MAX_LINE` characters and `MAX_TAIL_BYTES` characters in all,
    however long the log runs. A tqdm bar redrawn with `\\r` is one line per redraw."""

    def __init__(self) -> None:
        from collections import deque

        self.lines: deque[str] = deque()
        self.size = 0
        self.changed = False  # fed since `status` was last asked

    def feed(self, text: str) -> None:
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            if not line:
                continue
            line = line[:MAX_LINE]
            self.lines.append(line)
            self.size += len(line) + 1
            while len(self.lines) > MAX_LINES or self.size > MAX_TAIL_BYTES:
                self.size -= len(self.lines.popleft()) + 1
            self.changed = True

    def status(self) -> TrainerStatus | None:
        """What the tail shows now (`from_log`)."""
        self.changed = False
        return from_log("\n".join(self.lines)) if self.lines else None
