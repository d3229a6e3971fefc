"""The command tree completion reads (`ktrain.completion.tree`)."""

from __future__ import annotations

from ktrain.completion.tree import load_tree


def test_tree_lists_every_command() -> None:
    tree = load_tree()["root"]["commands"]
    assert {"render", "list", "show"} <= set(tree["job"]["commands"]) | set(tree["runtime"]["commands"])
