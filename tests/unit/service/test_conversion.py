"""A v1 job converted in memory as the render's documents: positions that point into the v1 file,
the generated runtime as a registry entry, and the note the render prints."""

from __future__ import annotations

from v1convert import ELASTIC, TF_FULL, one

from ktrain.service.conversion import conversion_note, converted_document, converted_runtime_entry


def test_the_converted_document_is_the_trainjob_pointing_at_the_v1_lines() -> None:
    conv = one(ELASTIC, file="elastic.yaml")
    doc = converted_document(conv)
    assert doc.data == conv.trainjob and doc.data is not conv.trainjob
    assert doc.file == "elastic.yaml"
    assert doc.positions[()][0] == 1
    line, _ = doc.locate(("spec", "trainer", "image"))
    assert line is not None and "image: torch:1" in doc.source_line(line)


def test_a_job_on_a_bundled_runtime_has_no_generated_runtime() -> None:
    conv = one(ELASTIC, file="elastic.yaml")
    assert converted_runtime_entry(conv) is None
    assert conversion_note(conv) == (
        f"converted PyTorchJob elastic to a TrainJob on runtime {conv.runtime_name} "
        "(see `ktrain job convert -f elastic.yaml` for what changed)"
    )


def test_a_generated_runtime_is_an_entry_pointing_at_the_v1_file() -> None:
    conv = one(TF_FULL, file="tf.yaml")
    entry = converted_runtime_entry(conv)
    assert entry is not None
    assert entry.source == "converted" and entry.path == "tf.yaml"
    assert entry.runtime.kind == "TrainingRuntime" and entry.runtime.name == conv.runtime_name
    expected = f"converted TFJob tf to a TrainJob on a TrainingRuntime {conv.runtime_name} generated"
    assert conversion_note(conv).startswith(expected)
