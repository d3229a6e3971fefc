"""`ktrain.service.job`: a job file and/or flags turned into the TrainJob as it will be submitted
(flags over the file, the name derived when none is given, the namespace defaulted), and its runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain.cli.common import registry_from
from ktrain.errors import UsageError
from ktrain.service.job import build_job, job_document
from ktrain.service.requests import JobOverrides, RenderRequest

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: demo
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
"""


def document(request: RenderRequest) -> tuple[dict, str]:
    doc, entry = job_document(request, registry_from(None, None))
    return doc.data, entry.runtime.name


def test_flags_alone_make_a_trainjob_with_a_derived_name(tmp_path: Path) -> None:
    flags = JobOverrides(runtime="torch-distributed", nodes=3)
    data, runtime = document(RenderRequest(overrides=flags))
    assert runtime == "torch-distributed"
    assert data["spec"] == {
        "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
        "trainer": {"numNodes": 3},
    }
    name = data["metadata"]["name"]
    assert name.startswith("torch-") and data["metadata"]["namespace"] == "default"
    assert (
        document(RenderRequest(overrides=JobOverrides(runtime="torch-distributed", nodes=3)))[0]["metadata"]["name"]
        == name
    )  # derived from the content: the same job, the same name
    assert (
        document(RenderRequest(overrides=JobOverrides(runtime="torch-distributed", nodes=4)))[0]["metadata"]["name"]
        != name
    )


def test_flags_win_over_the_file_and_the_files_positions_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(TRAINJOB)
    doc, entry = job_document(
        RenderRequest(file=str(path), overrides=JobOverrides(nodes=5, namespace="ns1")), registry_from(None, None)
    )
    assert doc.data["metadata"] == {"name": "demo", "namespace": "ns1"}
    assert doc.data["spec"]["trainer"]["numNodes"] == 5
    assert doc.file == str(path) and entry.runtime.name == "torch-distributed"


def test_the_namespace_defaults_to_the_contexts(tmp_path: Path) -> None:
    data, _ = document(RenderRequest(overrides=JobOverrides(runtime="torch-distributed"), default_namespace="team-a"))
    assert data["metadata"]["namespace"] == "team-a"


def test_build_job_parses_the_document_into_the_model(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(TRAINJOB)
    job, entry, doc = build_job(RenderRequest(file=str(path)), registry_from(None, None))
    assert entry.runtime.name == "torch-distributed"
    assert job.metadata.name == "demo" and job.spec.trainer.num_nodes == 2
    assert doc is not None and doc.file == str(path)  # errors can point into the file
    _, _, without_file = build_job(
        RenderRequest(overrides=JobOverrides(runtime="torch-distributed")), registry_from(None, None)
    )
    assert without_file is None


def test_no_file_and_no_runtime_is_a_usage_error_with_an_example() -> None:
    with pytest.raises(UsageError, match="no job given: pass a job file with -f, or --runtime NAME") as err:
        document(RenderRequest())
    assert "--runtime torch-distributed" in (err.value.hint or "")


def test_an_unknown_runtime_kind_is_refused() -> None:
    with pytest.raises(UsageError, match="--runtime-kind must be TrainingRuntime or ClusterTrainingRuntime, got 'Foo'"):
        document(RenderRequest(overrides=JobOverrides(runtime="torch-distributed", runtime_kind="Foo")))
