"""Tables on stdout: rich on a terminal, plain kubectl-style columns otherwise (and for pipes)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ktrain.util.text import printable


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Columns padded to their widest cell and separated by three spaces, as kubectl prints.
    Cells often come from a server (names, reasons, messages): control characters are escaped."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = []
    for row in [list(headers), *[list(r) for r in rows]]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append(indent + "   ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A rich table when stdout is a terminal; plain columns when it is not."""
    if not sys.stdout.isatty():
        sys.stdout.write(plain_table(headers, rows))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, header_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:  # Text: a server's `[bold]` is not markup; control characters escaped
        table.add_row(*(Text(printable(cell)) for cell in row))
    Console(soft_wrap=False).print(table)
