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


def test_engine_does_no_io() -> None:
    forbidden = re.compile(r"^\s*(import|from)\s+(os|pathlib|io|socket|subprocess|random|secrets|uuid|time|kubernetes|"
                           r"rich|typer|ruamel|jinja2|jsonschema)\b", re.M)
    for path in ENGINE.rglob("*.py"):
        text = path.read_text()
        assert not forbidden.search(text), path
        assert "open(" not in text and "print(" not in text and "input(" not in text, path
