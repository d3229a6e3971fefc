"""Kubernetes' `$(VAR)` expansion, as the kubelet applies it to env values, command and args.

A port of `third_party/forked/golang/expansion/expand.go` (kubernetes/kubernetes): `$(NAME)` is
replaced by the variable's value when it is defined (else left as written), `$$` is a literal
`$`, and any other `$` stays as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


def expand(text: str, env: Mapping[str, str]) -> str:
    if "$" not in text:
        return text
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    n = len(text)
    while cursor < n:
        if text[cursor] == "$" and cursor + 1 < n:
            out.append(text[checkpoint:cursor])
            nxt = text[cursor + 1]
            if nxt == "$":  # escaped operator
                out.append("$")
                advance = 1
            elif nxt == "(":
                close = text.find(")", cursor + 2)
                if close == -1:  # incomplete reference: kept as written
                    out.append("$(")
                    advance = 1
                else:
                    name = text[cursor + 2 : close]
                    out.append(env.get(name, f"$({name})"))
                    advance = close - cursor
            else:  # an operator that starts no expression: `$` and the next character
                out.append("$" + nxt)
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(text[checkpoint:])
    return "".join(out)
