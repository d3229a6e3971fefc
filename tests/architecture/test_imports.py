"""The render path stays light: no kubernetes client, no jsonschema, no jinja2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "ktrain" / "engine"


def test_rendering_never_imports_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from ktrain.cli import main\n"
        "main(['render', '--runtime', 'deepspeed-distributed', '--nodes', '4', '-o', 'name'])\n"
        "heavy = [m for m in ('kubernetes', 'jsonschema', 'jinja2') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def _modules_after(argv: list[str], stdin: str = "") -> str:
    code = (
        "import sys, io\n"
        f"sys.stdin = io.StringIO({stdin!r})\n"
        "from ktrain.cli import main\n"
        f"code = main({argv!r})\n"
        "print('CODE', code, 'LOADED', [m for m in ('kubernetes', 'jsonschema', 'jinja2') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def test_plain_job_file_with_set_does_not_import_jinja2() -> None:
    job = "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n"
    out = _modules_after(["render", "-f", "-", "--set", "trainer.numNodes=2", "-o", "name"], job)
    assert "CODE 0 LOADED []" in out, out


def test_only_a_template_imports_jinja2() -> None:
    job = "kind: TrainJob\nspec:\n  runtimeRef: {name: '{{ rt }}'}\n"
    out = _modules_after(["render", "-f", "-", "--set", "rt=torch-distributed", "-o", "name"], job)
    assert "CODE 0 LOADED ['jinja2']" in out, out


def test_validate_init_and_explain_stay_off_the_cluster_client() -> None:
    for argv in (["job", "validate", "--runtime", "torch-distributed"], ["job", "init", "-r", "torch-distributed"],
                 ["render", "--runtime", "torch-distributed", "--explain"]):
        out = _modules_after(argv)
        assert "CODE 0" in out and "kubernetes" not in out.split("LOADED", 1)[1], (argv, out)


def test_engine_does_no_io() -> None:
    forbidden = re.compile(r"^\s*(import|from)\s+(os|pathlib|io|socket|subprocess|random|secrets|uuid|time|kubernetes|"
                           r"rich|typer|ruamel|jinja2|jsonschema)\b", re.M)
    for path in ENGINE.rglob("*.py"):
        text = path.read_text()
        assert not forbidden.search(text), path
        assert "open(" not in text and "print(" not in text and "input(" not in text, path
