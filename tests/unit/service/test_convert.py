"""`ktrain job convert`'s use case: convert_file on v1 job files, the other documents kept, and its
refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from v1convert import ELASTIC, TF_FULL

from ktrain.errors import InputError, KtrainError
from ktrain.service.convert import convert_file

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "jobs.yaml"
    path.write_text(text)
    return str(path)


def test_every_v1_job_converts_and_other_documents_are_kept_with_a_note(tmp_path: Path) -> None:
    path = _file(tmp_path, ELASTIC + "---\n" + CONFIG_MAP + "---\n" + TF_FULL)
    outcome = convert_file(path)
    assert [(conv.kind, conv.name) for conv in outcome.conversions] == [("PyTorchJob", "elastic"), ("TFJob", "tf")]
    assert outcome.failures == []
    kinds = [o["kind"] for o in outcome.objects]
    assert kinds.count("TrainJob") == 2 and "ConfigMap" in kinds
    line = len(ELASTIC.splitlines()) + 2  # after the first document and its `---`
    assert outcome.notes == [f"{path}:{line}: document 2 (ConfigMap settings) is not a v1 job: kept as it is"]
    assert [(e["name"], "fields" in e, "converted" in e) for e in outcome.entries] == [
        ("elastic", True, False),
        ("tf", True, False),
    ]


def test_a_trainjob_file_has_nothing_to_convert(tmp_path: Path) -> None:
    text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec: {}\n"
    with pytest.raises(KtrainError, match="this is already a TrainJob: nothing to convert") as caught:
        convert_file(_file(tmp_path, text))
    assert caught.value.line == 2


def test_a_file_without_a_v1_job_names_what_ktrain_converts(tmp_path: Path) -> None:
    with pytest.raises(KtrainError, match="no Training Operator v1 job in this file \\(kind 'ConfigMap'\\)") as caught:
        convert_file(_file(tmp_path, CONFIG_MAP))
    assert "PyTorchJob" in caught.value.message


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the file is empty"):
        convert_file(_file(tmp_path, ""))


def test_a_job_that_cannot_convert_is_reported_and_the_others_still_convert(tmp_path: Path) -> None:
    bad = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: bad}\nspec: {pytorchReplicaSpecs: 3}\n"
    outcome = convert_file(_file(tmp_path, bad + "---\n" + ELASTIC))
    assert [conv.name for conv in outcome.conversions] == ["elastic"]
    assert [(f.kind, f.name) for f in outcome.failures] == [("PyTorchJob", "bad")]
    first = outcome.entries[0]
    assert first["converted"] is False and first["name"] == "bad" and first["error"]
