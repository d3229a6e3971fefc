"""Diagnostics on stderr: one paragraph per error, file:line:col, the line and a caret."""

from __future__ import annotations

from ktrain.errors import InputError, KtrainError, ValidationFailedError
from ktrain.util.text import printable

# An echoed source line is cut to this many characters around the column (a 1 MB line would
# otherwise be 1 MB on stderr), and a message line to MAX_MESSAGE_LINE.
ECHO_WIDTH = 200
MAX_MESSAGE_LINE = 1200  # above MAX_MESSAGE, so a bounded message keeps its "(N more characters)"
ELLIPSIS = "\u2026"
_CONTROL = dict.fromkeys([*range(0x20), 0x7F, *range(0x80, 0xA0)], "?")
del _CONTROL[0x09]  # a tab stays a tab


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def echo_window(source_line: str, column: int | None, width: int = ECHO_WIDTH) -> tuple[str, int | None]:
    """The part of `source_line` to show (at most `width` characters around `column`, with `…`
    where it was cut) and the column of the same character in it."""
    line = source_line.rstrip("\r\n")
    col = column if column is not None and column >= 1 else None
    if len(line) > width:
        at = min(col - 1, len(line)) if col is not None else 0
        start = max(0, min(at - width // 2, len(line) - width))
        end = start + width
        shown = (ELLIPSIS if start else "") + line[start:end] + (ELLIPSIS if end < len(line) else "")
        if col is not None:
            col = at - start + 1 + (1 if start else 0)
        line = shown
    # A control character (an escape sequence in a hostile file) is shown as `?`: one for one,
    # so the caret stays under the right character.
    return line.translate(_CONTROL), col


# A hostile file can hold thousands of problems (a list of 10 000 duplicates): list the first ones,
# and no more than a screenful of text (each may quote up to MAX_MESSAGE characters of the input).
MAX_PROBLEMS = 20
PROBLEMS_TEXT = 6000
# Messages quote what the user wrote (a name, a list of names): a megabyte of it is not echoed.
MAX_MESSAGE = 1000


def bounded(message: str, limit: int = MAX_MESSAGE) -> str:
    """`message`, or its first `limit` characters and how many more there were."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message) - limit} more characters)"


def _caret(source_line: str | None, column: int | None) -> list[str]:
    if source_line is None:
        return []
    shown, col = echo_window(source_line, column)
    lines = ["    " + shown]
    if col is not None:
        lines.append("    " + " " * (col - 1) + "^")
    return lines


def format_error(exc: KtrainError) -> str:
    if getattr(exc, "reported", False):
        return ""  # the command already said it (AlreadyReported)
    lines: list[str] = []
    if isinstance(exc, InputError) or exc.file is not None:
        lines.append(f"error: {exc.location}: {bounded(exc.message)}")
        lines += _caret(exc.source_line, exc.column)
    elif isinstance(exc, ValidationFailedError):
        count = len(exc.errors)
        lines.append(f"error: {exc.subject} is invalid ({count} problem{'s' if count != 1 else ''}):")
        used = 0
        for i, err in enumerate(exc.errors):
            loc = exc.locations.get(i)
            where = f"{loc.file}:{loc.line}:{loc.column}: " if loc and loc.line else ""
            entry = [f"  - {where}{bounded(str(err))}"]
            if loc and loc.source_line:
                entry += ["  " + x for x in _caret(loc.source_line, loc.column)]
            size = sum(len(x) + 1 for x in entry)
            full = i == MAX_PROBLEMS or (i > 0 and used + size > PROBLEMS_TEXT)
            if full and count > i + 1:
                lines.append(f"  ... and {count - i} more problems")
                break
            lines += entry
            used += size
    else:
        lines.append(f"error: {bounded(exc.message)}")
    if exc.hint:
        lines.append(f"hint: {bounded(exc.hint)}")
    # A message may quote a server's words (a Status message, a pod's reason): any control
    # character left in a line is shown escaped, never sent to the terminal (issue #25).
    return "\n".join(printable(_clip(line, MAX_MESSAGE_LINE)) for line in "\n".join(lines).split("\n")) + "\n"
