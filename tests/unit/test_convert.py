"""`convert_documents` (ktrain/convert/__init__.py): the 36 upstream v1 examples convert, render and
pass the CRD schemas; Lists and multi-document files; a converted job through render and validate.

Golden expectations name the v1 controller code they were checked against by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import UPSTREAM
from v1convert import ELASTIC, TF_FULL, convert_text, crd_validate, one, server_accepts

from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.errors import InputError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest
from ktrain.service.validate import validate_request

EXAMPLES = UPSTREAM / "training-operator" / "examples"


EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml")) if EXAMPLES.is_dir() else []


@pytest.mark.shared
@pytest.mark.parametrize("name", EXAMPLE_FILES or ["<no ../shared>"])
def test_every_upstream_example_converts_renders_and_passes_the_crd_schemas(name: str, tmp_path: Path) -> None:
    path = EXAMPLES / name
    (conv,) = convert_text(path.read_text(), str(path))
    crd_validate(conv.trainjob)
    if conv.runtime is not None:
        mpi = conv.runtime["spec"]["mlPolicy"].get("mpi") or {}
        if mpi.get("mpiImplementation") in ("Intel", "MPICH"):
            # the ktrain extension (--allow-extensions): the v2.3 CRD knows OpenMPI only, and the
            # report says so
            import jsonschema

            with pytest.raises(jsonschema.ValidationError, match="is not one of"):
                crd_validate(conv.runtime)
            row = next(r for r in conv.rows if r.field == "spec.mpiImplementation")
            assert row.status == APPROXIMATED and "--allow-extensions" in row.note
            crd_validate({**conv.runtime, "spec": {**conv.runtime["spec"], "mlPolicy": {"mpi": {}}}})
        else:
            crd_validate(conv.runtime)
    # `job render -f v1.yaml`: converted in memory, generated runtime registered first
    request = RenderRequest(file=str(path), allow_extensions=True)
    outcome = render_request(request, RuntimeRegistry())
    assert request.notes and conv.kind in request.notes[0]
    assert outcome.runtime.runtime.name == conv.runtime_name
    for obj in outcome.result.objects:
        crd_validate(obj)
        server_accepts(obj)
    # nothing silent: every row says where the field went or why it did not
    assert all(r.status in (KEPT, APPROXIMATED, DROPPED) and (r.target or r.note) for r in conv.rows)
    assert all(r.note for r in conv.rows if r.status != KEPT)
    # the round trip: convert, then render the printed documents
    from ktrain.output.yamltext import dump_all

    out = tmp_path / "converted.yaml"
    out.write_text(dump_all([conv.trainjob] + ([conv.runtime] if conv.runtime else [])))
    again = render_request(RenderRequest(file=str(out), allow_extensions=True), RuntimeRegistry())
    assert _without_keys(again.result.objects) == _without_keys(outcome.result.objects)


def _without_keys(objects: list[dict]) -> list[dict]:
    """The SSH key pair is fresh for each render."""
    return [
        {**o, "data": "<key>"} if o["kind"] == "Secret" and o.get("type") == "kubernetes.io/ssh-auth" else o
        for o in objects
    ]


def test_kind_list_converts_every_item() -> None:
    items = [yaml.safe_load(ELASTIC), yaml.safe_load(TF_FULL)]
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}})
    convs = convert_text(text)
    assert [(c.kind, c.name, c.base) for c in convs] == [
        ("PyTorchJob", "elastic", ("items", 0)),
        ("TFJob", "tf", ("items", 1)),
    ]


def test_multi_document_file_and_render_refuses_two_jobs(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(ELASTIC + "---\n" + TF_FULL)
    assert len(convert_text(path.read_text())) == 2
    with pytest.raises(InputError, match="more than one job") as exc:
        render_request(RenderRequest(file=str(path)), RuntimeRegistry())
    assert exc.value.line == ELASTIC.count("\n") + 2


def test_validate_accepts_a_converted_job(tmp_path: Path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TF_FULL)
    outcome = validate_request(RenderRequest(file=str(path)), RuntimeRegistry())
    assert outcome.job.name == "tf"


def test_a_render_error_in_a_converted_job_points_into_the_v1_file(tmp_path: Path) -> None:
    from ktrain.errors import ValidationFailedError

    path = tmp_path / "bad.yaml"
    path.write_text(ELASTIC.replace("limits: {nvidia.com/gpu: 4}", "limits: {cpu: lots}"))
    with pytest.raises(ValidationFailedError) as exc:
        render_request(RenderRequest(file=str(path)), RuntimeRegistry())
    located = list(exc.value.locations.values())
    assert located and located[0].file == str(path) and (located[0].line, located[0].column) == (23, 24)


@pytest.mark.shared
@pytest.mark.parametrize("name", ["tensorflow-distributed", "paddle-distributed", "mxnet-distributed"])
def test_bundled_v1_framework_runtimes_pass_the_real_crd_schema(name: str) -> None:
    """No new mlPolicy fields: the real Trainer CRD accepts these runtimes as they are."""
    entry = RuntimeRegistry().get(name)
    assert entry.document is not None
    crd_validate(entry.document.data)
    assert set(entry.document.data["spec"]["mlPolicy"]) == {"numNodes", "torch"}


def test_a_generated_runtime_points_back_at_the_v1_pod_templates() -> None:
    from ktrain.service.conversion import converted_runtime_entry

    conv = one(TF_FULL, file="tf.yaml")
    entry = converted_runtime_entry(conv)
    assert entry is not None and entry.document is not None
    rjobs = [r["name"] for r in conv.runtime["spec"]["template"]["spec"]["replicatedJobs"]]
    k = rjobs.index("ps")
    image = ("spec", "template", "spec", "replicatedJobs", k, "template", "spec", "template", "spec", "containers", 0)
    # the PS container's image is on line 18 of TF_FULL, its value at column 20
    assert entry.document.file == "tf.yaml"
    assert entry.document.locate((*image, "image")) == (18, 20)


def test_job_paths_finds_the_v1_jobs_of_a_document_and_list_leftovers_names_the_rest() -> None:
    from ktrain.convert import job_paths, list_leftovers
    from ktrain.inputs.documents import load_documents

    items = [yaml.safe_load(ELASTIC), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]
    items.append(yaml.safe_load(TF_FULL))
    (doc,) = load_documents(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}), "list.yaml")
    assert job_paths(doc) == [("items", 0), ("items", 2)]
    (note,) = list_leftovers(doc)
    assert note.startswith("list.yaml:") and "List item 2 (ConfigMap) is not a v1 job: left out" in note
    (single,) = load_documents(TF_FULL, "tf.yaml")
    assert job_paths(single) == [()] and list_leftovers(single) == []
    (bad,) = load_documents("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "bad.yaml")
    with pytest.raises(InputError, match="a List needs items"):
        job_paths(bad)
