"""`--priority-class` and `--scheduler kai` (`ktrain.authoring.scheduling`): the checks and what they
set on the rendered objects. The render through bundled runtimes is in tests/test_placement_render.py."""

from __future__ import annotations

import pytest

from ktrain.authoring.scheduling import apply, check_scheduler, refuse_for_trainjob
from ktrain.errors import UsageError


def jobset(*names: str) -> dict:
    rjobs = [{"name": n, "template": {"spec": {"template": {"spec": {"containers": []}}}}} for n in names]
    return {"kind": "JobSet", "spec": {"replicatedJobs": rjobs}}


def pods(obj: dict) -> list[dict]:
    return [r["template"]["spec"]["template"]["spec"] for r in obj["spec"]["replicatedJobs"]]


def test_the_default_scheduler_needs_nothing() -> None:
    check_scheduler(None, allow_extensions=False, runtime_gang="Volcano")
    check_scheduler("default", allow_extensions=False, runtime_gang="Volcano")


def test_kai_is_an_extension_and_cannot_share_a_job_with_the_runtimes_gang_scheduler() -> None:
    check_scheduler("kai", allow_extensions=True, runtime_gang=None)
    with pytest.raises(UsageError, match="ktrain extension") as err:
        check_scheduler("kai", allow_extensions=False, runtime_gang=None)
    assert err.value.hint == "add --allow-extensions to use it"
    with pytest.raises(UsageError, match=r"gang-schedules with Volcano .* one job cannot use two schedulers"):
        check_scheduler("kai", allow_extensions=True, runtime_gang="Volcano")
    with pytest.raises(UsageError, match="unknown scheduler 'yunikorn'") as err:
        check_scheduler("yunikorn", allow_extensions=True, runtime_gang=None)
    assert err.value.hint == "one of: default, kai"


def test_a_trainjob_refuses_a_priority_class_or_a_scheduler_but_not_the_default() -> None:
    refuse_for_trainjob(priority_class=None, scheduler=None)
    refuse_for_trainjob(priority_class=None, scheduler="default")
    with pytest.raises(UsageError, match=r"^--priority-class cannot travel in a TrainJob.*priorityClassName"):
        refuse_for_trainjob(priority_class="high", scheduler=None)
    with pytest.raises(UsageError, match=r"^--scheduler cannot travel in a TrainJob.*schedulerName") as err:
        refuse_for_trainjob(priority_class=None, scheduler="kai")
    assert err.value.hint == "use --target jobset, or a runtime whose pod templates set it"


def test_priority_and_kai_reach_every_pod_and_the_volcano_pod_group() -> None:
    js = jobset("launcher", "node")
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "spec": {"minMember": 2}}
    other_group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "spec": {}}
    apply([js, group, other_group], priority_class="high", scheduler="kai")
    assert all(p["priorityClassName"] == "high" and p["schedulerName"] == "kai-scheduler" for p in pods(js))
    assert group["spec"] == {"minMember": 2, "priorityClassName": "high"}
    assert other_group["spec"] == {}  # only Volcano's PodGroup has the field


def test_nothing_given_changes_nothing() -> None:
    js = jobset("node")
    apply([js], priority_class=None, scheduler="default")
    assert pods(js) == [{"containers": []}]
