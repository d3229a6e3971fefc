"""What one completion request is made of: where the cursor is in the command tree (`Request`)
and what to offer there (`Answer`).

Shared by `ktrain.completion.complete` (which builds the request and renders the answer) and
`ktrain.completion.providers` (which fills the answer in); imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


# Set by the shell scripts: the program answers a completion request instead of running.
ENV_VAR = "_KTRAIN_COMPLETE"


class Request:
    """Where the cursor is in the command tree, and what the line already says.

    (Plain classes, not dataclasses: importing dataclasses costs a completion 7 ms.)
    """

    def __init__(self, node: dict[str, Any]) -> None:
        self.path: list[str] = []  # e.g. ["job", "render"]
        self.node = node
        self.option: dict[str, Any] | None = None  # the option whose value is being completed
        self.option_prefix = ""  # "--runtime=" when completing "--runtime=tor"
        self.after_dashdash = False
        self.positional = 0  # how many positional arguments precede the cursor
        self.given: dict[str, list[str]] = {}  # option values on the line, by long name


def find_option(node: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The option of a tree node that `name` (`-n`, `--namespace`) spells, if any."""
    options: list[dict[str, Any]] = node.get("options", [])
    for opt in options:
        if name in opt["names"]:
            return opt
    return None


def canonical_name(opt: dict[str, Any]) -> str:
    """An option's first long name (`--namespace` for `-n/--namespace`), else its only name."""
    names: list[str] = opt["names"]
    longs = [n for n in names if n.startswith("--")]
    return longs[0] if longs else names[0]


class Answer:
    """What to offer: a directive for the shell and (value, description) candidates."""

    def __init__(self, directive: str = "values", items: list[tuple[str, str]] | None = None) -> None:
        self.directive = directive  # values | nospace | files | dirs
        self.items = items or []  # (value, description)
