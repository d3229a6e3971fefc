"""No function of ktrain/convert is longer than 120 lines (issue #32): a long one is split into
functions whose names say what each part does."""

from __future__ import annotations

import ast
from pathlib import Path

LIMIT = 120
CONVERT = Path(__file__).resolve().parents[2] / "ktrain" / "convert"


def test_no_function_of_ktrain_convert_is_over_120_lines() -> None:
    files = sorted(CONVERT.glob("*.py"))
    assert len(files) > 10
    long = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > LIMIT:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({size} lines)")
    assert not long, long
