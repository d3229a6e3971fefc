"""Volcano gang scheduling: Volcano PodGroup (upstream `plugins/volcano/volcano.go`, §7.2)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import Plugin
from ktrain.engine.plugins.gang import min_member, min_resources
from ktrain.errors import FieldError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")


def _priority_class_names(info: RuntimeInfo) -> list[str]:
    names = []
    for ps in info.pod_sets:
        name = ps.pod_spec.get("priorityClassName")
        if isinstance(name, str) and name:
            names.append(name)
    return names


class VolcanoPlugin(Plugin):
    name = "volcano"
    policy_key = "volcano"

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        errors: list[FieldError] = []
        queue = info.annotations.get(c.VOLCANO_QUEUE_ANNOTATION)
        if queue is not None and queue == "":
            errors.append(
                FieldError(f"spec.annotations[{c.VOLCANO_QUEUE_ANNOTATION}]", "Volcano queue name must not be empty")
            )
        known = info.ctx.priority_classes
        if known is not None:  # offline we cannot tell, so the check needs a cluster snapshot
            for name in _priority_class_names(info):
                if name in SYSTEM_PRIORITY_CLASSES:
                    break
                if name not in known:
                    errors.append(
                        FieldError(
                            "spec.templateSpec.priorityClassName",
                            f'PriorityClass "{name}" doesn\'t exist: priorityclasses.scheduling.k8s.io '
                            f'"{name}" not found',
                        )
                    )
        return errors

    def enforce_pod_group_policy(self, info: RuntimeInfo) -> None:
        info.pod_annotations[c.VOLCANO_GROUP_NAME_ANNOTATION] = info.name

    def build(self, info: RuntimeInfo) -> list[dict[str, Any]]:
        policy = info.pod_group_policy.volcano if info.pod_group_policy else None
        assert policy is not None
        spec: dict[str, Any] = {"minMember": min_member(info), "minResources": min_resources(info)}
        queue = info.annotations.get(c.VOLCANO_QUEUE_ANNOTATION)
        if queue is not None:
            spec["queue"] = queue
        priority = _priority_class_names(info)
        if priority:
            spec["priorityClassName"] = priority[-1]  # the last rJob that sets one wins
        if policy.network_topology is not None:
            spec["networkTopology"] = {
                "mode": policy.network_topology.mode,
                "highestTierAllowed": policy.network_topology.highest_tier_allowed,
            }
        return [
            {
                "apiVersion": c.VOLCANO_API_VERSION,
                "kind": c.PODGROUP_KIND,
                "metadata": info.object_meta(info.name),
                "spec": spec,
            }
        ]
