"""Coscheduling gang scheduling: scheduler-plugins PodGroup (upstream `plugins/coscheduling`, §7.1)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import Plugin
from ktrain.engine.plugins.gang import min_member, min_resources

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


class CoschedulingPlugin(Plugin):
    name = "coscheduling"
    policy_key = "coscheduling"

    def enforce_pod_group_policy(self, info: RuntimeInfo) -> None:
        info.pod_labels[c.COSCHEDULING_POD_GROUP_LABEL] = info.name

    def build(self, info: RuntimeInfo) -> list[dict[str, Any]]:
        policy = info.pod_group_policy.coscheduling if info.pod_group_policy else None
        assert policy is not None
        return [
            {
                "apiVersion": c.COSCHEDULING_API_VERSION,
                "kind": c.PODGROUP_KIND,
                "metadata": info.object_meta(info.name),
                "spec": {
                    "minMember": min_member(info),
                    "minResources": min_resources(info),
                    "scheduleTimeoutSeconds": policy.schedule_timeout_seconds,
                },
            }
        ]
