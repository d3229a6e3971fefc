"""The Volcano gang-scheduling plugin (`ktrain.engine.plugins.volcano`, upstream
`plugins/volcano/volcano.go`, ENGINE.md §7.2, V30/V31): the PodGroup and the pod annotation,
rendered through the engine on the bundled torch runtime with `podGroupPolicy.volcano` set (as
upstream's `examples/yaml/04-volcano-integration.yaml` does)."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.engine.plugins.volcano import VolcanoPlugin
from ktrain.errors import ValidationFailedError

from .renders import bundled, bundled_job, objects, of_kind

RESOURCES = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}}


def volcano_runtime(policy: dict[str, Any] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    rt = bundled("torch-distributed")
    rt["spec"]["podGroupPolicy"] = {"volcano": policy or {}}
    if annotations:
        rt["spec"]["template"]["metadata"] = {"annotations": annotations}
    return rt


def render(rt: dict[str, Any], **ctx: Any) -> list[dict[str, Any]]:
    return objects(
        bundled_job("torch-distributed", "volcano-example", numNodes=4, resourcesPerNode=RESOURCES), rt, **ctx
    )


def pod_annotations(found: list[dict[str, Any]]) -> list[dict[str, str]]:
    (jobset,) = of_kind(found, "JobSet")
    return [
        r["template"]["spec"]["template"].get("metadata", {}).get("annotations", {})
        for r in jobset["spec"]["replicatedJobs"]
    ]


def test_the_upstream_volcano_example_renders_its_podgroup() -> None:
    """ENGINE.md §13.3: minMember 4, minResources the sum of the requests; no queue (Volcano defaults
    it), no priorityClassName, no networkTopology."""
    found = render(volcano_runtime())
    (group,) = of_kind(found, "PodGroup")
    assert group["apiVersion"] == c.VOLCANO_API_VERSION == "scheduling.volcano.sh/v1beta1"
    assert group["metadata"]["name"] == "volcano-example" and group["metadata"]["namespace"] == "ns"
    assert group["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    assert group["spec"] == {"minMember": 4, "minResources": {"cpu": "4", "memory": "8Gi"}}
    assert pod_annotations(found) == [{c.VOLCANO_GROUP_NAME_ANNOTATION: "volcano-example"}]


def test_without_the_policy_there_is_no_podgroup_and_no_annotation() -> None:
    found = objects(bundled_job("torch-distributed", numNodes=2), bundled("torch-distributed"))
    assert of_kind(found, "PodGroup") == []
    assert pod_annotations(found) == [{}]


def test_the_queue_comes_from_the_runtime_template_annotations_and_lands_on_the_jobset() -> None:
    found = render(volcano_runtime(annotations={c.VOLCANO_QUEUE_ANNOTATION: "research"}))
    (group,) = of_kind(found, "PodGroup")
    assert group["spec"]["queue"] == "research"
    (jobset,) = of_kind(found, "JobSet")
    assert jobset["metadata"]["annotations"][c.VOLCANO_QUEUE_ANNOTATION] == "research"


def test_the_queue_is_not_read_from_the_trainjob_annotations() -> None:
    data = bundled_job("torch-distributed", numNodes=1)
    data["metadata"]["annotations"] = {c.VOLCANO_QUEUE_ANNOTATION: "research"}
    (group,) = of_kind(objects(data, volcano_runtime()), "PodGroup")
    assert "queue" not in group["spec"]


def test_an_empty_queue_name_is_refused() -> None:
    with pytest.raises(ValidationFailedError) as err:
        render(volcano_runtime(annotations={c.VOLCANO_QUEUE_ANNOTATION: ""}))
    (error,) = err.value.errors
    assert error.path == f"spec.annotations[{c.VOLCANO_QUEUE_ANNOTATION}]"
    assert "Volcano queue name must not be empty" in error.message


def test_the_network_topology_is_copied_with_its_crd_defaults() -> None:
    (group,) = of_kind(render(volcano_runtime({"networkTopology": {}})), "PodGroup")
    assert group["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    (group,) = of_kind(
        render(volcano_runtime({"networkTopology": {"mode": "soft", "highestTierAllowed": 3}})), "PodGroup"
    )
    assert group["spec"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 3}


def _with_priorities(*names: str | None) -> dict[str, Any]:
    rt = volcano_runtime()
    first = rt["spec"]["template"]["spec"]["replicatedJobs"][0]
    rjobs = []
    for i, name in enumerate(names):
        rjob = bundled("torch-distributed")["spec"]["template"]["spec"]["replicatedJobs"][0]
        if i:
            rjob["name"] = f"extra-{i}"
            rjob["template"]["metadata"]["labels"] = {}
        if name:
            rjob["template"]["spec"]["template"]["spec"]["priorityClassName"] = name
        rjobs.append(rjob)
    assert first["name"] == rjobs[0]["name"]
    rt["spec"]["template"]["spec"]["replicatedJobs"] = rjobs
    return rt


def test_the_priority_class_is_the_last_replicated_job_that_sets_one() -> None:
    (group,) = of_kind(render(_with_priorities("low", "high", None)), "PodGroup")
    assert group["spec"]["priorityClassName"] == "high"


def test_an_unknown_priority_class_is_refused_only_when_the_cluster_is_known() -> None:
    rt = _with_priorities("missing")
    assert of_kind(render(rt), "PodGroup")  # offline: nothing to check against
    with pytest.raises(ValidationFailedError) as err:
        render(rt, priority_classes=frozenset({"high"}))
    (error,) = err.value.errors
    assert error.path == "spec.templateSpec.priorityClassName"
    assert error.message.startswith('PriorityClass "missing" doesn\'t exist')
    assert of_kind(render(_with_priorities("high"), priority_classes=frozenset({"high"})), "PodGroup")


def test_the_priority_class_check_stops_at_the_first_system_class() -> None:
    known = frozenset({"high"})
    assert of_kind(render(_with_priorities("system-node-critical", "missing"), priority_classes=known), "PodGroup")
    with pytest.raises(ValidationFailedError):
        render(_with_priorities("missing", "system-cluster-critical"), priority_classes=known)


def test_the_plugin_answers_to_the_volcano_policy() -> None:
    assert VolcanoPlugin.name == VolcanoPlugin.policy_key == "volcano"
