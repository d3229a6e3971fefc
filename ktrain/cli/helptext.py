"""`--help` for every command and group, from the generated command tree, without typer.

`ktrain --help`, `ktrain job create -h`, `ktrain job` alone: the text is rendered here from
`ktrain/completion/tree.json` (written by `ktrain.cli.generate` from the typer app, so it names
every option the app has), in a plain click/kubectl-style layout: the usage line, the description,
then the arguments, the options (grouped by help panel: `Job options` for the `JobInput` ones)
and the subcommands, each wrapped to the terminal width. No color, no box drawing: the same bytes
on a terminal as in a pipe.

The fast path (`ktrain.cli.fastpath.help_request`) prints it without importing typer; the typer
app's commands print the very same text (`ktrain.cli.typer_app` routes their help here), so a user
never sees two layouts. Only the standard library's `os` and `sys` are imported.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

PROG = "ktrain"
DEFAULT_WIDTH = 80
MAX_WIDTH = 100  # wider lines are hard to read: past this the text stops growing
MIN_WIDTH = 40
INDENT = 2
COLUMN_MAX = 30  # a name column wider than this puts its help on the next line (as click does)
COLUMN_GAP = 2
MIN_TEXT_WIDTH = 30  # a narrower help column: each help goes under its name instead, indented
STACKED_INDENT = 6
KEEP = "\x00"  # a space no line break may replace (inside `[default: 30.0]`)
OPTIONS_PANEL = "Options"


def terminal_width() -> int:
    """`$COLUMNS`, else the terminal's width, else 80; kept within 40..100."""
    width = 0
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        width = int(columns)
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            width = DEFAULT_WIDTH
    return max(MIN_WIDTH, min(width or DEFAULT_WIDTH, MAX_WIDTH))


def wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap; a word longer than the line is cut, after a comma when it has one."""
    width = max(width, 1)
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            cut = word.rfind(",", 0, width) + 1 or width
            lines.append(word[:cut])
            word = word[cut:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def paragraphs(text: str, width: int, indent: int) -> list[str]:
    """A description: paragraphs (blank-line separated) re-wrapped; a paragraph whose lines are
    indented (an example) is kept as written."""
    out: list[str] = []
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        if not block.strip():
            continue
        if out:
            out.append("")
        if all(line.startswith(" ") for line in lines if line.strip()):
            out += [" " * indent + line.rstrip() for line in lines]
        else:
            out += [" " * indent + line for line in wrap(" ".join(lines), width - indent)]
    return out


def name_column(rows: list[tuple[str, str]]) -> int:
    """The width of the name column: the widest name of at most `COLUMN_MAX` characters (a
    longer one gets a line of its own)."""
    return max([len(name) for name, _ in rows if len(name) <= COLUMN_MAX] or [COLUMN_MAX])


def definitions(rows: list[tuple[str, str]], width: int, first: int) -> list[str]:
    """Two columns, as click's `write_dl`: the names, then their help wrapped beside them (on a
    narrow terminal, under them)."""
    text_at = INDENT + first + COLUMN_GAP
    if width - text_at < MIN_TEXT_WIDTH:
        text_at, first = STACKED_INDENT, -1  # every name on a line of its own
    text_width = width - text_at
    out = []
    for name, text in rows:
        lines = [line.replace(KEEP, " ") for line in wrap(text, text_width)]
        head = " " * INDENT + name
        if INDENT + len(name) > width:  # `--a-long-flag / --no-a-long-flag` on a narrow terminal
            out += [" " * INDENT + part for part in wrap(name, width - INDENT)]
        elif len(name) > first or not lines:
            out.append(head)
        else:
            out.append(head.ljust(text_at) + lines.pop(0))
        out += [" " * text_at + line for line in lines]
    return out


def option_names(option: dict[str, Any]) -> str:
    """`-o, --output TEXT`; `--suspend / --no-suspend`. Short names first, as click lists them."""
    false = set(option.get("false_names", ()))
    names = sorted((n for n in option["names"] if n not in false), key=lambda n: len(n) - len(n.lstrip("-")))
    shown = ", ".join(names)
    if false:
        shown += " / " + ", ".join(n for n in option["names"] if n in false)
    if option.get("takes_value") and option.get("metavar"):
        shown += " " + option["metavar"]
    return shown


def _range(option: dict[str, Any]) -> str:
    low, high = option.get("min"), option.get("max")
    if low is not None and high is not None:
        return f"{low}<=x<={high}"
    return f"x>={low}" if low is not None else f"x<={high}" if high is not None else ""


def option_help(option: dict[str, Any]) -> str:
    """The help text with click's notes: `[default: yaml]`, `[x>=0]`, `[required]`."""
    extras = []
    if "default_text" in option:
        extras.append(f"default:{KEEP}{option['default_text']}")
    bounds = _range(option)
    if bounds:
        extras.append(bounds)
    if option.get("required"):
        extras.append("required")
    text = option.get("doc") or option.get("help") or ""
    if extras:
        text = (text + " " if text else "") + "[" + f";{KEEP}".join(extras) + "]"
    return text


def node_at(tree: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = tree["root"]
    for name in path:
        node = node["commands"][name]
    return node  # type: ignore[no-any-return]


def sections(node: dict[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(title, rows) in order: Arguments, Options and the other option panels, Commands."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    arguments = [(a["metavar"], a.get("doc") or a.get("help") or "") for a in node.get("arguments", ())]
    if arguments:
        out.append(("Arguments", arguments))
    panels: dict[str, list[tuple[str, str]]] = {OPTIONS_PANEL: []}
    for option in node.get("options", ()):
        panels.setdefault(option.get("panel") or OPTIONS_PANEL, []).append((option_names(option), option_help(option)))
    out += [(title, rows) for title, rows in panels.items() if rows]
    commands = node.get("commands")
    if commands:
        order = node.get("order") or sorted(commands)
        out.append(("Commands", [(name, commands[name].get("help", "")) for name in order]))
    return out


def render_help(path: tuple[str, ...], tree: dict[str, Any] | None = None, width: int | None = None) -> str:
    """The whole `--help` text of `ktrain <path>` (ends with one newline)."""
    if tree is None:
        from ktrain.completion.tree import load_tree

        tree = load_tree()
    node = node_at(tree, path)
    width = terminal_width() if width is None else width
    usage = " ".join([PROG, *path, node.get("usage", "[OPTIONS]")])
    lines = wrap_usage(usage, width)
    description = node.get("doc") or node.get("help") or ""
    if description:
        lines += ["", *paragraphs(description, width, INDENT)]
    aliases = node.get("aliases")
    if aliases:
        lines += ["", "Aliases:", *(" " * INDENT + " ".join([PROG, alias]) for alias in aliases)]
    found = sections(node)
    first = name_column([row for _, rows in found for row in rows])  # one alignment for the page
    for title, rows in found:
        lines += ["", f"{title}:", *definitions(rows, width, first)]
    return "\n".join(lines) + "\n"


def wrap_usage(usage: str, width: int) -> list[str]:
    """`Usage: ktrain job create [OPTIONS] [COMMAND]...`, continued under the command if long."""
    prefix = "Usage: "
    lines = wrap(usage, width - len(prefix))
    return [prefix + lines[0], *(" " * len(prefix) + line for line in lines[1:])]
