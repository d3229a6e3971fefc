"""`python -m ktrain.api.generate` (ktrain/api/generate.py): the table of the plain records, built from
the pydantic models; a model the records cannot mirror is refused with the reason."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from ktrain.api import generate


def test_the_generated_table_is_current() -> None:
    assert generate.SPEC_FILE.read_text(encoding="utf-8") == generate.spec_text(), (
        "ktrain/api/record_spec.py is stale: run `python -m ktrain.api.generate`"
    )


def test_the_table_holds_every_model_of_the_api_modules_but_the_base() -> None:
    import importlib

    spec = generate.build_spec()
    for module_name in generate.MODULES:
        module = importlib.import_module(module_name)
        models = {
            n
            for n, c in vars(module).items()
            if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == module_name and c.__name__ == n
        }
        # an alias (ClusterTrainingRuntime = TrainingRuntime) is no second model
        assert models - {"KubeModel"} == {n for n, s in spec.items() if s["module"] == module_name}
    assert "KubeModel" not in spec
    assert spec["TrainJob"]["behaviours"] == ("TrainJobBehaviour",)
    runtime_ref = next(f for f in spec["TrainJobSpec"]["fields"] if f[0] == "runtime_ref")
    assert runtime_ref[1:4] == ("runtimeRef", ("model", "RuntimeRef"), "required")


def _models(monkeypatch: pytest.MonkeyPatch, **fields: Any) -> None:
    """An API module of one model `Bad` with these annotated fields, the only module generate reads."""
    module = types.ModuleType("fake_api_models")
    bad = type("Bad", (BaseModel,), {"__annotations__": fields, "__module__": module.__name__})
    module.Bad = bad  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(generate, "MODULES", (module.__name__,))


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (dict[int, str], "dict keys must be str"),
        (BaseModel | int, "records support unions of scalars only"),
        (set[str], "no record type for"),
    ],
)
def test_a_field_the_records_cannot_mirror_is_refused(
    monkeypatch: pytest.MonkeyPatch, annotation: Any, message: str
) -> None:
    _models(monkeypatch, x=annotation)
    with pytest.raises(TypeError, match=message):
        generate.build_spec()


def test_the_types_and_defaults_it_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("fake_api_models")

    class Bad(BaseModel):
        model_config = {"extra": "forbid"}
        a: int
        b: str | None = None
        c: list[str] = Field(default_factory=list)
        d: dict[str, int | str] = Field(default_factory=dict, alias="dee")

    Bad.__module__ = module.__name__
    module.Bad = Bad  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(generate, "MODULES", (module.__name__,))
    assert generate.build_spec()["Bad"] == {
        "module": "fake_api_models",
        "behaviours": (),
        "extra": "forbid",
        "fields": (
            ("a", "a", ("int",), "required", None),
            ("b", "b", ("opt", ("str",)), "value", None),
            ("c", "c", ("list", ("str",)), "factory", "list"),
            ("d", "dee", ("dict", ("union", (("int",), ("str",)))), "factory", "dict"),
        ),
    }


def test_a_model_that_ignores_unknown_fields_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _models(monkeypatch, x=int)  # pydantic's default: extra="ignore"
    with pytest.raises(TypeError, match="Bad: records support extra='forbid' or 'allow'"):
        generate.build_spec()


def test_main_writes_the_table_it_builds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "record_spec.py"
    monkeypatch.setattr(generate, "SPEC_FILE", target)
    generate.main()
    assert target.read_text(encoding="utf-8") == generate.spec_text()
    assert capsys.readouterr().out == f"wrote {target}\n"
