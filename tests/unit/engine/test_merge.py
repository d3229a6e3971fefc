"""Strategic merge patch (ktrain.engine.merge) against apimachinery's semantics and the shared
runtimePatches conformance cases."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CASES

from ktrain.engine.merge import (
    JOBSET_SPEC_SCHEMA,
    Field,
    Schema,
    StrategicMergeError,
    merge_runtime_patches,
    strategic_merge,
)

from .audit import _container, _spec

Obj = dict[str, Any]


def _jobset(pod_spec: Obj | None = None, *, name: str = "node", pod_meta: Obj | None = None) -> Obj:
    """A JobSetSpec (or patch) with one replicatedJob carrying `pod_spec`."""
    pod_template: Obj = {}
    if pod_meta is not None:
        pod_template["metadata"] = pod_meta
    if pod_spec is not None:
        pod_template["spec"] = pod_spec
    return {"replicatedJobs": [{"name": name, "template": {"spec": {"template": pod_template}}}]}


def _pod_template(jobset_spec: Obj, index: int = 0) -> Obj:
    template: Obj = jobset_spec["replicatedJobs"][index]["template"]["spec"]["template"]
    return template


def _patch_pod(original: Obj, patch: Obj) -> Obj:
    """The pod spec of `original` after `patch`, both pod specs, merged through the JobSet schema."""
    spec: Obj = _pod_template(strategic_merge(_jobset(original), _jobset(patch)))["spec"]
    return spec


def _env(*pairs: tuple[str, str]) -> list[Obj]:
    return [{"name": n, "value": v} for n, v in pairs]


def _names(items: list[Obj], key: str = "name") -> list[Any]:
    return [item[key] for item in items]


# --- list order ------------------------------------------------------------------------------


def test_patched_env_keeps_patch_order_and_runtime_only_entries_follow() -> None:
    original = {"initContainers": [{"name": "init", "env": _env(("INIT_ENV", "a"), ("DATASET_PATH", "b"))}]}
    patch = {"initContainers": [{"name": "init", "env": _env(("INIT_ENV", "x"), ("NEW_VALUE", "y"))}]}

    env = _patch_pod(original, patch)["initContainers"][0]["env"]

    assert env == _env(("INIT_ENV", "x"), ("NEW_VALUE", "y"), ("DATASET_PATH", "b"))


def test_original_only_entries_stay_before_a_patch_entry_that_followed_them() -> None:
    original = {"containers": [{"name": "c", "env": _env(("A", "1"), ("B", "2"), ("C", "3"))}]}
    patch = {"containers": [{"name": "c", "env": _env(("C", "30"), ("D", "4"))}]}

    env = _patch_pod(original, patch)["containers"][0]["env"]

    assert env == _env(("A", "1"), ("B", "2"), ("C", "30"), ("D", "4"))


def test_patch_order_wins_for_named_entries_and_original_only_entries_keep_their_slot() -> None:
    original = {"containers": [{"name": "c", "env": _env(("A", "1"), ("B", "2"), ("C", "3"))}]}
    patch = {"containers": [{"name": "c", "env": _env(("C", "30"), ("A", "10"))}]}

    env = _patch_pod(original, patch)["containers"][0]["env"]

    # B stood before C in the original, so it goes first; A follows C as in the patch.
    assert env == _env(("B", "2"), ("C", "30"), ("A", "10"))


def test_entries_new_to_the_list_come_before_original_only_entries() -> None:
    original = {"volumes": [{"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer"}}]}
    patch = {
        "volumes": [
            {"name": "secret-vol", "secret": {"secretName": "s"}},
            {"name": "claim-vol", "persistentVolumeClaim": {"claimName": "c"}},
        ]
    }

    volumes = _patch_pod(original, patch)["volumes"]

    assert _names(volumes) == ["secret-vol", "claim-vol", "initializer"]


def test_new_container_holds_only_the_patched_fields_and_does_not_wait_behind_original_only_ones() -> None:
    original = {
        "containers": [
            {"name": "node", "image": "trainer:v1"},
            {"name": "sidecar", "image": "sidecar:v1"},
        ]
    }
    patch = {"containers": [{"name": "node", "env": _env(("A", "1"))}, {"name": "extra", "env": _env(("B", "2"))}]}

    containers = _patch_pod(original, patch)["containers"]

    assert containers == [
        {"name": "node", "image": "trainer:v1", "env": _env(("A", "1"))},
        {"name": "extra", "env": _env(("B", "2"))},
        {"name": "sidecar", "image": "sidecar:v1"},
    ]


# --- null ------------------------------------------------------------------------------------


def test_null_deletes_the_key() -> None:
    original = {"nodeSelector": {"zone": "a"}, "serviceAccountName": "sa", "schedulerName": "x"}

    pod = _patch_pod(original, {"nodeSelector": None, "serviceAccountName": None})

    assert pod == {"schedulerName": "x"}


def test_null_in_a_merged_list_item_deletes_that_field_only() -> None:
    original = {"containers": [{"name": "node", "image": "i", "workingDir": "/w"}]}

    pod = _patch_pod(original, {"containers": [{"name": "node", "workingDir": None}]})

    assert pod["containers"] == [{"name": "node", "image": "i"}]


def test_null_for_an_absent_key_adds_nothing() -> None:
    assert _patch_pod({"hostname": "h"}, {"subdomain": None}) == {"hostname": "h"}


def test_value_taken_over_as_written_loses_its_nulls_and_directives() -> None:
    patch = {"securityContext": {"runAsUser": 1000, "fsGroup": None, "$patch": "merge"}}

    pod = _patch_pod({}, patch)

    assert pod == {"securityContext": {"runAsUser": 1000}}


# --- lists and maps by field -----------------------------------------------------------------


def test_tolerations_are_replaced_as_a_whole() -> None:
    original = {"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]}
    patch = {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}

    assert _patch_pod(original, patch)["tolerations"] == patch["tolerations"]


def test_volume_mounts_merge_by_mount_path_not_by_name() -> None:
    original = {
        "containers": [
            {
                "name": "node",
                "volumeMounts": [
                    {"name": "initializer", "mountPath": "/workspace/dataset"},
                    {"name": "initializer", "mountPath": "/workspace/model"},
                ],
            }
        ]
    }
    patch = {"containers": [{"name": "node", "volumeMounts": [{"name": "other", "mountPath": "/workspace/model"}]}]}

    mounts = _patch_pod(original, patch)["containers"][0]["volumeMounts"]

    assert mounts == [
        {"name": "initializer", "mountPath": "/workspace/dataset"},
        {"name": "other", "mountPath": "/workspace/model"},
    ]


def test_same_named_volume_merges_fields_so_a_new_source_is_added_to_the_old_one() -> None:
    original = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]}
    patch = {"volumes": [{"name": "data", "secret": {"secretName": "s"}}]}

    assert _patch_pod(original, patch)["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}, "secret": {"secretName": "s"}}
    ]


def test_node_selector_merges_per_key() -> None:
    original = {"nodeSelector": {"zone": "a", "pool": "cpu"}}
    patch = {"nodeSelector": {"pool": "gpu", "type": "p5"}}

    assert _patch_pod(original, patch)["nodeSelector"] == {"zone": "a", "pool": "gpu", "type": "p5"}


def test_command_and_args_are_replaced() -> None:
    original = {"containers": [{"name": "node", "command": ["python", "a.py"], "args": ["--x", "1"]}]}
    patch = {"containers": [{"name": "node", "command": ["torchrun"], "args": ["--y"]}]}

    assert _patch_pod(original, patch)["containers"] == [{"name": "node", "command": ["torchrun"], "args": ["--y"]}]


def test_affinity_merges_as_a_struct_but_its_lists_are_replaced() -> None:
    term_a = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    term_b = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    anti = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "host"}]}
    original = {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term_a]}},
            "podAntiAffinity": anti,
        }
    }
    required_b = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term_b]}}
    patch = {"affinity": {"nodeAffinity": required_b}}

    assert _patch_pod(original, patch)["affinity"] == {"nodeAffinity": required_b, "podAntiAffinity": anti}


def test_security_contexts_merge_recursively() -> None:
    original = {
        "securityContext": {"fsGroup": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "side", "securityContext": {"capabilities": {"drop": ["ALL"]}}}],
    }
    patch = {
        "securityContext": {"fsGroup": 2000, "runAsNonRoot": True},
        "containers": [
            {"name": "side", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}, "privileged": False}}
        ],
    }

    pod = _patch_pod(original, patch)

    assert pod["securityContext"] == {
        "fsGroup": 2000,
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsNonRoot": True,
    }
    assert pod["containers"][0]["securityContext"] == {
        "capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]},
        "privileged": False,
    }


def test_resources_merge_limits_and_requests_per_key_and_replace_claims() -> None:
    original = {
        "containers": [
            {
                "name": "node",
                "resources": {
                    "limits": {"cpu": "2"},
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "claims": [{"name": "a"}],
                },
            }
        ]
    }
    patch = {
        "containers": [
            {
                "name": "node",
                "resources": {"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": "4"}, "claims": [{"name": "b"}]},
            }
        ]
    }

    assert _patch_pod(original, patch)["containers"][0]["resources"] == {
        "limits": {"cpu": "2", "nvidia.com/gpu": 1},
        "requests": {"cpu": "4", "memory": "1Gi"},
        "claims": [{"name": "b"}],
    }


@pytest.mark.parametrize(
    ("field", "original", "patch", "expected"),
    [
        (
            "imagePullSecrets",
            [{"name": "a"}],
            [{"name": "b"}],
            [{"name": "b"}, {"name": "a"}],
        ),
        (
            "schedulingGates",
            [{"name": "g1"}, {"name": "g2"}],
            [{"name": "g2"}, {"name": "g3"}],
            [{"name": "g1"}, {"name": "g2"}, {"name": "g3"}],
        ),
        (
            "hostAliases",  # by ip; the hostnames list itself has no strategy
            [{"ip": "10.0.0.1", "hostnames": ["a"]}, {"ip": "10.0.0.2", "hostnames": ["b"]}],
            [{"ip": "10.0.0.1", "hostnames": ["c"]}],
            [{"ip": "10.0.0.1", "hostnames": ["c"]}, {"ip": "10.0.0.2", "hostnames": ["b"]}],
        ),
        (
            "topologySpreadConstraints",  # by topologyKey alone
            [{"topologyKey": "zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
            [{"topologyKey": "zone", "maxSkew": 2, "whenUnsatisfiable": "ScheduleAnyway"}],
            [{"topologyKey": "zone", "maxSkew": 2, "whenUnsatisfiable": "ScheduleAnyway"}],
        ),
        (
            "resourceClaims",
            [{"name": "gpu", "resourceClaimTemplateName": "a100"}],
            [{"name": "gpu", "resourceClaimTemplateName": "h100"}],
            [{"name": "gpu", "resourceClaimTemplateName": "h100"}],
        ),
        (
            "readinessGates",  # no strategy: replaced
            [{"conditionType": "a"}],
            [{"conditionType": "b"}],
            [{"conditionType": "b"}],
        ),
    ],
)
def test_pod_spec_lists_follow_their_go_tags(
    field: str, original: list[Obj], patch: list[Obj], expected: list[Obj]
) -> None:
    assert _patch_pod({field: original}, {field: patch})[field] == expected


@pytest.mark.parametrize(
    ("field", "original", "patch", "expected"),
    [
        (
            "ports",  # by containerPort
            [{"containerPort": 29500, "name": "a"}, {"containerPort": 8080}],
            [{"containerPort": 29500, "protocol": "TCP"}],
            [{"containerPort": 29500, "name": "a", "protocol": "TCP"}, {"containerPort": 8080}],
        ),
        (
            "volumeDevices",  # by devicePath
            [{"name": "a", "devicePath": "/dev/x"}],
            [{"name": "b", "devicePath": "/dev/x"}],
            [{"name": "b", "devicePath": "/dev/x"}],
        ),
        (
            "envFrom",  # no strategy: replaced
            [{"configMapRef": {"name": "a"}}],
            [{"secretRef": {"name": "b"}}],
            [{"secretRef": {"name": "b"}}],
        ),
    ],
)
def test_container_lists_follow_their_go_tags(
    field: str, original: list[Obj], patch: list[Obj], expected: list[Obj]
) -> None:
    merged = _patch_pod({"containers": [{"name": "c", field: original}]}, {"containers": [{"name": "c", field: patch}]})

    assert merged["containers"][0][field] == expected


def test_init_and_ephemeral_containers_merge_by_name_like_containers() -> None:
    original = {
        "initContainers": [{"name": "i", "image": "busybox", "env": _env(("A", "1"))}],
        "ephemeralContainers": [{"name": "dbg", "image": "debug", "env": _env(("A", "1"))}],
    }
    patch = {
        "initContainers": [{"name": "i", "env": _env(("B", "2"))}],
        "ephemeralContainers": [{"name": "dbg", "env": _env(("B", "2"))}],
    }

    pod = _patch_pod(original, patch)

    assert pod["initContainers"] == [{"name": "i", "image": "busybox", "env": _env(("B", "2"), ("A", "1"))}]
    assert pod["ephemeralContainers"] == [{"name": "dbg", "image": "debug", "env": _env(("B", "2"), ("A", "1"))}]


def test_scalar_list_with_merge_strategy_is_a_deduplicated_union() -> None:
    original = _jobset({}, pod_meta={"finalizers": ["a", "b"]})
    patch = _jobset(pod_meta={"finalizers": ["c", "a"]})

    merged = _pod_template(strategic_merge(original, patch))["metadata"]["finalizers"]

    assert merged == ["c", "a", "b"]


def test_owner_references_in_template_metadata_merge_by_uid() -> None:
    original = _jobset({}, pod_meta={"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]})
    patch = _jobset(pod_meta={"ownerReferences": [{"uid": "2", "name": "b2"}]})

    merged = _pod_template(strategic_merge(original, patch))["metadata"]["ownerReferences"]

    assert merged == [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b2"}]


def test_job_and_pod_template_metadata_merge_labels_and_annotations_per_key() -> None:
    original = {
        "replicatedJobs": [
            {
                "name": "node",
                "template": {
                    "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer", "x": "1"}},
                    "spec": {"template": {"metadata": {"annotations": {"a": "1"}}, "spec": {}}},
                },
            }
        ]
    }
    patch = {
        "replicatedJobs": [
            {
                "name": "node",
                "template": {
                    "metadata": {"labels": {"x": "2"}},
                    "spec": {"template": {"metadata": {"annotations": {"b": "2"}, "labels": {"l": "v"}}}},
                },
            }
        ]
    }

    rjob = strategic_merge(original, patch)["replicatedJobs"][0]

    assert rjob["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
        "x": "2",
    }
    assert rjob["template"]["spec"]["template"]["metadata"] == {
        "annotations": {"a": "1", "b": "2"},
        "labels": {"l": "v"},
    }


def test_replicated_jobs_and_depends_on_merge_by_name() -> None:
    original = {
        "replicatedJobs": [
            {"name": "init", "replicas": 1},
            {"name": "node", "replicas": 1, "dependsOn": [{"name": "init", "status": "Complete"}]},
        ],
        "network": {"enableDNSHostnames": True},
    }
    patch = {"replicatedJobs": [{"name": "node", "replicas": 2, "dependsOn": [{"name": "init", "status": "Ready"}]}]}

    merged = strategic_merge(original, patch)

    assert merged == {
        "replicatedJobs": [
            {"name": "init", "replicas": 1},
            {"name": "node", "replicas": 2, "dependsOn": [{"name": "init", "status": "Ready"}]},
        ],
        "network": {"enableDNSHostnames": True},
    }


def test_unknown_fields_merge_objects_and_replace_lists() -> None:
    original = {"a": {"b": 1, "c": [1, 2]}, "items": [{"name": "x"}]}
    patch = {"a": {"d": 3, "c": [3]}, "items": [{"name": "y"}]}

    assert strategic_merge(original, patch, Schema()) == {"a": {"b": 1, "c": [3], "d": 3}, "items": [{"name": "y"}]}


def test_a_custom_schema_drives_list_merging() -> None:
    schema = Schema({"rules": Field(merge=True, key="id"), "tags": Field(merge=True)})
    original = {"rules": [{"id": 1, "v": "a"}], "tags": ["x"]}
    patch = {"rules": [{"id": 1, "w": "b"}, {"id": 2}], "tags": ["y", "x"]}

    assert strategic_merge(original, patch, schema) == {
        "rules": [{"id": 1, "v": "a", "w": "b"}, {"id": 2}],
        "tags": ["y", "x"],
    }


def test_a_value_of_another_type_replaces_the_original() -> None:
    assert _patch_pod({"nodeSelector": {"a": "b"}}, {"nodeSelector": ["oops"]}) == {"nodeSelector": ["oops"]}


# --- directives ------------------------------------------------------------------------------


def test_patch_replace_on_a_map_replaces_the_whole_map() -> None:
    original = {"securityContext": {"fsGroup": 1000, "runAsUser": 1}}
    patch = {"securityContext": {"$patch": "replace", "runAsUser": 2}}

    assert _patch_pod(original, patch)["securityContext"] == {"runAsUser": 2}


def test_patch_delete_on_a_map_leaves_it_empty() -> None:
    original = {"securityContext": {"fsGroup": 1000}, "hostname": "h"}

    assert _patch_pod(original, {"securityContext": {"$patch": "delete"}}) == {"securityContext": {}, "hostname": "h"}


def test_patch_replace_item_makes_the_other_patch_items_the_whole_list() -> None:
    original = {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}
    patch = {"containers": [{"name": "c", "image": "3"}, {"$patch": "replace"}]}

    assert _patch_pod(original, patch)["containers"] == [{"name": "c", "image": "3"}]


def test_patch_delete_item_removes_the_entry_with_that_merge_key() -> None:
    original = {"containers": [{"name": "node", "env": _env(("A", "1"), ("B", "2"), ("C", "3"))}]}
    patch = {"containers": [{"name": "node", "env": [{"name": "B", "$patch": "delete"}, {"name": "D", "value": "4"}]}]}

    env = _patch_pod(original, patch)["containers"][0]["env"]

    assert env == _env(("D", "4"), ("A", "1"), ("C", "3"))


@pytest.mark.parametrize(
    "patch",
    [
        {"containers": [{"name": "node", "$patch": "merge"}]},
        {"securityContext": {"$patch": "merge", "fsGroup": 1}},
        {"containers": [{"name": "node", "$patch": "bogus"}]},
    ],
    ids=["merge-in-list", "merge-on-map", "unknown"],
)
def test_unsupported_patch_directives_are_rejected(patch: Obj) -> None:
    original = {"containers": [{"name": "node"}], "securityContext": {"fsGroup": 0}}

    with pytest.raises(StrategicMergeError):
        _patch_pod(original, patch)


def test_delete_from_primitive_list_removes_those_scalars() -> None:
    original = _jobset({}, pod_meta={"finalizers": ["a", "b", "c"]})
    patch = _jobset(pod_meta={"$deleteFromPrimitiveList/finalizers": ["b"]})

    assert _pod_template(strategic_merge(original, patch))["metadata"]["finalizers"] == ["a", "c"]


def test_set_element_order_orders_the_listed_entries() -> None:
    original = {"containers": [{"name": "node", "env": _env(("A", "1"), ("B", "2"), ("C", "3"))}]}
    patch = {
        "containers": [
            {
                "name": "node",
                "$setElementOrder/env": [{"name": "C"}, {"name": "A"}, {"name": "B"}],
                "env": [{"name": "A", "value": "10"}],
            }
        ]
    }

    env = _patch_pod(original, patch)["containers"][0]["env"]

    assert env == _env(("C", "3"), ("A", "10"), ("B", "2"))


def test_set_element_order_that_contradicts_the_patch_list_is_rejected() -> None:
    original = {"containers": [{"name": "node", "env": _env(("A", "1"), ("B", "2"))}]}
    patch = {
        "containers": [
            {
                "name": "node",
                "$setElementOrder/env": [{"name": "B"}, {"name": "A"}],
                "env": _env(("A", "x"), ("B", "y")),
            }
        ]
    }

    with pytest.raises(StrategicMergeError):
        _patch_pod(original, patch)


def test_retain_keys_clears_the_fields_it_does_not_list() -> None:
    original = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]}
    patch = {"volumes": [{"name": "data", "$retainKeys": ["name", "secret"], "secret": {"secretName": "s"}}]}

    assert _patch_pod(original, patch)["volumes"] == [{"name": "data", "secret": {"secretName": "s"}}]


def test_retain_keys_must_list_every_patched_field() -> None:
    original = {"volumes": [{"name": "data", "emptyDir": {}}]}
    patch = {"volumes": [{"name": "data", "$retainKeys": ["name"], "secret": {"secretName": "s"}}]}

    with pytest.raises(StrategicMergeError):
        _patch_pod(original, patch)


# --- errors and inputs -----------------------------------------------------------------------


def test_patch_item_without_its_merge_key_is_rejected() -> None:
    original = {"containers": [{"name": "node", "volumeMounts": [{"name": "a", "mountPath": "/a"}]}]}
    patch = {"containers": [{"name": "node", "volumeMounts": [{"name": "b"}]}]}

    with pytest.raises(StrategicMergeError, match="mountPath"):
        _patch_pod(original, patch)


def test_strategic_merge_does_not_modify_its_inputs() -> None:
    original = _jobset({"containers": [{"name": "node", "env": _env(("A", "1"))}], "nodeSelector": {"a": "b"}})
    patch = _jobset(
        {"containers": [{"name": "node", "env": [{"name": "A", "$patch": "delete"}]}], "nodeSelector": None}
    )
    before = copy.deepcopy((original, patch))

    merged = strategic_merge(original, patch)
    _pod_template(merged)["spec"]["containers"][0]["image"] = "changed"

    assert (original, patch) == before


def test_default_schema_is_the_jobset_spec_schema() -> None:
    original = {"replicatedJobs": [{"name": "a", "replicas": 1}]}
    patch = {"replicatedJobs": [{"name": "a", "replicas": 2}]}

    assert strategic_merge(original, patch) == strategic_merge(original, patch, JOBSET_SPEC_SCHEMA)
    assert strategic_merge(original, patch) == {"replicatedJobs": [{"name": "a", "replicas": 2}]}


# --- merge_runtime_patches -------------------------------------------------------------------


def test_runtime_patches_apply_in_list_order_so_the_last_value_wins() -> None:
    runtime = _jobset({"nodeSelector": {"type": "cpu"}})
    patches = [_jobset({"nodeSelector": {"type": "p5"}}), _jobset({"nodeSelector": {"type": "p5en", "zone": "a"}})]

    merged = merge_runtime_patches(runtime, patches)

    assert _pod_template(merged)["spec"]["nodeSelector"] == {"type": "p5en", "zone": "a"}


def test_replicated_jobs_return_to_runtime_order_and_an_unknown_name_sorts_as_index_zero() -> None:
    runtime = {"replicatedJobs": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    # The merge yields [a, b, new, c]; the re-sort keys are a=0, b=1, c=2 and new=0 (absent from the runtime).
    patches = [{"replicatedJobs": [{"name": "b", "replicas": 3}, {"name": "new", "replicas": 1}]}]

    merged = merge_runtime_patches(runtime, patches)

    assert merged["replicatedJobs"] == [
        {"name": "a"},
        {"name": "new", "replicas": 1},
        {"name": "b", "replicas": 3},
        {"name": "c"},
    ]


def test_unknown_replicated_job_alone_in_a_patch_ends_up_first() -> None:
    runtime = {"replicatedJobs": [{"name": "a"}, {"name": "b"}]}

    merged = merge_runtime_patches(runtime, [{"replicatedJobs": [{"name": "extra"}]}])

    assert _names(merged["replicatedJobs"]) == ["extra", "a", "b"]


def test_patch_that_reorders_replicated_jobs_is_undone_by_the_resort() -> None:
    runtime = {"replicatedJobs": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}

    merged = merge_runtime_patches(runtime, [{"replicatedJobs": [{"name": "c", "x": 1}, {"name": "a", "x": 2}]}])

    assert _names(merged["replicatedJobs"]) == ["a", "b", "c"]


def test_runtime_patch_is_sent_as_its_typed_form_without_nulls_directives_or_empty_lists() -> None:
    runtime = _jobset(
        {
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "nodeSelector": {"zone": "a"},
            "securityContext": {"fsGroup": 1000, "runAsUser": 1},
        }
    )
    patch = _jobset({"tolerations": [], "nodeSelector": None, "securityContext": {"$patch": "replace", "runAsUser": 2}})

    pod = _pod_template(merge_runtime_patches(runtime, [patch]))["spec"]

    assert pod == {
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "nodeSelector": {"zone": "a"},
        "securityContext": {"fsGroup": 1000, "runAsUser": 2},
    }


def test_merge_runtime_patches_does_not_modify_its_inputs() -> None:
    runtime = _jobset({"containers": [{"name": "node", "env": _env(("A", "1"))}]})
    patches = [_jobset({"containers": [{"name": "node", "env": _env(("B", "2"))}]})]
    before = copy.deepcopy((runtime, patches))

    merge_runtime_patches(runtime, patches)

    assert (runtime, patches) == before


# --- shared conformance cases ----------------------------------------------------------------

RUNTIME_PATCH_CASES = [
    "runtimepatches-podspec-full",
    "runtimepatches-same-job-last-wins",
    "runtimepatches-security-context",
    "runtimepatches-torch-pod-metadata-init-env",
]


def _load_case(case: str) -> tuple[Obj, Obj, Obj]:
    directory: Path = CASES / case
    runtime = yaml.safe_load((directory / "runtime.yaml").read_text())
    trainjob = yaml.safe_load((directory / "trainjob.yaml").read_text())
    documents = yaml.safe_load_all((directory / "expected.yaml").read_text())
    jobset = next(d for d in documents if d and d.get("kind") == "JobSet")
    return runtime, trainjob, jobset


def _assert_touched_fields_match(patch: Obj, merged: Obj, expected: Obj, where: str) -> None:
    """Compare `merged` with `expected` on the fields `patch` sets; later render stages (trainer
    image/command, PET_* env, counts) change other fields of the expected JobSet."""
    for key, value in patch.items():
        if key in ("containers", "initContainers"):
            assert _names(merged[key]) == _names(expected[key]), f"{where}.{key} order"
            for container_patch in value:
                got = next(c for c in merged[key] if c["name"] == container_patch["name"])
                want = next(c for c in expected[key] if c["name"] == container_patch["name"])
                for field in container_patch:
                    assert got.get(field) == want.get(field), f"{where}.{key}[{container_patch['name']}].{field}"
        elif key in ("labels", "annotations"):
            for name in value:
                assert merged[key][name] == expected[key][name], f"{where}.{key}[{name}]"
        else:
            assert merged[key] == expected[key], f"{where}.{key}"


@pytest.mark.shared
@pytest.mark.parametrize("case", RUNTIME_PATCH_CASES)
def test_runtime_patch_case_gives_the_expected_pod_specs(case: str) -> None:
    runtime, trainjob, jobset = _load_case(case)
    patch_specs = [
        p["trainingRuntimeSpec"]["template"]["spec"]
        for p in trainjob["spec"]["runtimePatches"]
        if (p.get("trainingRuntimeSpec") or {}).get("template", {}).get("spec") is not None
    ]
    assert patch_specs, "the case has runtimePatches with a spec"

    merged = merge_runtime_patches(runtime["spec"]["template"]["spec"], patch_specs)

    expected_rjobs = {r["name"]: r for r in jobset["spec"]["replicatedJobs"]}
    assert _names(merged["replicatedJobs"]) == list(expected_rjobs)
    merged_rjobs = {r["name"]: r for r in merged["replicatedJobs"]}
    for patch_spec in patch_specs:
        for rjob_patch in patch_spec["replicatedJobs"]:
            name = rjob_patch["name"]
            got, want = merged_rjobs[name]["template"], expected_rjobs[name]["template"]
            if "metadata" in rjob_patch["template"]:
                _assert_touched_fields_match(
                    rjob_patch["template"]["metadata"], got["metadata"], want["metadata"], f"{name}.metadata"
                )
            pod_patch = rjob_patch["template"].get("spec", {}).get("template", {})
            for part in ("metadata", "spec"):
                if part in pod_patch:
                    got_part, want_part = got["spec"]["template"][part], want["spec"]["template"][part]
                    _assert_touched_fields_match(pod_patch[part], got_part, want_part, f"{name}.pod.{part}")


# --- env merge rules from the engine audit (ENGINE.md §5.4) ---------------------------------------


def test_patch_env_with_empty_value_leaves_the_runtime_value_alone() -> None:
    runtime = _spec({"name": "side", "env": [{"name": "A", "value": "keep"}]})
    patch = _spec({"name": "side", "env": [{"name": "A", "value": ""}]})
    merged = merge_runtime_patches(runtime, [patch])
    assert _container(merged)["env"] == [{"name": "A", "value": "keep"}]


def test_patch_env_without_divisor_resets_the_runtime_divisor() -> None:
    """The typed patch is JSON-encoded with `divisor: "0"` before the strategic merge."""
    runtime = _spec(
        {"name": "side", "env": [{"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "x", "divisor": "1Mi"}}}]}
    )
    patch = _spec({"name": "side", "env": [{"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "y"}}}]})
    merged = merge_runtime_patches(runtime, [patch])
    assert _container(merged)["env"] == [
        {"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "y", "divisor": "0"}}}
    ]
