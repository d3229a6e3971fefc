"""`ktrain.service.job_file.load_job_input`: a job file read as the TrainJob to render: YAML, a
jinja2 template with its values, or a Training Operator v1 job converted in memory; and the errors
for files that hold no job, or more than one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain.errors import InputError, UsageError
from ktrain.service.job_file import load_job_input

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

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: mine
spec:
  template:
    spec:
      replicatedJobs: []
"""

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: old
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: img:1
            command: [python, train.py]
---
apiVersion: v1
kind: Service
metadata:
  name: tb
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_trainjob_file_is_its_document_with_positions_and_its_runtimes(tmp_path: Path) -> None:
    path = write(tmp_path, "job.yaml", TRAINJOB + "---\n" + RUNTIME)
    doc, conversion = load_job_input(path)
    assert conversion is None and doc.file == path
    assert doc.data["spec"]["trainer"] == {"numNodes": 2}
    assert doc.positions[("spec", "trainer", "numNodes")][0] == 9  # errors point at the file's line
    assert [s.data["kind"] for s in doc.siblings] == ["ClusterTrainingRuntime"]


def test_text_given_is_read_instead_of_the_file(tmp_path: Path) -> None:
    doc, _ = load_job_input("job.yaml", text=TRAINJOB.replace("numNodes: 2", "numNodes: 7"))
    assert doc.data["spec"]["trainer"]["numNodes"] == 7 and doc.file == "job.yaml"


def test_a_template_is_rendered_with_its_values_files(tmp_path: Path) -> None:
    path = write(tmp_path, "job.yaml.j2", TRAINJOB.replace("numNodes: 2", "numNodes: {{ nodes }}"))
    values = write(tmp_path, "values.yaml", "nodes: 4\n")
    doc, _ = load_job_input(path, [values])
    assert doc.data["spec"]["trainer"] == {"numNodes": 4}


def test_values_for_a_file_that_is_not_a_template_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "job.yaml", TRAINJOB)
    values = write(tmp_path, "values.yaml", "nodes: 4\n")
    with pytest.raises(UsageError, match=r"--values needs a job template: .*job\.yaml is not a template") as err:
        load_job_input(path, [values])
    assert "*.j2" in (err.value.hint or "")


def test_a_v1_job_is_converted_and_what_it_leaves_out_is_said(tmp_path: Path) -> None:
    path = write(tmp_path, "v1.yaml", PYTORCHJOB)
    warnings: list[str] = []
    doc, conversion = load_job_input(path, warnings=warnings)
    assert conversion is not None and doc.data["kind"] == "TrainJob"
    assert warnings == [f"{path}:16: document 2 (Service tb) is not part of the job: left out (apply it separately)"]


@pytest.mark.parametrize(
    "text, message, line",
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "no TrainJob in this file", 2),
        ("", "the file is empty", None),
        (TRAINJOB + "---\n" + TRAINJOB, "more than one TrainJob in this file; ktrain renders one job at a time", 11),
    ],
)
def test_a_file_without_exactly_one_job_is_refused_at_its_line(
    tmp_path: Path, text: str, message: str, line: int | None
) -> None:
    path = write(tmp_path, "job.yaml", text)
    with pytest.raises(InputError, match=message) as err:
        load_job_input(path)
    assert (err.value.file, err.value.line) == (path, line)
