"""Text that came from elsewhere (an API server, a plugin), made safe to print on a terminal."""

from __future__ import annotations

# C0 controls, DEL and C1 controls: what a terminal may act on (ESC starts a sequence that can
# clear the screen, retitle the window or write to the clipboard; C1's CSI does the same alone);
# and the bidirectional overrides and isolates, which make a line read differently from how it prints.
_UNSAFE = frozenset([*range(0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with every control character escaped (`\\x1b`, `\\n`, `\\u009b`, `\\u202e`), the
    rest as is.

    For one-line values: server messages, names, reasons, events. A string without control
    characters comes back unchanged (and fast)."""
    if text.isprintable():  # False for every character of _UNSAFE
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if code in _UNSAFE:
            out.append(_NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"))
        else:
            out.append(ch)
    return "".join(out)
