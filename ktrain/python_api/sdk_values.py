"""Values as the Kubeflow SDK prints them (SDK 0.5), for what `TrainerClient` returns.

The SDK reads the cluster's objects through `kubeflow_trainer_api`'s pydantic models, so a
quantity written as a JSON number (`nvidia.com/gpu: 2` in a runtime) reaches it as a float and
prints `'2.0'` (one written as a string, `"2"` or `"4Gi"`, stays as written), and a TrainJob's
`creation_timestamp` is pydantic's datetime (`tzinfo=TzInfo(0)`). Its local process backend keeps
the machine's naive local time. tests/test_sdk_notebooks.py holds ktrain's printed output to the
SDK's.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def quantity_text(value: object) -> str:
    """A resource quantity as the SDK's `device_count`: a number as its float (`2` -> `'2.0'`), a
    string as written."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return str(float(value))
        except OverflowError:  # an integer beyond a float's range: no count the SDK could read either
            return str(value)
    return str(value)


_TIMES: Any = None


def creation_time(stamp: object, parsed: datetime | None = None) -> datetime:
    """An object's `metadata.creationTimestamp` as the SDK's models read it (pydantic's datetime,
    its TzInfo); else `parsed` (ktrain's reading of it) in pydantic's form; else the epoch."""
    global _TIMES
    from pydantic import TypeAdapter, ValidationError

    if _TIMES is None:
        _TIMES = TypeAdapter(datetime)
    if isinstance(stamp, str):
        try:
            when = _TIMES.validate_python(stamp)
        except ValidationError:
            when = None
        if isinstance(when, datetime):
            return when
    if parsed is None:
        parsed = datetime.fromtimestamp(0, tz=timezone.utc)
    elif parsed.tzinfo is None:  # the API server writes UTC
        parsed = parsed.replace(tzinfo=timezone.utc)
    return _TIMES.validate_python(parsed.isoformat())  # type: ignore[no-any-return]  # a datetime


def local_now() -> datetime:
    """When a local job was created, as the SDK's local process backend records it (`datetime.now()`)."""
    return datetime.now()
