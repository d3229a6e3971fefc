"""docs/architecture.md's recipes ("## Recipes"): every file, module and name a recipe names
exists, and is used (a recipe must not send a newcomer to dead code); each is a numbered list."""

from __future__ import annotations

import glob
import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
DOTTED = re.compile(r"\bktrain(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"`((?:ktrain|tests|docs|completions|schemas|runtimes)/[^`\s]+)`")


def recipes() -> dict[str, str]:
    """Each `### ` heading of the `## Recipes` section, with its text."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Recipes\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for part in section.split("\n### ")[1:]:
        title, _, body = part.partition("\n")
        out[title.strip()] = body
    return out


def _resolve(dotted: str) -> tuple[object, str] | None:
    """(the object, the module it lives in) for `ktrain.a.b.name`, or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: object = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return None
            target = getattr(target, name)
        return target, module_name
    return None


def _sources() -> dict[str, str]:
    return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in (REPO / "ktrain").rglob("*.py")}


def _used(dotted: str, module_name: str, sources: dict[str, str]) -> bool:
    """A module is imported by another; a name occurs in ktrain beyond its own definition."""
    if dotted == module_name:
        own = module_name.replace(".", "/")
        return any(
            module_name in text or f"{module_name.rpartition('.')[0]} import {module_name.rpartition('.')[2]}" in text
            for path, text in sources.items()
            if not path.startswith(own)
        )
    name = dotted.rpartition(".")[2]
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    definition = re.compile(rf"^\s*(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", re.M)
    hits = sum(len(pattern.findall(text)) - len(definition.findall(text)) for text in sources.values())
    return hits > 0


def test_the_recipes_are_there() -> None:
    found = recipes()
    assert {"Adding a `job why` verdict", "Adding a `job list` option"} <= set(found), sorted(found)


def test_each_recipe_is_a_numbered_list_of_files() -> None:
    for title, body in recipes().items():
        steps = re.findall(r"^(\d+)\. ", body, re.M)
        assert steps and steps[0] == "1", title
        assert [int(n) for n in steps] == list(range(1, len(steps) + 1)), (title, steps)
        assert PATH.search(body), f"{title}: names no file"


def test_every_file_a_recipe_names_exists() -> None:
    for title, body in recipes().items():
        for path in PATH.findall(body):
            pattern = re.sub(r"<[^>]+>", "*", path)
            assert glob.glob(str(REPO / pattern)), f"{title}: {path} does not exist"


def test_every_module_and_name_a_recipe_names_exists_and_is_used() -> None:
    sources = _sources()
    for title, body in recipes().items():
        names = set(DOTTED.findall(body))
        assert names, f"{title}: names no module or function"
        for dotted in sorted(names):
            resolved = _resolve(dotted)
            assert resolved is not None, f"{title}: {dotted} does not exist"
            assert _used(dotted, resolved[1], sources), f"{title}: {dotted} is used nowhere in ktrain"
