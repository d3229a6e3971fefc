"""`ktrain job suspend` and `ktrain job resume` on the API-server double: they set only spec.suspend
(a merge patch) of the job's TrainJob, else of its JobSet; say what they did, once per name; and
refuse a finished job or a missing one without writing anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
NS = "team-a"
JOBSET = "jobsets.jobset.x-k8s.io"
TRAINJOB = "trainjobs.trainer.kubeflow.org"


def _create(cli: Any, kube: Any, name: str, *flags: str, namespace: str = NS) -> None:
    r = cli(
        "job", "create", *kube.args(), "-n", namespace, "-r", "torch-distributed", "--name", name, *flags, "--", "t"
    )
    assert r.exit_code == 0, r.stderr
    kube.created = len(kube.srv.requests)  # what create sent (it resumes the JobSet it made) is not ours


def _patches(kube: Any) -> list[tuple[str, str, Any, str]]:
    """The patches sent since the last job was created."""
    return [
        (r.resource, r.name, json.loads(r.body), r.headers.get("Content-Type"))
        for r in kube.srv.requests[getattr(kube, "created", 0) :]
        if r.verb == "patch"
    ]


def test_suspend_and_resume_set_only_spec_suspend_of_a_jobset(cli: Any, kube: Any) -> None:
    _create(cli, kube, "a")  # no Trainer controller here: a JobSet of its own
    before = kube.srv.get_object("jobsets", "a", NS)
    r = cli("job", "suspend", "a", *kube.args())
    assert (r.exit_code, r.stdout, r.stderr) == (0, "jobset.jobset.x-k8s.io/a suspended\n", "")
    after = kube.srv.get_object("jobsets", "a", NS)
    assert after["spec"]["suspend"] is True
    assert {k: v for k, v in after["spec"].items() if k != "suspend"} == {
        k: v for k, v in before["spec"].items() if k != "suspend"
    }
    r = cli("job", "resume", "a", *kube.args())
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/a resumed\n")
    assert kube.srv.get_object("jobsets", "a", NS)["spec"]["suspend"] is False
    merge = "application/merge-patch+json"
    assert _patches(kube) == [
        (JOBSET, "a", {"spec": {"suspend": True}}, merge),
        (JOBSET, "a", {"spec": {"suspend": False}}, merge),
    ]


def test_a_job_already_so_is_no_change_and_no_write(cli: Any, kube: Any) -> None:
    _create(cli, kube, "a")
    assert cli("job", "suspend", "a", *kube.args()).exit_code == 0
    r = cli("job", "suspend", "a", *kube.args())
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/a suspended (no change)\n")
    assert len(_patches(kube)) == 1


def test_a_trainjob_is_suspended_not_its_jobset(cli: Any, kube: Any) -> None:
    kube.srv.put_object(yaml.safe_load((REPO / "runtimes" / "torch-distributed.yaml").read_text()))
    _create(cli, kube, "t", "--target", "trainjob")
    assert kube.srv.get_object("trainjobs", "t", NS) is not None
    r = cli("job", "suspend", "t", *kube.args())
    assert (r.exit_code, r.stdout) == (0, "trainjob.trainer.kubeflow.org/t suspended\n"), r.stderr
    assert kube.srv.get_object("trainjobs", "t", NS)["spec"]["suspend"] is True
    assert [(resource, name, body) for resource, name, body, _ in _patches(kube)] == [
        (TRAINJOB, "t", {"spec": {"suspend": True}})
    ]


def test_each_name_once_in_the_order_given_and_in_the_namespace_asked(cli: Any, kube: Any) -> None:
    kube.srv.add_namespace("team-b")
    for name in ("a", "b"):
        _create(cli, kube, name, namespace="team-b")
    r = cli("job", "suspend", "b", "a", "b", "-n", "team-b", *kube.args())
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/b suspended\njobset.jobset.x-k8s.io/a suspended\n")
    assert [name for _, name, _, _ in _patches(kube)] == ["b", "a"]
    r = cli("job", "suspend", "a", *kube.args())  # the kubeconfig's namespace has no job a
    assert r.exit_code == 4 and 'job "a" not found in namespace team-a' in r.stderr


def test_a_finished_job_has_nothing_to_suspend_or_resume(cli: Any, kube: Any) -> None:
    _create(cli, kube, "done")
    cond = {
        "type": "Completed",
        "status": "True",
        "reason": "x",
        "message": "x",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    kube.srv.set_status("jobsets", "done", {"conditions": [cond]}, namespace=NS)
    for verb in ("suspend", "resume"):
        r = cli("job", verb, "done", *kube.args())
        assert r.exit_code != 0 and r.stdout == ""
        assert f"job done is Complete: there is nothing to {verb}" in r.stderr
        assert "Traceback" not in r.stderr
    assert _patches(kube) == []


def test_a_missing_job_is_not_found_and_nothing_is_written(cli: Any, kube: Any) -> None:
    r = cli("job", "resume", "nope", *kube.args())
    assert r.exit_code == 4 and r.stdout == ""
    assert 'job "nope" not found in namespace team-a (no TrainJob or JobSet of that name)' in r.stderr
    assert _patches(kube) == []
    r = cli("job", "suspend", *kube.args())
    assert r.exit_code == 2 and "Missing argument 'names'" in r.stderr
