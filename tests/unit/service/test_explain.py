"""`job render --explain`'s use case: explain_notes says where each rendered field came from."""

from __future__ import annotations

from pathlib import Path

from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.explain import explain_notes
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

CONTAINER = ("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers", 0)


def _notes(request: RenderRequest) -> tuple[list, list]:
    outcome = render_request(request, RuntimeRegistry())
    return outcome.result.objects, explain_notes(request, outcome)


def test_one_note_per_object_and_the_name_comes_from_the_flag() -> None:
    request = RenderRequest(overrides=JobOverrides(runtime="torch-distributed", name="demo", nodes=2))
    objects, notes = _notes(request)
    assert len(notes) == len(objects) == 1
    assert notes[0](("metadata", "name")) == "flag --name"
    assert notes[0](("metadata", "namespace")) == "default namespace"


def test_a_name_from_the_job_file_is_credited_to_its_metadata(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: filed}\n"
        "spec: {runtimeRef: {name: torch-distributed}}\n"
    )
    _, notes = _notes(RenderRequest(file=str(path)))
    assert notes[0](("metadata", "name")) == "TrainJob metadata"


def test_the_code_wrappers_words_are_credited_to_it(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    command = ["python", "train.py"]
    overrides = JobOverrides(runtime="torch-distributed", name="demo", code=[str(tmp_path)], command=command)
    objects, notes = _notes(RenderRequest(overrides=overrides))
    jobset, note = objects[-1], notes[-1]
    command = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert note((*CONTAINER, "command", 0)).startswith("--code/--pip wrapper (ktrain: copy the code, pip install")
    assert "every MPI host" not in note((*CONTAINER, "command", 0))
    last = note((*CONTAINER, "command", len(command) - 1))
    assert last.endswith(", run by the --code/--pip wrapper")
