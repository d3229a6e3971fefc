"""The completion tree, the static scripts and docs/commands.md are generated; these fail when stale.

Fix: python -m ktrain.cli.generate
"""

from __future__ import annotations

from pathlib import Path

from ktrain.cli.fastpath import FAST_DIR, PARSE_KEYS, command_node, fast_paths
from ktrain.cli.generate import build_tree, generated, stale_fast_files
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


def test_the_fast_path_has_a_file_for_each_fast_command_and_no_other() -> None:
    """A command that lost `fast=True` must not keep its file: the fast path would still run it."""
    files = generated()
    tree_commands = set(fast_paths())
    generated_commands = {tuple(p.name[: -len(".json")].split(".")) for p in files if p.parent == Path(FAST_DIR)}
    assert generated_commands, "no fast command generated"
    assert tree_commands == generated_commands, f"stale ktrain/cli/fast_commands: {FIX}"
    assert stale_fast_files(files) == []


def test_a_fast_commands_file_holds_its_tree_nodes_parse_tables() -> None:
    """What Parser reads is the same in the fast file as in the tree (help texts aside)."""
    tree = load_tree()
    for path in fast_paths():
        node = tree["root"]
        for name in path:
            node = node["commands"][name]
        fast = command_node(path)
        assert fast["handler"] == node["handler"]
        for table in ("options", "arguments"):
            want = [{k: v for k, v in p.items() if k in PARSE_KEYS} for p in node.get(table, [])]
            assert fast.get(table, []) == want, (path, table)
