"""`ktrain job prune` on the API-server double: it lists the finished jobs it would delete, asks,
and deletes exactly those (a job created while it asks is left alone, as is a running one)."""

from __future__ import annotations

import io
import sys
from datetime import datetime, timedelta, timezone

import pytest

from ktrain.jobs.prune import select
from ktrain.jobs.state import JobSummary

NS = "team-a"
NOW = datetime.now(timezone.utc)


def _at(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _create(cli, kube, name: str) -> None:  # type: ignore[no-untyped-def]
    r = cli("job", "create", *kube.args(), "-r", "torch-distributed", "--name", name, "--", "torchrun", "t.py")
    assert r.exit_code == 0, r.stderr


def _finish(kube, name: str, kind: str, days: float) -> None:  # type: ignore[no-untyped-def]
    cond = {"type": kind, "status": "True", "reason": "x", "message": "x", "lastTransitionTime": _at(days)}
    kube.srv.set_status("jobsets", name, {"conditions": [cond]}, namespace=NS)


@pytest.fixture
def jobs(cli, kube):  # type: ignore[no-untyped-def]
    for name in ("old-ok", "old-bad", "new-ok", "running"):
        _create(cli, kube, name)
    _finish(kube, "old-ok", "Completed", 10)
    _finish(kube, "old-bad", "Failed", 9)
    _finish(kube, "new-ok", "Completed", 1)
    return kube


def _names(kube) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(o["metadata"]["name"] for o in kube.srv.objects("jobsets", NS))


def test_dry_run_client_lists_and_deletes_nothing(cli, jobs) -> None:  # type: ignore[no-untyped-def]
    r = cli("job", "prune", *jobs.args(), "--older-than", "7d", "--dry-run=client")
    assert r.exit_code == 0, r.stderr
    rows = [line.split()[:3] for line in r.stdout.splitlines()[1:]]
    assert rows == [["old-ok", "JobSet", "Complete"], ["old-bad", "JobSet", "Failed"]]  # oldest first
    assert "2 jobs would be deleted (client dry run)" in r.stderr
    assert _names(jobs) == ["new-ok", "old-bad", "old-ok", "running"]
    assert jobs.srv.requests_for("delete", "jobsets") == []


def test_state_and_age_choose_and_yes_deletes_with_companions(cli, jobs) -> None:  # type: ignore[no-untyped-def]
    r = cli("job", "prune", *jobs.args(), "--state", "failed", "--yes")
    assert r.exit_code == 0, r.stderr
    assert 'jobset.jobset.x-k8s.io "old-bad" deleted' in r.stdout
    assert _names(jobs) == ["new-ok", "old-ok", "running"]
    r = cli("job", "prune", *jobs.args(), "--dry-run=server", "--yes")
    assert "(server dry run)" in r.stdout
    assert _names(jobs) == ["new-ok", "old-ok", "running"]


def test_only_what_was_listed_is_deleted_even_if_a_job_appears_during_the_prompt(cli, jobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """While the prompt waits, a job finishes, and a listed one is deleted and created again
    under its name: neither is deleted (the second by the uid precondition)."""

    class Answer(io.StringIO):
        def readline(self, *args: object) -> str:
            monkeypatch.undo()  # the cli fixture's streams: the commands below print for themselves
            _create(cli, jobs, "late")
            _finish(jobs, "late", "Completed", 30)
            assert cli("job", "delete", *jobs.args(), "old-ok").exit_code == 0
            _create(cli, jobs, "old-ok")
            return "y\n"

    out = io.StringIO()
    from ktrain.cli import main

    monkeypatch.setattr(sys, "stdin", Answer())
    monkeypatch.setattr(sys, "stdout", out)
    code = main(["job", "prune", *jobs.args(), "--older-than", "7d"])
    assert code == 0
    assert _names(jobs) == ["late", "new-ok", "old-ok", "running"]
    assert not jobs.srv.get_object("jobsets", "old-ok", NS).get("status", {}).get("conditions")  # the new one


def test_no_answer_deletes_nothing(cli, jobs) -> None:  # type: ignore[no-untyped-def]
    r = cli("job", "prune", *jobs.args(), stdin="n\n")
    assert r.exit_code != 0
    assert _names(jobs) == ["new-ok", "old-bad", "old-ok", "running"]


def test_select_is_pure_and_never_picks_a_running_or_timeless_job() -> None:
    def summary(name: str, state: str, created: str | None) -> JobSummary:
        return JobSummary(
            kind="JobSet", name=name, namespace=NS, state=state, runtime=None, nodes=None, created=created
        )

    jobs = [
        (summary("a", "Complete", _at(20)), {"metadata": {"uid": "1"}}),
        (summary("b", "Running", _at(20)), {}),
        (summary("c", "Failed", None), {}),
    ]
    chosen = select(jobs, now=NOW, older_than=86400.0)
    assert [(c.name, c.uid) for c in chosen] == [("a", "1")]
    assert [c.name for c in select(jobs, now=NOW)] == ["a", "c"]
