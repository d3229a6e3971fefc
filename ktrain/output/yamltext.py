"""A small, deterministic YAML emitter for Kubernetes objects.

Why not a YAML library: kubectl reads YAML 1.1, where `y`, `no`, `on`, `0777`, `12:30` or
`1e-3` are not strings. We quote every string that any YAML 1.1 or 1.2 resolver would read
as something else, keep key order as given (the engine builds objects in a fixed order),
and write multi-line text as literal blocks so scripts and hostfiles stay readable.
It is also far cheaper to import than a YAML library, which matters on the render path.
"""

from __future__ import annotations

from ktrain.util.jsondata import quote as quote_json

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Protocol

    Notes = Callable[[tuple[Any, ...]], "str | None"]

    class Spelling(Protocol):  # ktrain.inputs.spelling.Spelling
        def __bool__(self) -> bool: ...
        def value(self, container: Any, key: Any, value: Any) -> str | None: ...
        def key(self, container: Any, key: Any) -> str | None: ...


# Implicit resolvers of YAML 1.1 (PyYAML / go-yaml v2) and YAML 1.2 core.
IMPLICIT_PATTERN = r"""^(?:
      y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    | ~|null|Null|NULL|<<|=
    | [-+]?0b[0-1_]+
    | [-+]?0o?[0-7_]+
    | [-+]?(?:0|[1-9][0-9_]*)
    | [-+]?0x[0-9a-fA-F_]+
    | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    | [-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    | [-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+
    | [-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    | [0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)?
    )$"""  # noqa: E501 - one YAML 1.1 timestamp alternative, kept whole to read as the spec writes it
# What the pattern matches that does not start like a number: its first two lines.
_WORDS = frozenset(("y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"))
_WORDS |= {"true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL", "<<", "="}
_NUMBER_START = frozenset("+-.0123456789")
_OCTAL = frozenset("01234567")
_implicit_re: Any = None


def _implicit(s: str) -> bool:
    """Whether a YAML 1.1 or 1.2 resolver reads the plain scalar `s` (no surrounding whitespace)
    as something other than a string: `IMPLICIT_PATTERN`, compiled only for what starts like a
    number and is not plain digits (compiling it costs a cold render about 1 ms)."""
    global _implicit_re
    if s[0] not in _NUMBER_START:
        return s in _WORDS
    if s.isdigit() and s.isascii():  # an int in YAML 1.1 and 1.2, or (0 then 8 or 9) a string
        return s[0] != "0" or len(s) == 1 or _OCTAL.issuperset(s[1:])
    if _implicit_re is None:
        import re

        _implicit_re = re.compile(IMPLICIT_PATTERN, re.VERBOSE)
    return _implicit_re.match(s) is not None


_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")


def _printable_char(o: int) -> bool:
    # YAML-printable, minus tabs and YAML 1.1's line breaks (\x85, \u2028, \u2029)
    return 0x20 <= o <= 0x7E or (0xA0 <= o <= 0xD7FF and o not in (0x2028, 0x2029)) or 0xE000 <= o <= 0xFFFD


def _printable(s: str) -> bool:
    """Every character may stand as it is in a plain, single-quoted or block scalar.
    (Not a regex: a character class that wide costs 2.3 ms to compile, a tenth of a cold render.)"""
    if s.isascii():
        return s.isprintable()  # for ASCII exactly \x20-\x7e
    return all(map(_printable_char, map(ord, s)))


def _double_quoted(s: str) -> str:
    """A double-quoted scalar with every character that is not printable as an escape."""
    out = []
    for ch in quote_json(s)[1:-1]:  # JSON's escapes are YAML escapes too
        o = ord(ch)
        out.append(
            ch if (o < 0x80 and o != 0x7F) or _printable_char(o) else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"
        )
    return '"' + "".join(out) + '"'


def _plain_ok(s: str) -> bool:
    if not s or s != s.strip() or s[0] in _INDICATORS:
        return False
    if _implicit(s):
        return False
    if ": " in s or " #" in s or s.endswith(":") or "\t" in s:
        return False
    return _printable(s)


