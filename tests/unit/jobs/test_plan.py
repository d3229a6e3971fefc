"""Small pure pieces of the submit path: durations, terminal states, ownership."""

from __future__ import annotations

import pytest

from ktrain.cli.common import parse_timeout
from ktrain.errors import UsageError
from ktrain.jobs.plan import owned_by_job


@pytest.mark.parametrize(
    "text, seconds",
    [("90", 90.0), ("90s", 90.0), ("10m", 600.0), ("1h", 3600.0), ("1.5m", 90.0), (None, None), ("0", None)],
)
def test_durations_read_like_kubectl_timeouts(text, seconds) -> None:
    assert parse_timeout(text, "--timeout") == seconds


@pytest.mark.parametrize("text", ["soon", "10x", "-5s", ""])
def test_bad_durations_are_usage_errors(text) -> None:
    with pytest.raises(UsageError, match="--timeout"):
        parse_timeout(text, "--timeout")


def test_ownership_is_by_a_jobset_or_trainjob_of_that_name() -> None:
    def owned(kind: str, name: str) -> dict:
        return {"metadata": {"ownerReferences": [{"kind": kind, "name": name, "uid": "u"}]}}

    assert owned_by_job(owned("JobSet", "a"), "a")
    assert owned_by_job(owned("TrainJob", "a"), "a")
    assert not owned_by_job(owned("JobSet", "b"), "a")
    assert not owned_by_job(owned("Deployment", "a"), "a")
    assert not owned_by_job({"metadata": {}}, "a")


def test_the_companion_suffixes_are_the_plugins_own() -> None:
    """`job delete` finds a job's companions by the names the engine gives them."""
    from ktrain.engine.plugins import flux, mpi
    from ktrain.jobs import plan

    assert plan.SSH_AUTH_SECRET_SUFFIX == mpi.SSH_AUTH_SECRET_SUFFIX
    assert plan.HOSTFILE_SUFFIX == mpi.HOSTFILE_SUFFIX
    assert plan.FLUX_ENTRYPOINT_SUFFIX == flux.ENTRYPOINT_SUFFIX
    assert plan.FLUX_CURVE_SUFFIX == flux.CURVE_SUFFIX
