"""The JobSet plugin (`ktrain.engine.plugins.jobset`, upstream `plugins/jobset/{jobset.go,builder.go}`,
ENGINE.md §5): the JobSet object, its counts, the trainer and initializer overrides and the JobSet
webhook's limits, rendered through the engine on the bundled runtimes."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain import constants as c
from ktrain.api.records import validate
from ktrain.engine import RenderContext, render
from ktrain.engine.plugins.jobset import JobSetPlugin
from ktrain.errors import ValidationFailedError

from .renders import KEY, bundled, bundled_job, container, env, objects, of_kind


def jobset(found: list[dict[str, Any]]) -> dict[str, Any]:
    (js,) = of_kind(found, "JobSet")
    return js


def rjob(js: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [r for r in js["spec"]["replicatedJobs"] if r["name"] == name]
    return found


def result(data: dict[str, Any], rt: dict[str, Any]) -> Any:
    return render(validate("TrainJob", data), validate("TrainingRuntime", rt), RenderContext(ssh_key=KEY))


def test_the_jobset_is_named_after_the_trainjob_in_its_namespace_and_owned_by_it() -> None:
    js = jobset(objects(bundled_job("torch-distributed", "mnist", numNodes=2), bundled("torch-distributed")))
    assert js["apiVersion"] == "jobset.x-k8s.io/v1alpha2" and js["kind"] == "JobSet"
    assert js["metadata"]["name"] == "mnist" and js["metadata"]["namespace"] == "ns"
    (owner,) = js["metadata"]["ownerReferences"]
    assert owner["kind"] == "TrainJob" and owner["name"] == "mnist" and owner["controller"] is True
    assert "labels" not in js["metadata"] and "annotations" not in js["metadata"]  # omitted when empty
    assert js["spec"]["suspend"] is False


def test_the_runtime_template_labels_and_annotations_propagate_to_the_jobset() -> None:
    rt = bundled("torch-distributed")
    rt["spec"]["template"]["metadata"] = {"labels": {"team": "ml"}, "annotations": {"prometheus.io/scrape": "true"}}
    meta = jobset(objects(bundled_job("torch-distributed"), rt))["metadata"]
    assert meta["labels"] == {"team": "ml"}
    assert meta["annotations"] == {"prometheus.io/scrape": "true"}


def test_counts_replicas_and_suspend() -> None:
    data = bundled_job("torch-distributed", numNodes=3)
    data["spec"]["suspend"] = True
    js = jobset(objects(data, bundled("torch-distributed")))
    node = rjob(js, c.NODE)
    assert node["replicas"] == 1
    assert node["template"]["spec"]["parallelism"] == node["template"]["spec"]["completions"] == 3
    assert node["template"]["metadata"]["labels"][c.LABEL_ANCESTOR] == c.ANCESTOR_TRAINER  # copied through
    assert js["spec"]["suspend"] is True


def test_the_trainer_overrides_apply_to_the_node_container() -> None:
    data = bundled_job(
        "torch-distributed",
        numNodes=1,
        image="my/img:2",
        command=["python"],
        args=["train.py"],
        env=[{"name": "FOO", "value": "bar"}],
    )
    ct = container(objects(data, bundled("torch-distributed")))
    assert ct["image"] == "my/img:2" and ct["command"] == ["python"] and ct["args"] == ["train.py"]
    assert env(ct)["FOO"] == "bar"


def test_without_trainer_overrides_the_runtime_image_stays() -> None:
    rt = bundled("torch-distributed")
    image = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    ct = container(objects(bundled_job("torch-distributed"), rt))
    assert ct["image"] == image["image"]
    assert "command" not in ct and "args" not in ct


def test_the_initializers_get_storage_uri_env_and_secret() -> None:
    data = bundled_job("torchtune-llama3.2-1b", numNodes=1)
    data["spec"]["initializer"] = {
        "dataset": {"storageUri": "hf://me/data", "env": [{"name": "X", "value": "1"}], "secretRef": {"name": "hf"}},
        "model": {"env": [{"name": c.INITIALIZER_ENV_STORAGE_URI, "value": "hf://me/model"}]},
    }
    found = objects(data, bundled("torchtune-llama3.2-1b"))
    dataset = container(found, c.DATASET_INITIALIZER, c.DATASET_INITIALIZER)
    assert env(dataset)[c.INITIALIZER_ENV_STORAGE_URI] == "hf://me/data"
    assert env(dataset)["X"] == "1"
    assert dataset["envFrom"] == [{"secretRef": {"name": "hf"}}]
    model = container(found, c.MODEL_INITIALIZER, c.MODEL_INITIALIZER)
    assert env(model)[c.INITIALIZER_ENV_STORAGE_URI] == "hf://me/model"  # the user's env beats the runtime's
    js = jobset(found)
    assert [rjob(js, n)["replicas"] for n in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER, c.NODE)] == [1, 1, 1]
    assert rjob(js, c.NODE)["dependsOn"] == [
        {"name": c.DATASET_INITIALIZER, "status": "Complete"},
        {"name": c.MODEL_INITIALIZER, "status": "Complete"},
    ]


def test_an_initializer_the_runtime_lacks_is_refused() -> None:
    data = bundled_job("torch-distributed", numNodes=1)
    data["spec"]["initializer"] = {"dataset": {"storageUri": "hf://me/data"}}
    with pytest.raises(ValidationFailedError) as err:
        objects(data, bundled("torch-distributed"))
    (error,) = err.value.errors
    assert error.path == "spec.runtimeRef"
    assert error.message == "must have dataset-initializer job when trainJob is configured with input datasetConfig"


def test_resources_are_written_as_canonical_quantities() -> None:
    ct = container(
        objects(
            bundled_job("torch-distributed", resourcesPerNode={"limits": {"cpu": 0.7, "memory": "1024Mi"}}),
            bundled("torch-distributed"),
        )
    )
    assert ct["resources"]["limits"] == {"cpu": "700m", "memory": "1Gi"}


def test_a_name_too_long_for_the_jobs_pods_is_reported_as_a_rejection() -> None:
    fine = result(bundled_job("torch-distributed", "a" * 40), bundled("torch-distributed"))
    assert fine.rejections == []
    long = result(bundled_job("torch-distributed", "a" * 60), bundled("torch-distributed"))
    (error,) = long.rejections
    assert error.path == "metadata.name"
    assert "job names generated for this JobSet will exceed 63 characters" in error.message
    assert jobset(long.objects)["metadata"]["name"] == "a" * 60  # the controller still builds it
    pods = result(bundled_job("torch-distributed", "a" * 52), bundled("torch-distributed"))
    assert ["pod names" in e.message for e in pods.rejections] == [True]


def test_a_dependency_on_a_later_or_missing_job_is_a_rejection() -> None:
    rt = bundled("torchtune-llama3.2-1b")
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["dependsOn"] = [{"name": c.NODE, "status": "Complete"}]
    refused = result(bundled_job("torchtune-llama3.2-1b"), rt).rejections
    assert [(e.path, e.message) for e in refused] == [
        ("spec.replicatedJobs[0].dependsOn", "DependsOn can't be set for the first ReplicatedJob")
    ]


def test_webhook_refusals_the_controller_ignores_are_warnings() -> None:
    rt = bundled("torch-distributed")
    rt["spec"]["template"]["spec"]["successPolicy"] = {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    rt["spec"]["template"]["spec"]["network"] = {"subdomain": "Bad_Name"}
    warnings = result(bundled_job("torch-distributed"), rt).warnings
    assert any("invalid replicatedJob name 'launcher'" in w for w in warnings), warnings
    assert any("spec.network.subdomain" in w for w in warnings), warnings
    assert all(w.startswith("the JobSet webhook would reject this JobSet: ") for w in warnings)


@pytest.mark.parametrize("runtime", ["torch-distributed", "deepspeed-distributed", "torchtune-llama3.2-1b"])
def test_the_jobset_plugin_acts_on_every_runtime(runtime: str) -> None:
    assert JobSetPlugin.policy_key is None  # no policy selects it
    done = result(bundled_job(runtime), bundled(runtime))
    assert JobSetPlugin.name in done.plugins
    assert len(of_kind(done.objects, "JobSet")) == 1