def quote(s: str) -> str:
    """A scalar for `s` that every YAML reader reads back as exactly this string."""
    if _plain_ok(s):
        return s
    if _printable(s):
        return "'" + s.replace("'", "''") + "'"
    return _double_quoted(s)


def _block_ok(s: str) -> bool:
    if "\n" not in s or s[0] in " \n" or "\r" in s:
        return False
    return all(_printable(line) for line in s.split("\n"))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return quote(str(value))


def _block(s: str, indent: str) -> str:
    if s.endswith("\n\n"):
        head = "|+"
    elif s.endswith("\n"):
        head = "|"
    else:
        head = "|-"
    body = s[:-1] if s.endswith("\n") else s
    lines = [(indent + line) if line else "" for line in body.split("\n")]
    return head + "\n" + "\n".join(lines)


def _with_note(line: str, note: str | None) -> str:
    """`line` with a trailing comment; for a block scalar the comment goes after its header."""
    if not note:
        return line
    first, sep, rest = line.partition("\n")
    return f"{first}  # {note}{sep}{rest}"


def _emit(
    value: Any,
    indent: str,
    out: list[str],
    path: tuple[Any, ...] = (),
    note: Notes | None = None,
    spell: Spelling | None = None,
) -> None:
    """Append lines for a mapping or a sequence at `indent`; `note(path)` may add a comment
    to each scalar (or empty collection) line; `spell` gives the text of scalars passed through
    as their file wrote them (`ktrain.inputs.spelling`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            k = (spell.key(value, key) if spell else None) or quote(str(key))
            sub = (*path, key)
            if isinstance(item, dict) and item:
                out.append(f"{indent}{k}:")
                _emit(item, indent + "  ", out, sub, note, spell)
            elif isinstance(item, list) and item:
                out.append(f"{indent}{k}:")
                _emit(item, indent, out, sub, note, spell)  # kubectl style: "- " at the key's indentation
            else:
                token = spell.value(value, key, item) if spell else None
                line = f"{indent}{k}: {token if token is not None else _inline(item, indent + '  ')}"
                out.append(_with_note(line, note(sub) if note else None))
        return
    for i, item in enumerate(value):
        sub = (*path, i)
        if isinstance(item, dict) and item:
            lines: list[str] = []
            _emit(item, indent + "  ", lines, sub, note, spell)
            lines[0] = indent + "- " + lines[0][len(indent) + 2 :]
            out.extend(lines)
        elif isinstance(item, list) and item:
            lines = []
            _emit(item, indent + "  ", lines, sub, note, spell)
            lines[0] = indent + "- " + lines[0][len(indent) + 2 :]
            out.extend(lines)
        else:
            token = spell.value(value, i, item) if spell else None
            line = f"{indent}- {token if token is not None else _inline(item, indent + '  ')}"
            out.append(_with_note(line, note(sub) if note else None))


def _inline(value: Any, indent: str) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    if isinstance(value, str) and _block_ok(value):
        return _block(value, indent)
    return _scalar(value)


def dump(obj: Any, note: Notes | None = None, spell: Spelling | None = None) -> str:
    """One YAML document (no leading `---`). `note(path)` returns a comment for the scalar at
    `path` (a tuple of keys and indexes), or None (`ktrain job render --explain`); `spell` keeps
    the text of scalars passed through (`ktrain-krm`)."""
    if isinstance(obj, (dict, list)) and obj:
        lines: list[str] = []
        _emit(obj, "", lines, (), note, spell or None)
        return "\n".join(lines) + "\n"
    return _inline(obj, "") + "\n"


def dump_all(objs: Iterable[Any], notes: Iterable[Notes | None] | None = None, spell: Spelling | None = None) -> str:
    if notes is None:
        return "---\n".join(dump(o, None, spell) for o in objs)
    return "---\n".join(dump(o, n, spell) for o, n in zip(objs, notes, strict=True))
