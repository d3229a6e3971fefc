"""The command tree the completer walks: generated from the typer app, loaded as JSON.

`build_tree()` imports typer (build time only); `load_tree()` only reads `tree.json`.
Besides what completion needs, each parameter records what a parser needs (destination,
value type, default, required, the `--no-x` names of a boolean flag): the fast path
(`ktrain.cli.fastpath`) parses `job render`, `runtime list`... from this tree instead of
importing typer.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the completion path 3 ms to import
    from typing import Any

TREE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tree.json")

# `-o` options document their formats in the help text as "yaml | json | name".
_CHOICES_IN_HELP = r"^\s*([a-z][\w.-]*(?:\s*\|\s*[a-z][\w.-]*)+)\s*$"


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0].strip()


def _value_type(param: Any) -> str:
    """The Python type a value converts to (`int`; `str` for `list[str]`), as typer declared it."""
    import typing

    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if typing.get_origin(annotation) in (list, tuple, set):
        annotation = typing.get_args(annotation)[0]
    return getattr(annotation, "__name__", str(annotation))


def _parse_info(param: Any, entry: dict[str, Any]) -> None:
    """What a parser needs beyond the names: destination, type, default, flag polarity."""
    entry["dest"] = param.name
    entry["type"] = _value_type(param)
    if param.default is None or isinstance(param.default, (str, int, float, bool)):
        entry["default"] = param.default  # otherwise left out: a parser must not guess it
    # What the tree cannot carry (typer would act on it, a parser reading the tree could not).
    if param.required:
        entry["required"] = True
    if param.envvar:
        entry["envvar"] = param.envvar
    if param.callback is not None:
        entry["callback"] = True
    if getattr(param, "is_bool_flag", False) and param.secondary_opts:
        entry["false_names"] = list(param.secondary_opts)
    elif getattr(param, "is_flag", False) and not getattr(param, "is_bool_flag", False):
        entry["type"] = "flag_value"  # a flag storing some other constant: no parser support
    # typer's min=/max= of a number (inclusive bounds; clamp= changes only values outside them)
    for bound in ("min", "max"):
        if getattr(param, bound, None) is not None and not getattr(param, "count", False):
            entry[bound] = getattr(param, bound)


def _param(param: Any) -> dict[str, Any] | None:
    if getattr(param, "hidden", False):
        return None
    if getattr(param, "param_type_name", "") == "argument":
        entry = {"name": param.name, "nargs": param.nargs}
        _parse_info(param, entry)
        return entry
    names = list(param.opts) + list(param.secondary_opts)
    entry: dict[str, Any] = {
        "names": names,
        "takes_value": not (param.is_flag or getattr(param, "count", False)),
        "help": _first_line(param.help),
    }
    _parse_info(param, entry)
    if getattr(param, "count", False):
        entry["type"] = "count"
    if param.multiple:
        entry["multiple"] = True
    descriptor = getattr(param, "type_descriptor", None)
    choices = getattr(descriptor, "choices", None) if descriptor is not None else None
    if choices:
        entry["choices"] = [str(getattr(c, "value", c)) for c in choices]
    else:
        import re

        match = re.match(_CHOICES_IN_HELP, entry["help"])
        if match:
            entry["choices"] = [c.strip() for c in match.group(1).split("|")]
    return entry


def _command(cmd: Any, ctx: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"help": _first_line(cmd.help or getattr(cmd, "short_help", None))}
    options = []
    arguments = []
    for param in cmd.params:
        entry = _param(param)
        if entry is None:
            continue
        (arguments if "nargs" in entry else options).append(entry)
    options.append({"names": ["-h", "--help"], "takes_value": False, "help": "Show this message and exit."})
    node["options"] = options
    if arguments:
        node["arguments"] = arguments
    commands = getattr(cmd, "commands", None)
    if commands:
        node["commands"] = {
            name: _command(sub, ctx) for name, sub in sorted(commands.items()) if not getattr(sub, "hidden", False)
        }
    return node


def build_tree() -> dict[str, Any]:
    """The live typer app as a plain tree: commands, options (names, value?, choices), arguments."""
    import typer.main

    from ktrain.cli import app

    root = typer.main.get_command(app)
    return {"format": 1, "root": _command(root, None)}


def tree_text(tree: dict[str, Any]) -> str:
    return json.dumps(tree, indent=1, sort_keys=True) + "\n"


def load_tree() -> dict[str, Any]:
    with open(TREE_FILE, encoding="utf-8") as fh:
        return json.load(fh)  # type: ignore[no-any-return]
