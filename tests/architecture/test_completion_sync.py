"""The completion tree and the static scripts are generated; these fail when they are stale.

Fix: python -m ktrain.completion.generate
"""

from __future__ import annotations

from pathlib import Path

from ktrain.completion.scripts import generated_files
from ktrain.completion.tree import build_tree, load_tree

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


def test_command_tree_matches_the_typer_app() -> None:
    assert load_tree() == build_tree(), "stale: run `python -m ktrain.completion.generate`"


def test_static_completion_scripts_are_up_to_date() -> None:
    for name, text in generated_files().items():
        path = COMPLETIONS / name
        assert path.is_file(), f"missing {path}: run `python -m ktrain.completion.generate`"
        assert path.read_text(encoding="utf-8") == text, f"stale {path}: run `python -m ktrain.completion.generate`"
