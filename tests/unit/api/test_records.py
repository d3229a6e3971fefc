"""The plain records the render path uses must agree with the pydantic models they mirror.

The promise (ktrain/api/records.py): what pydantic refuses, the records refuse too (so its
error is the one shown); what the records accept, pydantic accepts with the same content; and
the inputs ktrain meets in practice take the record path (or the speed-up would be a fiction).
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ktrain.api.records import NotPlain, Record, build, pydantic_model, record_class, validate
from ktrain.engine import RenderContext, SshKeyPair, render
from ktrain.errors import KtrainError
from ktrain.inputs.documents import load_documents

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared"
KINDS = {"TrainJob": "TrainJob", "TrainingRuntime": "TrainingRuntime", "ClusterTrainingRuntime": "TrainingRuntime"}


def _documents() -> list[tuple[str, str, Any]]:
    """(label, model, data) of every TrainJob and runtime document the project and ../shared hold."""
    files = sorted((ROOT / "runtimes").glob("*.yaml")) + sorted(
        (ROOT / "tests" / "golden" / "cases").glob("*/*/*.yaml")
    )
    if SHARED.is_dir():
        files += sorted((SHARED / "conformance" / "cases").glob("*/*.yaml"))
        files += sorted((SHARED / "reference" / "upstream").rglob("*.yaml"))
    out = []
    for path in files:
        try:
            docs = load_documents(path.read_text(encoding="utf-8"), str(path))
        except KtrainError:
            continue
        for i, doc in enumerate(docs):
            if isinstance(doc.data, dict) and doc.data.get("kind") in KINDS:
                out.append((f"{path.relative_to(path.parents[2])}#{i}", KINDS[doc.data["kind"]], doc.data))
    return out


DOCUMENTS = _documents()


def _pydantic(model: str, data: Any) -> Any:
    try:
        return pydantic_model(model).model_validate(data)
    except ValidationError:
        return None


def _record(model: str, data: Any) -> Record | None:
    try:
        return build(record_class(model), data)
    except NotPlain:
        return None


def _agree(model: str, data: Any) -> str:
    """Check the promise for one input; say which path it took."""
    before = copy.deepcopy(data)
    record = _record(model, data)
    strict = _pydantic(model, data)
    assert data == before, "validation changed its input"
    if record is None:
        return "pydantic" if strict is not None else "refused"
    assert strict is not None, f"records accepted what pydantic refuses: {data!r}"
    assert record.to_dict() == strict.to_dict()
    return "record"


def test_every_model_has_a_record_with_the_same_fields_and_behaviours() -> None:
    from ktrain.api.record_spec import MODELS

    for name in MODELS:
        strict, plain = pydantic_model(name), record_class(name)
        assert [f[0] for f in plain._fields] == list(strict.model_fields)
        for attr in {"name", "namespace", "labels", "framework", "policy_keys"} - set(strict.model_fields):
            assert hasattr(plain, attr) == hasattr(strict, attr), (name, attr)


@pytest.mark.shared(optional=True)  # ../shared's documents join the project's when it is there
@pytest.mark.parametrize(("label", "model", "data"), DOCUMENTS, ids=[d[0] for d in DOCUMENTS])
def test_real_documents_take_the_record_path_with_pydantics_content(label: str, model: str, data: Any) -> None:
    taken = _agree(model, data)
    # Valid documents must not need pydantic: that is the point of the records.
    assert taken in ("record", "refused"), f"{label} needed pydantic although it is plain YAML"


def _mutations(data: Any, rng: random.Random) -> Any:
    """One random change of the kind users make: a wrong type, a typo, a null, a missing field."""
    mutated = copy.deepcopy(data)
    holders: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k in list(node):
                holders.append((node, k))
                walk(node[k])
        elif isinstance(node, list):
            for i in range(len(node)):
                holders.append((node, i))
                walk(node[i])

    walk(mutated)
    if not holders:
        return mutated
    node, key = rng.choice(holders)
    value = node[key]
    choice = rng.randrange(9)
    if choice == 0:
        node[key] = str(value) if not isinstance(value, str) else 7
    elif choice == 1:
        node[key] = None
    elif choice == 2:
        node[key] = [value]
    elif choice == 3:
        node[key] = True if not isinstance(value, bool) else "true"
    elif choice == 4:
        node[key] = 1.0 if isinstance(value, int) else 4
    elif choice == 5 and isinstance(node, dict):
        del node[key]
    elif choice == 6 and isinstance(node, dict) and isinstance(key, str):
        snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in key)
        node[snake if snake != key else key + "x"] = node.pop(key)
    elif choice == 7 and isinstance(node, dict):
        node["unknownField"] = value
    else:
        node[key] = {"nested": value}
    return mutated


@pytest.mark.shared(optional=True)  # ../shared's documents join the project's when it is there
def test_random_mistakes_never_slip_past_the_records() -> None:
    rng = random.Random(20261123)
    taken = {"record": 0, "pydantic": 0, "refused": 0}
    for _, model, data in DOCUMENTS:
        for _ in range(25):
            taken[_agree(model, _mutations(data, rng))] += 1
    # the mutations must exercise every side of the promise (with or without ../shared's documents)
    assert all(count >= 20 for count in taken.values()), taken


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"spec": {"runtimeRef": {"name": "x"}, "trainer": {"numNodes": 2.0}}}, "a float pydantic would refuse"),
        ({"spec": {"runtimeRef": {"name": "x"}, "trainer": {"numNodes": True}}}, "a bool is not an int"),
        ({"spec": {"runtimeRef": {"name": "x"}, "trainer": {"num_nodes": 2}}}, "snake_case, which pydantic also takes"),
        ({"spec": {"runtimeRef": {"name": "x"}, "trainer": {"numNode": 2}}}, "an unknown field"),
        ({"spec": {"trainer": {}}}, "a missing required field"),
        ({"metadata": {"name": 3}, "spec": {"runtimeRef": {"name": "x"}}}, "a number for a string"),
        (
            {"spec": {"runtimeRef": {"name": "x"}, "trainer": {"resourcesPerNode": {"limits": {"cpu": True}}}}},
            "a bool for a quantity",
        ),
    ],
)
def test_what_the_records_leave_to_pydantic(data: dict[str, Any], why: str) -> None:
    with pytest.raises(NotPlain):
        build(record_class("TrainJob"), data)


def test_a_record_carries_defaults_extras_and_behaviours() -> None:
    job = validate(
        "TrainJob",
        {
            "metadata": {"name": "j", "resourceVersion": "12", "labels": {"a": "b"}},
            "spec": {
                "runtimeRef": {"name": "torch-distributed"},
                "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4, "cpu": "2", "x": 0.5}}},
            },
        },
    )
    assert isinstance(job, Record)
    assert (job.name, job.namespace) == ("j", "default")
    assert job.spec.runtime_ref.kind == "ClusterTrainingRuntime"
    assert job.spec.managed_by == "trainer.kubeflow.org/trainjob-controller"
    assert job.metadata.model_extra == {"resourceVersion": "12"}
    assert job.to_dict()["metadata"] == {"name": "j", "labels": {"a": "b"}, "resourceVersion": "12"}
    assert job.to_dict()["spec"]["trainer"]["resourcesPerNode"] == {
        "limits": {"nvidia.com/gpu": 4, "cpu": "2", "x": 0.5}
    }


def test_records_are_frozen_and_copy_like_pydantic() -> None:
    job = validate("TrainJob", {"spec": {"runtimeRef": {"name": "x"}}})
    with pytest.raises(TypeError):
        job.spec = None  # type: ignore[misc]
    changed = job.model_copy(update={"kind": "TrainJob"})
    assert changed == job and changed is not job
    dumped = job.to_dict()
    dumped["spec"]["runtimeRef"]["name"] = "changed"
    assert job.spec.runtime_ref.name == "x", "to_dict must hand out copies"


def test_coercible_input_still_works_through_pydantic() -> None:
    """metadata is lax in pydantic (kubectl get -o yaml output carries anything): a record
    refuses what it cannot vouch for, and `validate` falls back instead of failing."""
    job = validate("TrainJob", {"metadata": {"name": "j", "num_extra": 1}, "spec": {"runtimeRef": {"name": "x"}}})
    assert job.name == "j"


def _render(job: Any, runtime: Any) -> Any:
    ctx = RenderContext(ssh_key=SshKeyPair(b"PRIVATE", b"PUBLIC\n"))
    try:
        return render(job, runtime, ctx).objects
    except KtrainError as exc:
        return f"{type(exc).__name__}: {exc}"


GOLDEN = sorted((ROOT / "tests" / "golden" / "cases").glob("*/*/trainjob.yaml"))


@pytest.mark.parametrize("trainjob", GOLDEN, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_the_engine_renders_records_as_it_renders_pydantic_models(trainjob: Path) -> None:
    job_data = load_documents(trainjob.read_text(), str(trainjob))[0].data
    runtime_docs = [
        d.data
        for d in load_documents((trainjob.parent / "runtime.yaml").read_text(), "runtime.yaml")
        if isinstance(d.data, dict) and d.data.get("kind") in KINDS
    ]
    job_data.setdefault("metadata", {}).setdefault("namespace", "default")
    strict_job, plain_job = _pydantic("TrainJob", job_data), _record("TrainJob", job_data)
    if strict_job is None:
        pytest.skip("a case about an invalid TrainJob")
    assert plain_job is not None
    for runtime_data in runtime_docs:
        strict_rt, plain_rt = _pydantic("TrainingRuntime", runtime_data), _record("TrainingRuntime", runtime_data)
        if strict_rt is None:
            continue
        assert plain_rt is not None
        assert _render(plain_job, plain_rt) == _render(strict_job, strict_rt)
