"""JSON text and JSON-like data without importing `json` or `copy` (start-up cost, issue #17).

`import json` compiles six regular expressions and loads three modules (about 2 ms of a TAB
press on a 2-core VM); `import copy` pulls in `weakref` and looks for Jython's `org.python.core`
on every `sys.path` entry. The render and completion paths only need:

- `loads(text)`: `json.loads` of a str, through the C scanner `json` itself uses (`_json`);
- `dumps(value, sort_keys=...)`: `json.dumps` with its defaults (ASCII, `", "` and `": "`),
  through the C encoder `json` itself uses;
- `quote(text)`: a JSON string literal without `\\u` escapes (`json.dumps(text, ensure_ascii=False)`);
- `deep_copy(data)`: `copy.deepcopy` of plain data (dict, list, str, int, float, bool, None), in C.

Each gives what the `json`/`copy` call it stands for gives (tests/unit/util/test_jsondata.py holds
them to that), and falls back to it where `_json` is missing (another Python implementation)
or the value is not plain data.
"""

from __future__ import annotations

import marshal

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

Obj = dict[str, "Any"]  # a JSON object, as read from YAML/JSON or sent to the API server

_json: Any
try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it; json's own fallback is used instead
    _json = None

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_WHITESPACE = " \t\n\r"


class _Context:
    """What `_json.make_scanner` reads from a JSONDecoder: json.loads' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan: Any = None


def loads(text: str) -> Any:
    """`json.loads(text)` (ValueError for what it refuses)."""
    global _scan
    if _json is None:
        import json

        return json.loads(text)
    if _scan is None:
        _scan = _json.make_scanner(_Context())
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:  # nothing that starts a JSON value here
        raise ValueError(f"Expecting value: char {exc.value}") from None
    if end != len(text) and text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def nesting_depth(text: str, limit: int) -> int | None:
    """The offset of the first bracket of JSON `text` nested deeper than `limit` (strings skipped),
    or None: checked before `loads`, whose C scanner recurses once per level (100,000 `{` made it
    raise SystemError). A text with at most `limit` brackets is passed at once."""
    if text.count("{") + text.count("[") <= limit:
        return None
    import re

    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        ch = match.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif ch in "]}":
            depth -= 1
    return None


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """`json.dumps(value, sort_keys=sort_keys)`: ASCII, `", "` between items, `": "` after keys."""
    if _json is None:
        import json

        return json.dumps(value, sort_keys=sort_keys)
    encode = _json.make_encoder(
        {}, _unserializable, _json.encode_basestring_ascii, None, ": ", ", ", sort_keys, False, True
    )
    return "".join(encode(value, 0))


def quote(text: str) -> str:
    """`json.dumps(text, ensure_ascii=False)`: a double-quoted JSON string literal."""
    if _json is None:
        import json

        return json.dumps(text, ensure_ascii=False)
    return _json.encode_basestring(text)  # type: ignore[no-any-return]  # untyped C accelerator


def deep_copy(data: T) -> T:
    """`copy.deepcopy(data)` for plain data; objects referenced twice stay shared, as deepcopy
    keeps them. Other values (a datetime a YAML timestamp became, a subclass) go to deepcopy."""
    try:
        copied: T = marshal.loads(marshal.dumps(data))  # type: ignore[arg-type]  # plain data, else ValueError
    except ValueError:  # not plain data, or nested beyond marshal's limit
        import copy

        return copy.deepcopy(data)
    return copied
