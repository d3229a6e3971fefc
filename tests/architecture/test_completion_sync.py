"""The completion tree, the static scripts and docs/commands.md are generated; these fail when stale.

Fix: python -m ktrain.cli.generate
"""

from __future__ import annotations

from pathlib import Path

from ktrain.cli.generate import build_tree, generated
from ktrain.completion.tree import TREE_FILE, load_tree

FIX = "run `python -m ktrain.cli.generate`"


def test_command_tree_matches_the_typer_app() -> None:
    assert load_tree() == build_tree(), f"stale: {FIX}"


def test_every_generated_file_is_up_to_date() -> None:
    files = generated()
    assert Path(TREE_FILE) in files
    for path, text in files.items():
        assert path.is_file(), f"missing {path}: {FIX}"
        assert path.read_text(encoding="utf-8") == text, f"stale {path}: {FIX}"
