"""Text from the cluster made safe to print on a terminal."""

from __future__ import annotations

# C0 and C1 control characters, DEL, and the bidirectional overrides and isolates (a line that
# reads differently from how it prints): shown as Python-style escapes, one for one.
_UNSAFE = {
    **{code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))},
    0x0A: "\\n",
    0x0D: "\\r",
    **{code: f"\\u{code:04x}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))},
}
del _UNSAFE[0x09]  # a tab stays a tab


def printable(text: str) -> str:
    """`text` with every control character escaped (`\\x1b`, `\\n`, `\\r`, `\\u202e`), so that a
    message, an event or a log line from the server cannot move the cursor, recolour the terminal
    or hide what follows it."""
    return text.translate(_UNSAFE)
