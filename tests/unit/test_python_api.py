"""The package `ktrain.python_api` (`import ktrain`'s Python API): cheap to import, every name of it a
`ktrain` attribute, and the `>>>` examples of docs/python-api.md run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ktrain
from ktrain import python_api

REPO = Path(__file__).resolve().parents[2]


def test_import_ktrain_loads_no_heavy_module() -> None:
    heavy = ("typer", "pydantic", "kubernetes", "jinja2", "rich", "ruamel", "yaml")
    for statement in ("import ktrain", "from ktrain import TrainerClient, CustomTrainer, TorchTuneConfig, render"):
        code = f"import sys\n{statement}\nprint([m for m in {heavy!r} if m in sys.modules])"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[]", statement


def test_every_name_of_the_python_api_is_a_ktrain_attribute() -> None:
    from ktrain import _PYTHON_API

    assert set(_PYTHON_API) == set(python_api.__all__) - {"function_source", "train_request"}
    assert all(getattr(ktrain, name) is getattr(python_api, name) for name in _PYTHON_API)


def test_python_api_doc_examples_run() -> None:
    import doctest

    failures, tests = doctest.testfile(str(REPO / "docs" / "python-api.md"), module_relative=False)
    assert tests > 0 and failures == 0
