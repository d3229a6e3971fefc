"""`ktrain.jobs.prune`: which listed jobs `job prune` deletes: finished (Complete/Failed), old enough
by the time their terminal condition became True, oldest first; pure (the time comes in)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from ktrain.jobs.prune import finished_at, select
from ktrain.jobs.state import COMPLETE, FAILED, RUNNING, JobSummary

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
DAY = 86400.0


def at(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def job(name: str, state: str, *, created: str | None = None, finished: str | None = None, ns: str = "ns") -> Any:
    conditions = []
    if finished is not None:
        kind = "Failed" if state == FAILED else "Completed"
        conditions = [{"type": kind, "status": "True", "lastTransitionTime": finished}]
    obj = {"metadata": {"name": name, "uid": f"uid-{name}"}, "status": {"conditions": conditions}}
    summary = JobSummary(kind="JobSet", name=name, namespace=ns, state=state, runtime=None, nodes=None, created=created)
    return summary, obj


def test_finished_at_is_when_the_terminal_condition_became_true() -> None:
    obj = {
        "status": {
            "conditions": [
                {"type": "Suspended", "status": "True", "lastTransitionTime": at(9)},
                {"type": "Failed", "status": "False", "lastTransitionTime": at(8)},
                {"type": "Complete", "status": "True", "lastTransitionTime": at(2)},
            ]
        }
    }
    assert finished_at(obj) == at(2)
    assert finished_at({"status": {"conditions": [{"type": "Failed", "status": "False"}]}}) is None
    assert finished_at({}) is None


def test_age_counts_from_the_finish_not_the_creation_and_the_oldest_comes_first() -> None:
    jobs = [
        job("young-finish", COMPLETE, created=at(30), finished=at(1)),
        job("old", FAILED, created=at(12), finished=at(10)),
        job("older", COMPLETE, created=at(20), finished=at(15)),
    ]
    chosen = select(jobs, now=NOW, older_than=2 * DAY)
    assert [(c.name, c.uid, c.finished) for c in chosen] == [
        ("older", "uid-older", at(15)),
        ("old", "uid-old", at(10)),
    ]
    assert chosen[0].age == 15 * DAY


def test_running_jobs_are_never_chosen_and_states_narrow_the_choice() -> None:
    jobs = [job("r", RUNNING, created=at(50)), job("c", COMPLETE, finished=at(5)), job("f", FAILED, finished=at(5))]
    assert [c.name for c in select(jobs, now=NOW)] == ["c", "f"]
    assert [c.name for c in select(jobs, now=NOW, states=(FAILED,))] == ["f"]


def test_without_a_finish_the_creation_counts_and_without_either_it_is_never_old_enough() -> None:
    jobs = [job("created-only", COMPLETE, created=at(3)), job("timeless", COMPLETE), job("bad", FAILED, created="x")]
    assert [c.name for c in select(jobs, now=NOW, older_than=DAY)] == ["created-only"]
    assert {c.name: c.age for c in select(jobs, now=NOW)} == {"created-only": 3 * DAY, "timeless": 0.0, "bad": 0.0}


def test_a_time_without_a_zone_is_utc() -> None:
    (chosen,) = select([job("naive", COMPLETE, finished="2026-06-01T11:00:00")], now=NOW)
    assert chosen.age == 3600.0
