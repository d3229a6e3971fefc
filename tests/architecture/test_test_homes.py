"""Every module of ktrain has its tests where its path says: `ktrain/a/b.py` in
`tests/unit/a/test_b.py` (`ktrain/a/__init__.py` in `tests/unit/test_a.py`), a command
`ktrain/cli/commands/<cmd>.py` in `tests/cli/test_<cmd>.py`. A home holds tests of its module: it
imports the module and has a test.

Modules of 50 lines or fewer need no home. `KNOWN_WITHOUT_HOME` lists the bigger ones that have
none yet (issue #32 item 4: the list shrinks to empty); the test fails for a module missing from
it that has no home, and for a listed module that has one now (take it off the list).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MIN_LINES = 50

KNOWN_WITHOUT_HOME = frozenset(
    {
        # KNOWN-START (one per line, sorted; see the module docstring)
        # KNOWN-END
    }
)


def home_of(module: Path) -> Path:
    rel = module.relative_to(REPO / "ktrain")
    if rel.parts[:2] == ("cli", "commands") and rel.name != "__init__.py":
        return REPO / "tests" / "cli" / f"test_{rel.stem}.py"
    if rel.name == "__init__.py":
        if len(rel.parts) == 1:
            return REPO / "tests" / "unit" / "test_ktrain.py"
        return REPO / "tests" / "unit" / Path(*rel.parts[:-2]) / f"test_{rel.parts[-2]}.py"
    return REPO / "tests" / "unit" / rel.parent / f"test_{rel.stem}.py"


def dotted(module: Path) -> str:
    parts = module.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_home(test: Path, module: Path) -> bool:
    """The file imports the module (`import a.b`, `from a.b import`, `from a import b`) and tests."""
    if not test.is_file():
        return False
    text = test.read_text(encoding="utf-8")
    name = dotted(module)
    parent, _, leaf = name.rpartition(".")
    imports = re.search(rf"^\s*(?:import {re.escape(name)}\b|from {re.escape(name)} import )", text, re.M) or (
        parent and re.search(rf"^\s*from {re.escape(parent)} import [^\n]*\b{leaf}\b", text, re.M)
    )
    # a command's tests run it through the CLI: its name is enough
    command = module.parent.name == "commands" and module.stem.replace("_", " ") in text.replace('", "', " ")
    return bool(imports or command) and "def test_" in text


def modules_without_home() -> set[str]:
    missing = set()
    for module in sorted((REPO / "ktrain").rglob("*.py")):
        if module.read_text(encoding="utf-8").count("\n") <= MIN_LINES:
            continue
        if not is_home(home_of(module), module):
            missing.add(str(module.relative_to(REPO)))
    return missing


def test_every_module_has_its_tests_at_its_mirrored_path() -> None:
    missing = modules_without_home()
    new = sorted(missing - KNOWN_WITHOUT_HOME)
    assert not new, (
        "these modules have no tests at their mirrored path (tests/unit/<pkg>/test_<module>.py, or "
        f"tests/cli/test_<command>.py): write them there (or move the tests that exist): {new}"
    )


def test_the_list_of_modules_without_a_home_only_shrinks() -> None:
    housed = sorted(KNOWN_WITHOUT_HOME - modules_without_home())
    assert not housed, f"these modules have a home now (or are gone): take them off KNOWN_WITHOUT_HOME: {housed}"


def test_home_of_mirrors_the_module_path() -> None:
    assert home_of(REPO / "ktrain/engine/plugins/torch.py") == REPO / "tests/unit/engine/plugins/test_torch.py"
    assert home_of(REPO / "ktrain/errors.py") == REPO / "tests/unit/test_errors.py"
    assert home_of(REPO / "ktrain/cli/commands/job_render.py") == REPO / "tests/cli/test_job_render.py"
    assert home_of(REPO / "ktrain/engine/plugins/__init__.py") == REPO / "tests/unit/engine/test_plugins.py"
    assert is_home(REPO / "tests/unit/api/test_policies.py", REPO / "ktrain/api/policies.py")
