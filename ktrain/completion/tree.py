"""The command tree the completer walks, loaded from the generated `tree.json`.

`ktrain.cli.generate` writes it from the typer app; besides what completion needs, it holds
what the fast path (`ktrain.cli.fastpath`) parses `job render`, `runtime list`... with.
"""

from __future__ import annotations

import os

from ktrain.util.jsondata import loads

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

TREE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tree.json")


def load_tree() -> dict[str, Any]:
    with open(TREE_FILE, encoding="utf-8") as fh:
        return loads(fh.read())  # type: ignore[no-any-return]
