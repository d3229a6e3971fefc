"""docs/architecture.md names only modules, files and names that exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"

DOTTED = re.compile(r"\bktrain(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"\b(?:ktrain|tests|docs|completions|schemas|runtimes|benchmarks)/[\w./<>-]*[\w/>]")
PLACEHOLDER = re.compile(r"<[^>/]+>")  # `test_<plugin>.py`: any name


def _resolves(dotted: str) -> bool:
    """`ktrain.a.b.name.attr`: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_every_dotted_name_in_the_architecture_doc_exists() -> None:
    names = set(DOTTED.findall(DOC.read_text(encoding="utf-8")))
    assert len(names) > 50, "the doc no longer names the modules it maps"
    missing = sorted(name for name in names if not _resolves(name))
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_every_file_path_in_the_architecture_doc_exists() -> None:
    paths = set(PATH.findall(DOC.read_text(encoding="utf-8")))
    assert len(paths) > 10
    missing = sorted(p for p in paths if not any(REPO.glob(PLACEHOLDER.sub("*", p.rstrip("/")))))
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
