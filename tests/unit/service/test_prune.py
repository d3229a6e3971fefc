"""`job prune`'s use case on the API-server double: list_candidates chooses the finished jobs,
prune deletes exactly those listed (and their companions), a job replaced since is left alone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from cli.jobs_double import seed

from ktrain.service.prune import STATES, list_candidates, prune

NS = "team-a"
NOW = datetime.now(timezone.utc)


def _finish(kube: Any, name: str, kind: str, days: float) -> None:
    at = (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cond = {"type": kind, "status": "True", "reason": "x", "message": "x", "lastTransitionTime": at}
    kube.srv.set_status("jobsets", name, {"conditions": [cond]}, namespace=NS)


def _seed(kube: Any) -> None:
    for name in ("old-ok", "old-bad", "new-ok", "running"):
        seed(kube.srv, name, namespace=NS)
    _finish(kube, "old-ok", "Completed", 10)
    _finish(kube, "old-bad", "Failed", 9)
    _finish(kube, "new-ok", "Completed", 1)


def _names(kube: Any) -> list[str]:
    return sorted(o["metadata"]["name"] for o in kube.srv.objects("jobsets", NS))


def test_finished_jobs_are_the_candidates_by_state_and_age(cluster: Any, kube: Any) -> None:
    _seed(kube)
    assert sorted(c.name for c in list_candidates(cluster, now=NOW)) == ["new-ok", "old-bad", "old-ok"]
    old = list_candidates(cluster, now=NOW, older_than=timedelta(days=5).total_seconds())
    assert sorted(c.name for c in old) == ["old-bad", "old-ok"]
    failed = list_candidates(cluster, now=NOW, states=(STATES["failed"],))
    assert [c.name for c in failed] == ["old-bad"]


def test_a_dry_run_deletes_nothing(cluster: Any, kube: Any) -> None:
    _seed(kube)
    outcome = prune(cluster, list_candidates(cluster, now=NOW), dry_run=True)
    assert outcome.skipped == []
    assert {w.name for w in outcome.deleted} >= {"old-ok", "old-bad", "new-ok"}
    assert _names(kube) == ["new-ok", "old-bad", "old-ok", "running"]


def test_prune_deletes_what_was_listed_and_leaves_a_replaced_job(cluster: Any, kube: Any) -> None:
    _seed(kube)
    candidates = list_candidates(cluster, now=NOW, states=(STATES["complete"],))
    kube.srv.delete_object("jobsets", "new-ok", namespace=NS)
    seed(kube.srv, "new-ok", namespace=NS)  # created again under the same name: a new uid
    outcome = prune(cluster, candidates)
    assert outcome.skipped == [f"{NS}/new-ok: replaced since it was listed, not deleted"]
    assert _names(kube) == ["new-ok", "old-bad", "running"]
