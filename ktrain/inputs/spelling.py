"""Scalars as their file spells them, for the resources ktrain passes through (`ktrain-krm`).

ktrain reads a file into plain data (`1e3` becomes the float 1000.0, `0x10` the int 16, `on` the
string "on" or the boolean true, by the YAML version's rules) and writes what it renders from that
data. A resource it does not render must come out as it went in, and what a scalar means depends
on who reads it: kustomize and kpt keep a scalar's text, and kubectl finally reads that text with
YAML 1.1's rules (`012` is 10, `on` is true, a timestamp stays the text written). Writing the data
back could change that meaning (`012` read as YAML 1.2's 12) and changes the spelling
(`1e3` -> `1000.0`). So the text of every scalar written on one line, plain or quoted, is kept
here beside the data, and the writers (`ktrain.output.yamltext.dump`, `json_text`) write that text
wherever the value is still the one read from it.

Tokens are kept by the container (mapping or list) that holds the value, and only for as long as
the value there is unchanged: an edited value (kpt's renumbered index annotation), or a container
made anew (a rendered object), is written from its data. Block scalars, multi-line flow scalars,
and scalars with a tag or an anchor are written from their data too (they are strings, or their
tag says what they are, either way the same for every reader).
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

_MERGE = "tag:yaml.org,2002:merge"
_NULL = "tag:yaml.org,2002:null"
# YAML 1.1's line breaks that YAML 1.2 reads as characters: a token holding one would read
# differently as it is, so it is not kept.
_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029", "\ufeff")


class Spelling:
    """The source text of scalars, by the container holding them (see the module docstring)."""

    def __init__(self) -> None:
        # id(container) -> (container, {key or index: (value as read, token)}, {key: key token})
        self._by_container: dict[int, tuple[Any, dict[Any, tuple[Any, str]], dict[Any, str]]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_container)

    def value(self, container: Any, key: Any, value: Any) -> str | None:
        """The text to write for `container[key]`, when it is still `value` as read; else None."""
        entry = self._by_container.get(id(container))
        if entry is None or entry[0] is not container:
            return None
        found = entry[1].get(key)
        if found is None:
            return None
        original, token = found
        if value is original or (type(value) is type(original) and value == original):
            return token
        return None

    def key(self, container: Any, key: Any) -> str | None:
        """The text to write for the key `key` of the mapping `container`, or None."""
        entry = self._by_container.get(id(container))
        if entry is None or entry[0] is not container:
            return None
        return entry[2].get(key)

    def _keep(self, container: Any, values: dict[Any, tuple[Any, str]], keys: dict[Any, str]) -> None:
        if values or keys:
            self._by_container[id(container)] = (container, values, keys)

    # --- YAML -------------------------------------------------------------------------------

    def add_yaml(self, text: str, documents: list[Any], version: tuple[int, int]) -> None:
        """Keep the tokens of `text`, whose non-null documents were read into `documents` (by
        `ktrain.inputs.documents.load_documents`). Where the two do not line up (they always do),
        nothing is kept: the data is written as it is."""
        import warnings

        from ktrain.inputs.documents import _yaml

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nodes = [n for n in _yaml(version).compose_all(text) if n is not None and not _is_null(n)]
        if len(nodes) != len(documents):
            return
        for node, data in zip(nodes, documents, strict=True):
            self._walk(node, data)

    def _walk(self, node: Any, data: Any) -> None:
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        if isinstance(node, MappingNode) and isinstance(data, dict):
            if len(node.value) != len(data) or any(str(k.tag) == _MERGE for k, _ in node.value):
                return  # a merge key (`<<: *base`): the mapping is not the file's pairs in order
            values: dict[Any, tuple[Any, str]] = {}
            keys: dict[Any, str] = {}
            for (key_node, value_node), (key, value) in zip(node.value, data.items(), strict=True):
                token = _token(key_node)
                if token:
                    keys[key] = token
                if isinstance(value_node, ScalarNode):
                    token = _token(value_node)
                    if token:
                        values[key] = (value, token)
                else:
                    self._walk(value_node, value)
            self._keep(data, values, keys)
        elif isinstance(node, SequenceNode) and isinstance(data, list) and len(node.value) == len(data):
            values = {}
            for i, (item_node, item) in enumerate(zip(node.value, data, strict=True)):
                if isinstance(item_node, ScalarNode):
                    token = _token(item_node)
                    if token:
                        values[i] = (item, token)
                else:
                    self._walk(item_node, item)
            self._keep(data, values, {})

    # --- JSON -------------------------------------------------------------------------------

    def load_json(self, text: str) -> Any:
        """`json.loads(text)`, keeping the text of the numbers that Python would write otherwise:
        `1e3`, `1.50`, `-0` and `1e400` would come out as `1000.0`, `1.5`, `0` and `Infinity`
        (which is not even JSON)."""
        import json

        data = json.loads(text, parse_float=_Number, parse_int=_integer)
        return self._json_walk(data)

    def _json_walk(self, data: Any) -> Any:
        if isinstance(data, dict):
            values: dict[Any, tuple[Any, str]] = {}
            for key, value in data.items():
                if isinstance(value, (_Number, _Integer)):
                    data[key] = plain = value.plain()
                    values[key] = (plain, value.text)
                else:
                    self._json_walk(value)
            self._keep(data, values, {})
        elif isinstance(data, list):
            values = {}
            for i, value in enumerate(data):
                if isinstance(value, (_Number, _Integer)):
                    data[i] = plain = value.plain()
                    values[i] = (plain, value.text)
                else:
                    self._json_walk(value)
            self._keep(data, values, {})
        elif isinstance(data, (_Number, _Integer)):
            return data.plain()
        return data


class _Number(float):
    """A JSON number that is not an integer, with its text."""

    text: str

    def __new__(cls, text: str) -> _Number:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def plain(self) -> float:
        return float(self)


class _Integer(int):
    """A JSON integer Python would write otherwise (`-0`), with its text."""

    text: str

    def __new__(cls, text: str) -> _Integer:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def plain(self) -> int:
        return int(self)


def _integer(text: str) -> int:
    value = int(text)
    return value if str(value) == text else _Integer(text)


def _is_null(node: Any) -> bool:
    return (
        type(node).__name__ == "ScalarNode"
        and str(node.tag) == _NULL
        and node.value in ("", "~", "null", "Null", "NULL")
    )


def _token(node: Any) -> str | None:
    """A scalar node's text as written, when it stands on one line with no tag or anchor."""
    from ruamel.yaml.nodes import ScalarNode

    if not isinstance(node, ScalarNode):
        return None
    start, end = node.start_mark, node.end_mark
    buffer = getattr(start, "buffer", None)
    if not isinstance(buffer, str) or end is None:
        return None
    token = buffer[start.pointer : end.pointer]
    if not token or any(b in token for b in _BREAKS):
        return None
    if node.style is None:
        return token if token == node.value else None  # a tag or an anchor is part of the text
    if node.style in ("'", '"') and len(token) >= 2 and token[0] == token[-1] == node.style:
        return token
    return None


def json_text(value: Any, spelling: Spelling | None) -> str:
    """`json.dumps(value, ensure_ascii=False)`, numbers written as `spelling` keeps them."""
    import json

    if not spelling:
        return json.dumps(value, ensure_ascii=False)
    out: list[str] = []
    _json_emit(value, spelling, out)
    return "".join(out)


def _json_emit(value: Any, spelling: Spelling, out: list[str]) -> None:
    import json

    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(", ")
            out.append(json.dumps(key if isinstance(key, str) else str(key), ensure_ascii=False) + ": ")
            token = spelling.value(value, key, item)
            if token is not None:
                out.append(token)
            else:
                _json_emit(item, spelling, out)
        out.append("}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(", ")
            token = spelling.value(value, i, item)
            if token is not None:
                out.append(token)
            else:
                _json_emit(item, spelling, out)
        out.append("]")
    else:
        out.append(json.dumps(value, ensure_ascii=False))
