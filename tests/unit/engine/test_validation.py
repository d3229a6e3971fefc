"""The TrainJob's validation (ktrain/engine/validation.py) in upstream's words: not-found texts and the
runtime patch fields upstream does not allow (ENGINE.md §11.2)."""

from __future__ import annotations

from ktrain.engine.validation import runtime_not_found, validate_runtime_patch_fields

from .audit import _job


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
