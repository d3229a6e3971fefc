"""The render half stays readable (issue #32 item 6): no function over 120 lines, no module over 800.

The cluster half (ktrain/cluster, ktrain/jobs, the cluster commands) is held to the same by its own
test once it is reorganised; until then it is left out here.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "api", "inputs", "output", "authoring", "completion", "util", "cli", "service")
CLUSTER = ("list", "get", "why", "logs", "wait", "delete", "create", "suspend", "diff")
CLUSTER_COMMANDS = {f"job_{command}.py" for command in CLUSTER}
MAX_FUNCTION, MAX_MODULE = 120, 800


def modules() -> list[Path]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / "ktrain" / package).rglob("*.py")):
            if path.name in CLUSTER_COMMANDS and path.parent.name == "commands":
                continue
            found.append(path)
    return found


def test_no_module_is_over_800_lines() -> None:
    long = {str(p.relative_to(REPO)): n for p in modules() if (n := p.read_text().count("\n")) > MAX_MODULE}
    assert not long, f"split these by concern: {long}"


def test_no_function_is_over_120_lines() -> None:
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION:
                    long[f"{path.relative_to(REPO)}:{node.name}"] = lines
    assert not long, f"split these into steps: {long}"
    assert len(modules()) > 80
