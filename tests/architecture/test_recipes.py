"""docs/architecture.md's recipes ("## Recipes", each "### Adding ...") name files and code that
exist and are used.

A recipe is a numbered list, one file per item: "1. `ktrain/api/policies.py` — what to add". The
item's first backticked name is its file (`<key>` stands for any name: the pattern must match at
least one file today); the other backticked names are what the item tells you to use or to run.
Checked for each item:

- its file exists, and a module is imported or named elsewhere in the code (a file nothing reads
  is not a step of any recipe); a file under tests/ holds tests, or a case directory files;
- every dotted `ktrain...` name resolves, and its last part is used outside the module defining it;
- every `test_...` name is a test function under tests/;
- every command (`python -m ...`, `ktrain ...`) exists: a module that runs, a documented command;
- every other identifier occurs in the code under ktrain/ (or, for a file name, in the item's files).

A recipe stays within the count of files its issue set (issue #32: an ML policy ≤ 8, a `job why`
verdict ≤ 4, a `job list` option ≤ 6).
"""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
CODE_DIRS = ("ktrain", "tests", "benchmarks")
LIMITS = {"an ML policy": 8, "a `job why` verdict": 4, "a `job list` option": 6}

ITEM = re.compile(r"^(\d+)\. (.*(?:\n {3}.*)*)", re.M)
TICKS = re.compile(r"`([^`]+)`")
DOTTED = re.compile(r"^ktrain(?:\.[A-Za-z_]\w*)+$")
IDENT = re.compile(r"^[A-Za-z_]\w*$")
PLACEHOLDER = re.compile(r"<[^>]+>")


def recipes() -> dict[str, str]:
    """Title ("an ML policy") -> body of each "### Adding ..." under "## Recipes"."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Recipes\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    found = {}
    for block in section.split("\n### Adding ")[1:]:
        title, _, body = block.partition("\n")
        found[title.strip()] = body
    return found


def items(body: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), " ".join(m.group(2).split())) for m in ITEM.finditer(body)]


@functools.cache
def sources() -> dict[Path, str]:
    out = {}
    for top in CODE_DIRS:
        for path in (REPO / top).rglob("*.py"):
            out[path] = path.read_text(encoding="utf-8")
    return out


def used_elsewhere(word: str, *, besides: Path | None = None) -> bool:
    pattern = re.compile(rf"(?<![\w.]){re.escape(word)}(?!\w)" if "." in word else rf"\b{re.escape(word)}\b")
    return any(pattern.search(text) for path, text in sources().items() if path != besides)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_is_used(path: Path) -> bool:
    """Imported or named (`ktrain.a.b`, `from ktrain.a import b`) by another file."""
    dotted = module_name(path)
    parent, _, leaf = dotted.rpartition(".")
    from_import = re.compile(rf"from {re.escape(parent)} import [^\n]*\b{leaf}\b")
    return used_elsewhere(dotted, besides=path) or any(
        from_import.search(text) for p, text in sources().items() if p != path
    )


def resolve(dotted: str) -> tuple[object, str]:
    """The object a dotted name names, and the name of the module defining it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        module = ".".join(parts[:cut])
        for name in parts[cut:]:
            assert hasattr(target, name), f"{dotted}: {module} has no {name}"
            target = getattr(target, name)
        return target, module
    raise AssertionError(f"{dotted}: no such module")


def matches(pattern: str) -> list[Path]:
    if not PLACEHOLDER.search(pattern):
        return [REPO / pattern] if (REPO / pattern).exists() else []
    return sorted(REPO.glob(PLACEHOLDER.sub("*", pattern.rstrip("/"))))


TITLES = sorted(recipes())


def test_the_recipes_section_has_recipes() -> None:
    assert "an ML policy" in TITLES, TITLES
    for title in TITLES:
        numbers = [n for n, _ in items(recipes()[title])]
        assert numbers == list(range(1, len(numbers) + 1)) and numbers, (title, numbers)


@pytest.mark.parametrize("title", TITLES)
def test_a_recipe_stays_within_its_count_of_files(title: str) -> None:
    count = len(items(recipes()[title]))
    assert count <= LIMITS.get(title, 8), f"Adding {title}: {count} files"


def check_file(name: str) -> list[Path]:
    found = matches(name)
    assert found, f"{name}: no such file"
    if name.startswith("tests/"):
        for path in found:
            files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
            assert files, f"{path}: an empty directory"
            if path.suffix == ".py" and path.name.startswith("test_"):
                assert "def test_" in path.read_text(encoding="utf-8"), f"{path}: holds no test"
    elif name.endswith(".py"):
        assert any(module_is_used(p) for p in found), f"{name}: nothing imports or names it"
    else:  # a data file: read by its name
        assert any(used_elsewhere(p.name) for p in found), f"{name}: nothing reads {found[0].name}"
    return found


def check_name(token: str, files: list[Path]) -> None:
    if token.startswith("python -m "):
        module = token.split()[2]
        _, defined = resolve(module)
        text = (REPO / Path(*module.split("."))).with_suffix(".py").read_text(encoding="utf-8")
        assert '__name__ == "__main__"' in text, f"{token}: the module does not run"
    elif token.startswith("ktrain "):
        words = " ".join(w for w in token.split() if not w.startswith("-") and "/" not in w)
        words = " ".join(words.split()[:3])
        assert words in (REPO / "docs" / "commands.md").read_text(encoding="utf-8"), f"{token}: no such command"
    elif DOTTED.match(token):
        target, defined = resolve(token)
        leaf = token.rsplit(".", 1)[1]
        home = REPO / Path(*defined.split("."))
        home = home / "__init__.py" if home.is_dir() else home.with_suffix(".py")
        assert used_elsewhere(leaf, besides=home), f"{token}: nothing outside {defined} uses it"
        del target
    elif token.startswith("test_") and IDENT.match(token):
        assert any(re.search(rf"\bdef {token}\(", t) for p, t in sources().items() if "tests" in p.parts), (
            f"{token}: no such test"
        )
    elif "/" in token:
        assert matches(token), f"{token}: no such file"
    elif re.match(r"^[\w.-]+\.(?:ya?ml|json|txt|py)$", token):  # a file the item's files hold
        assert any(p.is_dir() and any(p.rglob(token)) for p in files), f"{token}: not in {files}"
    else:
        for word in re.findall(r"[A-Za-z_]\w+", PLACEHOLDER.sub("", token)):
            assert used_elsewhere(word), f"{token}: {word} occurs nowhere in the code"


@pytest.mark.parametrize(
    "title, number, text",
    [(title, n, text) for title in TITLES for n, text in items(recipes()[title])],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None,
)
def test_each_step_names_files_and_code_that_exist_and_are_used(title: str, number: int, text: str) -> None:
    tokens = TICKS.findall(text)
    assert tokens, f"Adding {title}, step {number}: names no file"
    files = check_file(tokens[0])
    for token in tokens[1:]:
        check_name(token, files)
