"""`TrainerStatus`: progress, ETA and metrics of one run, and `TrainJob.status.trainerStatus` read into it.

The Trainer's CRD bounds what the status server may write (`progressPercentage` 0–100,
`estimatedRemainingSeconds` ≥ 0, at most 256 metrics whose name and value are 1–64 characters,
`lastUpdatedTime` required), but a status is read from a server, so every value is checked again
here: what is out of bounds is kept out and said (`invalid`), never trusted.
"""

from __future__ import annotations

from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

MAX_METRICS = 256  # the CRD's maxItems, and the SDK's cap
MAX_METRIC_TEXT = 64  # the CRD's maxLength of a metric's name and value
INT32_MAX = 2**31 - 1
SOURCE_STATUS = "status"  # TrainJob.status.trainerStatus; a log's is "log (<format>)"


@struct(frozen=True, slots=True)
class Metric:
    name: str
    value: str

    def number(self) -> float | None:
        """The value as a number (`0.2347`, `4.5e-05`), None when it is not one."""
        text = self.value.strip()
        if not text or len(text) > MAX_METRIC_TEXT:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
        return number if number == number and abs(number) != float("inf") else None


@struct(slots=True)
class TrainerStatus:
    """What a run says about its progress. None: not said (or not trusted: see `invalid`)."""

    progress_percentage: int | None = None
    estimated_remaining_seconds: int | None = None
    metrics: list[Metric] = field(default_factory=list)
    last_updated_time: str | None = None  # RFC 3339, as written; None for a log's
    source: str = SOURCE_STATUS
    # What was out of bounds, as one short phrase each ("progressPercentage 250 is outside 0-100").
    invalid: list[str] = field(default_factory=list)

    def metric(self, name: str) -> Metric | None:
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    def to_dict(self) -> dict[str, Any]:
        """As `-o json|yaml` carry it: the CRD's field names, and where it came from."""
        out: dict[str, Any] = {}
        if self.progress_percentage is not None:
            out["progressPercentage"] = self.progress_percentage
        if self.estimated_remaining_seconds is not None:
            out["estimatedRemainingSeconds"] = self.estimated_remaining_seconds
        if self.metrics:
            out["metrics"] = [{"name": m.name, "value": m.value} for m in self.metrics]
        if self.last_updated_time is not None:
            out["lastUpdatedTime"] = self.last_updated_time
        out["source"] = self.source
        if self.invalid:
            out["invalid"] = list(self.invalid)
        return out


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text[:40] + ("..." if len(text) > 40 else "")


def _bounded_int(value: Any, name: str, low: int, high: int, invalid: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        invalid.append(f"{name} {_short(value)} is not a number")
        return None
    if isinstance(value, float) and not value.is_integer():
        invalid.append(f"{name} {_short(value)} is not a whole number")
        return None
    if not low <= value <= high:
        invalid.append(f"{name} {_short(value)} is outside {low}-{high}")
        return None
    return int(value)


def read_metrics(items: Any, invalid: list[str]) -> list[Metric]:
    """`metrics[]` as the CRD holds them: at most 256 `{name, value}` strings of 1-64 characters."""
    if items is None:
        return []
    if not isinstance(items, list):
        invalid.append("metrics is not a list")
        return []
    if len(items) > MAX_METRICS:
        invalid.append(f"{len(items)} metrics, more than {MAX_METRICS}: the rest are left out")
        items = items[:MAX_METRICS]
    out: list[Metric] = []
    for item in items:
        if not isinstance(item, dict):
            invalid.append("a metric is not a mapping")
            continue
        name, value = item.get("name"), item.get("value")
        if not isinstance(name, str) or not isinstance(value, str) or not name or not value:
            invalid.append(f"metric {_short(name)}: name and value must be non-empty strings")
            continue
        if len(name) > MAX_METRIC_TEXT or len(value) > MAX_METRIC_TEXT:
            invalid.append(f"metric {_short(name)}: longer than {MAX_METRIC_TEXT} characters")
            name, value = name[:MAX_METRIC_TEXT], value[:MAX_METRIC_TEXT]
        out.append(Metric(name, value))
    return out


def from_trainjob_status(status: Any) -> TrainerStatus | None:
    """`TrainJob.status.trainerStatus` (the mapping at `status`), or None when there is none."""
    if not isinstance(status, dict):
        return None
    raw = status.get("trainerStatus")
    if raw is None:
        return None
    invalid: list[str] = []
    if not isinstance(raw, dict):
        return TrainerStatus(invalid=["trainerStatus is not a mapping"])
    percent = _bounded_int(raw.get("progressPercentage"), "progressPercentage", 0, 100, invalid)
    eta = _bounded_int(raw.get("estimatedRemainingSeconds"), "estimatedRemainingSeconds", 0, INT32_MAX, invalid)
    updated = raw.get("lastUpdatedTime")
    if updated is not None and (not isinstance(updated, str) or len(updated) > 64 or parse_time(updated) is None):
        invalid.append(f"lastUpdatedTime {_short(updated)} is not a time")
        updated = None
    return TrainerStatus(
        progress_percentage=percent,
        estimated_remaining_seconds=eta,
        metrics=read_metrics(raw.get("metrics"), invalid),
        last_updated_time=updated,
        invalid=invalid,
    )


def of_trainjob(trainjob: dict[str, Any] | None) -> TrainerStatus | None:
    """What a TrainJob object's status says (None: no trainerStatus, or no TrainJob)."""
    return from_trainjob_status((trainjob or {}).get("status"))


def parse_time(text: str) -> float | None:
    """An RFC 3339 time (`2026-06-12T03:00:00Z`, `...+00:00`, fractions) as POSIX seconds."""
    from datetime import datetime

    if not 10 <= len(text) <= 64:
        return None
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()


def age_seconds(status: TrainerStatus, now: float) -> float | None:
    """How long ago the status was written (None: unknown)."""
    if status.last_updated_time is None:
        return None
    written = parse_time(status.last_updated_time)
    return None if written is None else max(0.0, now - written)


STALE_SECONDS = 300.0  # no update for this long while pods run: `job get` warns


def is_stale(status: TrainerStatus, now: float, *, running: bool, after: float = STALE_SECONDS) -> bool:
    age = age_seconds(status, now)
    return running and age is not None and age > after and status.progress_percentage != 100
