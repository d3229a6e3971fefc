"""The import contracts of pyproject.toml (`[tool.importlinter]`) hold, and they do bite.

The layers (docs/architecture.md): launcher > cli > completion > service > authoring|cluster >
inputs|output > engine > api > errors|constants > util. A module imports downwards only, lazy
imports inside functions included.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _lint_imports() -> str:
    found = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(found).is_file():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return found


def _run(cwd: Path, package_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    return subprocess.run(
        [_lint_imports(), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _contracts_config() -> str:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.importlinter]")
    return text[start:]


def test_ktrain_keeps_every_import_contract() -> None:
    out = _run(REPO, REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_the_layers_contract_rejects_an_import_from_a_higher_layer(tmp_path: Path) -> None:
    """A toy `ktrain` with the same layers, whose engine reaches up into the CLI inside a function."""
    package = tmp_path / "src" / "ktrain"
    layers = (
        "launcher",
        "cli",
        "completion",
        "service",
        "authoring",
        "cluster",
        "convert",
        "jobs",
        "local",
        "inputs",
        "output",
        "progress",
    )
    for layer in layers:
        (package / layer).mkdir(parents=True)
        (package / layer / "__init__.py").write_text("")
    for module in ("engine", "api", "util"):
        (package / module).mkdir(parents=True)
        (package / module / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "errors.py").write_text("")
    (package / "python_api.py").write_text("")
    (package / "constants.py").write_text("")
    (package / "engine" / "render.py").write_text("def render():\n    from ktrain.cli import app\n")
    (tmp_path / "pyproject.toml").write_text(_contracts_config(), encoding="utf-8")
    out = _run(tmp_path, tmp_path / "src")
    assert out.returncode != 0
    assert "ktrain.engine.render -> ktrain.cli" in out.stdout, out.stdout
