"""A volumeMount that names no volume of its pod is refused (issue #33), as the API server refuses
the pod: k8s.io/kubernetes `pkg/apis/core/validation/validation.go` ValidateVolumeMounts appends
`field.NotFound(idxPath.Child("name"), mnt.Name)`, printed `<path>.volumeMounts[0].name: Not found:
"x"` (ValidateVolumeDevices the same for volumeDevices). The TrainingRuntime, the TrainJob and the
JobSet are all accepted; only the Job controller's pods fail, so `job validate` / `render` say it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.api.runtime import TrainingRuntime
from ktrain.api.trainjob import TrainJob
from ktrain.engine.volume_mounts import patch_mount_errors, pod_mount_errors, runtime_mount_errors

RJOB = "spec.template.spec.replicatedJobs[0].template.spec.template.spec"


def runtime(
    pod: dict[str, Any], *, ml: dict[str, Any] | None = None, js: dict[str, Any] | None = None
) -> dict[str, Any]:
    rjob = {
        "name": "node",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": pod}},
        },
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "rt", "namespace": "default"},
        "spec": {"mlPolicy": ml or {"numNodes": 1}, "template": {"spec": {**(js or {}), "replicatedJobs": [rjob]}}},
    }


def trainjob(patch_pod: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"runtimeRef": {"name": "rt", "kind": "TrainingRuntime"}}
    if patch_pod is not None:
        spec["runtimePatches"] = [
            {
                "manager": "example.com/me",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {"name": "node", "template": {"spec": {"template": {"spec": patch_pod}}}}
                            ]
                        }
                    }
                },
            }
        ]
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "tj"}, "spec": spec}


def node(**fields: Any) -> dict[str, Any]:
    return {"name": "node", "image": "img", **fields}


def test_the_api_servers_words_for_mounts_and_devices() -> None:
    pod = {
        "volumes": [{"name": "data", "emptyDir": {}}],
        "initContainers": [{"name": "i", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}],
        "containers": [
            node(volumeMounts=[{"name": "data", "mountPath": "/d"}, {"name": "x", "mountPath": "/x"}]),
            {"name": "s", "volumeDevices": [{"name": "blk", "devicePath": "/dev/b"}]},
        ],
    }
    errors = pod_mount_errors("spec", pod, {"data"})
    assert [str(e) for e in errors] == [
        'spec.containers[0].volumeMounts[1].name: Not found: "x"',
        'spec.containers[1].volumeDevices[0].name: Not found: "blk"',
    ]
    assert {e.kind for e in errors} == {"NotFound"}


@pytest.mark.parametrize(
    ("pod", "ml", "js", "bad"),
    [
        ({"containers": [node(volumeMounts=[{"name": "x", "mountPath": "/x"}])]}, None, None, ["x"]),
        (
            {
                "volumes": [{"name": "x", "emptyDir": {}}],
                "containers": [node(volumeMounts=[{"name": "x", "mountPath": "/x"}])],
            },
            None,
            None,
            [],
        ),
        # JobSet's volumeClaimPolicies adds the claim's volume to the pods that mount it
        (
            {"containers": [node(volumeMounts=[{"name": "initializer", "mountPath": "/w"}])]},
            None,
            {"volumeClaimPolicies": [{"templates": [{"metadata": {"name": "initializer"}, "spec": {}}]}]},
            [],
        ),
        # the MPI policy adds its SSH volume to the node pods (its hostfile to the launcher only)
        (
            {
                "containers": [
                    node(
                        volumeMounts=[
                            {"name": "mpi-ssh-auth", "mountPath": "/k"},
                            {"name": "mpi-hostfile", "mountPath": "/h"},
                        ]
                    )
                ]
            },
            {"numNodes": 1, "mpi": {}},
            None,
            ["mpi-hostfile"],
        ),
    ],
)
def test_runtime_templates(pod: dict[str, Any], ml: Any, js: Any, bad: list[str]) -> None:
    rt = TrainingRuntime.model_validate(runtime(pod, ml=ml, js=js))
    errors = runtime_mount_errors(rt.spec)
    assert [e.message for e in errors] == [f'Not found: "{b}"' for b in bad]
    assert all(e.path.startswith(RJOB + ".containers[0].volumeMounts[") for e in errors)


def test_runtime_patches_against_the_runtime_they_patch() -> None:
    rt = TrainingRuntime.model_validate(
        runtime({"volumes": [{"name": "base", "emptyDir": {}}], "containers": [node()]})
    )
    ok = TrainJob.model_validate(
        trainjob(
            {
                "volumes": [{"name": "mine", "emptyDir": {}}],
                "containers": [
                    {
                        "name": "node",
                        "volumeMounts": [{"name": "base", "mountPath": "/b"}, {"name": "mine", "mountPath": "/m"}],
                    }
                ],
            }
        )
    )
    assert patch_mount_errors(ok.spec.runtime_patches or [], rt.spec) == []
    bad = TrainJob.model_validate(
        trainjob({"containers": [{"name": "node", "volumeMounts": [{"name": "nope", "mountPath": "/n"}]}]})
    )
    (error,) = patch_mount_errors(bad.spec.runtime_patches or [], rt.spec)
    assert str(error) == (
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
        '.containers[0].volumeMounts[0].name: Not found: "nope"'
    )
    # a volume that only a patch gives the pod satisfies the runtime's own mount
    rt2 = TrainingRuntime.model_validate(
        runtime({"containers": [node(volumeMounts=[{"name": "mine", "mountPath": "/m"}])]})
    )
    assert runtime_mount_errors(rt2.spec, ok.spec.runtime_patches) == []
    assert runtime_mount_errors(rt2.spec) != []


def test_job_validate_refuses_a_runtime_whose_mount_names_no_volume(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "rt.yaml").write_text(
        yaml.safe_dump(runtime({"containers": [node(volumeMounts=[{"name": "x", "mountPath": "/x"}])]}))
    )
    (tmp_path / "tj.yaml").write_text(yaml.safe_dump(trainjob()))
    for verb in ("validate", "render"):
        result = cli("job", verb, "-f", str(tmp_path / "tj.yaml"), "--runtime-file", str(tmp_path / "rt.yaml"))
        assert result.exit_code != 0 and "Traceback" not in result.stderr
        assert f'{RJOB}.containers[0].volumeMounts[0].name: Not found: "x"' in result.stderr
        assert "rt.yaml:" in result.stderr  # located in the runtime's file


def test_every_bundled_runtime_mounts_only_its_volumes() -> None:
    root = Path(__file__).resolve().parents[3] / "runtimes"
    files = sorted(root.glob("*.yaml"))
    assert len(files) >= 10
    for path in files:
        rt = TrainingRuntime.model_validate(yaml.safe_load(path.read_text()))
        assert runtime_mount_errors(rt.spec) == [], path.name
