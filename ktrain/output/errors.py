"""Diagnostics on stderr: one paragraph per error, file:line:col, the line and a caret."""

from __future__ import annotations

from ktrain.errors import InputError, KtrainError, ValidationFailedError

# A hostile file can hold thousands of problems (a list of 10 000 duplicates): list the first ones.
MAX_PROBLEMS = 20
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
    lines = ["    " + source_line.rstrip("\n")]
    if column is not None and column >= 1:
        lines.append("    " + " " * (column - 1) + "^")
    return lines


def format_error(exc: KtrainError) -> str:
    lines: list[str] = []
    if isinstance(exc, InputError) or exc.file is not None:
        lines.append(f"error: {exc.location}: {bounded(exc.message)}")
        lines += _caret(exc.source_line, exc.column)
    elif isinstance(exc, ValidationFailedError):
        count = len(exc.errors)
        lines.append(f"error: {exc.subject} is invalid ({count} problem{'s' if count != 1 else ''}):")
        for i, err in enumerate(exc.errors):
            if i == MAX_PROBLEMS and count > MAX_PROBLEMS + 1:
                lines.append(f"  ... and {count - MAX_PROBLEMS} more problems")
                break
            loc = exc.locations.get(i)
            where = f"{loc.file}:{loc.line}:{loc.column}: " if loc and loc.line else ""
            lines.append(f"  - {where}{bounded(str(err))}")
            if loc and loc.source_line:
                lines += ["  " + x for x in _caret(loc.source_line, loc.column)]
    else:
        lines.append(f"error: {bounded(exc.message)}")
    if exc.hint:
        lines.append(f"hint: {bounded(exc.hint)}")
    return "\n".join(lines) + "\n"
