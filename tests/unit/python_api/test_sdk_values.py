"""`ktrain.python_api.sdk_values`: values as the Kubeflow SDK reads and prints them, held to what the
SDK's own models (kubeflow_trainer_api, pydantic) make of the same input."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from kubeflow_trainer_api import models

from ktrain.python_api.sdk_values import creation_time, local_now, quantity_text


@pytest.mark.parametrize("value", [2, 2.0, 2.5, 0, "2", "4Gi", "500m", "1e3"])
def test_a_quantity_reads_as_the_sdks_models_read_it(value: object) -> None:
    limits = models.IoK8sApiCoreV1ResourceRequirements.from_dict({"limits": {"x": value}}).limits
    assert limits is not None
    assert quantity_text(value) == str(limits["x"].actual_instance)


def test_an_integer_beyond_a_float_stays_as_written() -> None:
    assert quantity_text(10**400) == str(10**400)


@pytest.mark.parametrize("stamp", ["2025-01-01T00:00:00Z", "2025-06-30T12:34:56Z", "2025-06-30T12:34:56+02:00"])
def test_a_creation_time_is_the_sdks(stamp: str) -> None:
    meta = models.IoK8sApimachineryPkgApisMetaV1ObjectMeta.from_dict({"creationTimestamp": stamp})
    theirs = meta.creation_timestamp
    ours = creation_time(stamp)
    assert (repr(ours), type(ours.tzinfo)) == (repr(theirs), type(theirs.tzinfo))


def test_a_missing_or_unreadable_time_falls_back() -> None:
    assert creation_time(None) == datetime(1970, 1, 1, tzinfo=timezone.utc)
    parsed = datetime(2025, 1, 2, 3, 4, 5)
    assert creation_time("not a time", parsed) == parsed.replace(tzinfo=timezone.utc)
    assert repr(creation_time(None)).endswith("tzinfo=TzInfo(0))")


def test_a_local_process_jobs_time_is_naive_local_time() -> None:
    assert local_now().tzinfo is None
