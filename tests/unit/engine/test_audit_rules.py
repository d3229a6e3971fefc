"""Small upstream rules found in the engine audit: Go zero values, env conversion, warnings and
not-found texts (ENGINE.md §4.2, §5.4, §11.2)."""

from __future__ import annotations

from ktrain.api.runtime import TrainingRuntime
from ktrain.api.trainjob import TrainJob
from ktrain.engine.apply import convert_env_vars
from ktrain.engine.framework import deprecation_warnings
from ktrain.engine.gotypes import drop_zero_values
from ktrain.engine.merge import merge_runtime_patches
from ktrain.engine.validation import runtime_not_found, validate_runtime_patch_fields


def _spec(container: dict) -> dict:
    return {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {"containers": [container]}}}}}]
    }


def _container(spec: dict) -> dict:
    return spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]


def test_patch_env_with_empty_value_leaves_the_runtime_value_alone() -> None:
    runtime = _spec({"name": "side", "env": [{"name": "A", "value": "keep"}]})
    patch = _spec({"name": "side", "env": [{"name": "A", "value": ""}]})
    merged = merge_runtime_patches(runtime, [patch])
    assert _container(merged)["env"] == [{"name": "A", "value": "keep"}]


def test_zero_values_of_pointer_fields_are_kept() -> None:
    patch = {
        "replicatedJobs": [
            {
                "name": "node",
                "template": {
                    "spec": {
                        "template": {
                            "spec": {
                                "serviceAccountName": "",
                                "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
                            }
                        }
                    }
                },
            }
        ]
    }
    sent = drop_zero_values(patch, "JobSetSpecPatch")
    pod = sent["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod == {"serviceAccountName": "", "securityContext": {"runAsUser": 0, "runAsNonRoot": False}}


def test_typed_jobset_spec_drops_zero_omitempty_fields_but_not_map_values() -> None:
    spec = _spec(
        {
            "name": "n",
            "image": "i",
            "stdin": False,
            "ports": [{"containerPort": 80, "hostPort": 0}],
            "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": False}],
            "resources": {"limits": {"cpu": 0}},
        }
    )
    spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {"zone": ""}
    typed = drop_zero_values(spec, "JobSetSpec")
    assert _container(typed) == {
        "name": "n",
        "image": "i",
        "ports": [{"containerPort": 80}],
        "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        "resources": {"limits": {"cpu": 0}},
    }
    assert typed["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] == {"zone": ""}


def test_env_conversion_sets_every_field_upstream_sets() -> None:
    envs = convert_env_vars(
        [
            {"name": "NO_VALUE"},
            {"name": "R", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1024Ki"}}},
            {"name": "C", "valueFrom": {"configMapKeyRef": {"key": "k"}}},
        ]
    )
    assert envs == [
        {"name": "NO_VALUE", "value": ""},
        {
            "name": "R",
            "valueFrom": {"resourceFieldRef": {"containerName": "", "resource": "limits.memory", "divisor": "1Mi"}},
        },
        {"name": "C", "valueFrom": {"configMapKeyRef": {"key": "k", "name": ""}}},
    ]


def _runtime(kind: str) -> TrainingRuntime:
    return TrainingRuntime.model_validate(
        {
            "kind": kind,
            "metadata": {"name": "old", "labels": {"trainer.kubeflow.org/support": "deprecated"}},
            "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node"}]}}},
        }
    )


def _job(**spec: object) -> TrainJob:
    return TrainJob.model_validate({"metadata": {"name": "j"}, "spec": {"runtimeRef": {"name": "old"}, **spec}})


def test_only_a_deprecated_cluster_training_runtime_warns() -> None:
    job = _job()
    assert deprecation_warnings(job, _runtime("ClusterTrainingRuntime")) == [
        'Referenced ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of '
        "Kubeflow Trainer. See runtime deprecation policy: "
        "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
    ]
    assert deprecation_warnings(job, _runtime("TrainingRuntime")) == []


def test_not_found_paths_differ_by_kind() -> None:
    assert str(runtime_not_found("TrainingRuntime", "x")).startswith("spec.runtimeRef: ")
    assert str(runtime_not_found("ClusterTrainingRuntime", "x")).startswith("spec.RuntimeRef: ")


def test_unknown_patch_fields_are_named_with_their_full_path() -> None:
    job = _job(
        runtimePatches=[
            {
                "manager": "a.io/b",
                "trainingRuntimeSpec": {
                    "template": {
                        "metadata": {"labels": {"a": "b"}, "ownerReferences": []},
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "replicas": 2,
                                    "template": {
                                        "spec": {
                                            "template": {
                                                "spec": {
                                                    "containers": [
                                                        {
                                                            "name": "c",
                                                            "image": "x",
                                                            "env": [{"name": "A", "valueFrom": {}}],
                                                        }
                                                    ],
                                                    "tolerations": [{"key": "k", "operator": "Exists"}],
                                                }
                                            }
                                        }
                                    },
                                }
                            ]
                        },
                    }
                },
            }
        ]
    )
    paths = [e.path for e in validate_runtime_patch_fields(job)]
    base = "spec.runtimePatches[0].trainingRuntimeSpec.template"
    assert paths == [
        f"{base}.metadata.ownerReferences",
        f"{base}.spec.replicatedJobs[0].replicas",
        f"{base}.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image",
    ]


def test_typed_round_trip_writes_every_divisor() -> None:
    """`resource.Quantity` is a non-pointer struct: Go never omits it, so an unset divisor comes
    back as "0" and a set one in canonical form (ToUnstructured / json.Marshal of core/v1 types)."""
    spec = _spec(
        {
            "name": "node",
            "env": [
                {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                {"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}},
                {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": 2}}},
                {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            ],
        }
    )
    pod = spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["volumes"] = [
        {"name": "d", "downwardAPI": {"items": [{"path": "p", "resourceFieldRef": {"resource": "limits.memory"}}]}},
        {
            "name": "p",
            "projected": {
                "sources": [{"downwardAPI": {"items": [{"path": "q", "resourceFieldRef": {"resource": "limits.cpu"}}]}}]
            },
        },
    ]
    typed = drop_zero_values(spec, "JobSetSpec")
    refs = [e["valueFrom"].get("resourceFieldRef") for e in _container(typed)["env"]]
    assert [r and r["divisor"] for r in refs] == ["0", "1", "2", None]
    volumes = typed["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["volumes"]
    assert volumes[0]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "0"
    assert volumes[1]["projected"]["sources"][0]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "0"
    assert (
        "divisor"
        not in spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"][0][
            "valueFrom"
        ]["resourceFieldRef"]
    )  # the input is not changed


def test_unparsable_divisor_is_left_for_validation() -> None:
    typed = drop_zero_values({"resource": "limits.cpu", "divisor": "1x"}, "ResourceFieldSelector")
    assert typed == {"resource": "limits.cpu", "divisor": "1x"}


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
