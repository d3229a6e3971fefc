"""Reading YAML inputs with positions, and turning them into typed API objects.

YAML is parsed with YAML 1.1 rules, the way kubectl reads it (`on`, `yes`, `0777` are not
strings), and every node keeps its line and column so an error can point at the source.
"""

from __future__ import annotations

from ktrain.errors import FieldError, InputError, ValidationFailedError
from ktrain.inputs.reading import EXCESSIVE_ALIASING, MAX_ALIAS_TEXT, MAX_YAML_DEPTH, allowed_alias_ratio
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # pydantic is imported when a model is parsed, not to read YAML
    from collections.abc import Callable
    from typing import Any

    from pydantic import BaseModel
    from ruamel.yaml import YAML

Path = tuple[str | int, ...]


@struct
class Document:
    """One YAML document: plain data plus where each node came from (1-based line/col)."""

    data: Any
    file: str
    lines: list[str] = field(default_factory=list)
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    # A job document: the mapping as the file (or template) said it, before --set and flags.
    original: Any = None
    # Subtrees that came from other documents (a --patch file's runtime patch in the job):
    # (path here, that document, path there).
    grafts: list[tuple[Path, Document, Path]] = field(default_factory=list)
    # Other documents of the same file that travel with this one (a job file's runtimes).
    siblings: list[Document] = field(default_factory=list)

    def origin(self, path: Path) -> tuple[Document, Path]:
        """The document a path's value came from (this one, or one grafted into it), and the
        path there."""
        for here, other, there in self.grafts:
            if path[: len(here)] == here:
                return other.origin((*there, *path[len(here) :]))
        return self, path

    def locate(self, path: Path, *, key: bool = False) -> tuple[int | None, int | None]:
        """Position of `path` (its value, or its key with key=True), or of its nearest
        ancestor that exists in the file."""
        for end in range(len(path), -1, -1):
            sub = path[:end]
            if end == len(path) and key and sub in self.key_positions:
                return self.key_positions[sub]
            if sub in self.positions:
                return self.positions[sub]
            if sub in self.key_positions:
                return self.key_positions[sub]
        return None, None

    def source_line(self, line: int | None) -> str | None:
        if line is None or not (1 <= line <= len(self.lines)):
            return None
        return self.lines[line - 1]

    def error(self, message: str, path: Path = (), *, hint: str | None = None, key: bool = False) -> InputError:
        line, col = self.locate(path, key=key)
        return InputError(message, file=self.file, line=line, column=col, hint=hint, source_line=self.source_line(line))


# How deep a YAML input may nest (mappings and lists, the document itself being level 1).
# Kubernetes objects are shallow: the deepest runtime among the upstream and test files is 16
# levels, the deepest TrainJob 21 (a full runtimePatches pod spec), even a CRD's OpenAPI schema
# 47. kubectl (go-yaml) and the API server (Go's encoding/json) stop at 10,000 levels; 100 keeps
# every real input, refuses a runaway one while it is read (in milliseconds), and leaves
# Python's stack to the code that walks the data.
MAX_DEPTH = MAX_YAML_DEPTH

# Alias expansion: the bounds every YAML input shares (`ktrain.inputs.reading`), as go-yaml bounds it.
_allowed_alias_ratio = allowed_alias_ratio


_BOUNDED: Any = None

# Lines are bounded too: the YAML scanner reads a plain scalar one character per call, and a
# 1 MB line took 0.7 s, or 26 s where CPython 3.11 meets its frame-stack chunk boundary in that
# loop (`python -m ktrain`). No job, runtime or values file has a line near this long (etcd keeps
# at most 1.5 MiB per object; a base64 CA bundle is a few KiB), while long values still get
# their own clear errors (length limits, cut echoes) below it.
MAX_LINE_CHARS = 512 * 1024


# What a YAML constructor raises for a value it cannot make (`!!int abc`, `2024-13-45`, an
# integer of 5,000 digits, `!!bool maybe`): an error at the value's position.
_VALUE_ERRORS = (ValueError, KeyError, TypeError, AssertionError, OverflowError, AttributeError, IndexError)


def _bounded_classes(scanner: Any, constructor: Any) -> Any:
    """ruamel's scanner and composer, refusing nesting beyond MAX_DEPTH as they read (before the
    deep part is even scanned: flow brackets in the scanner, as go-yaml does, block nesting in
    the composer), whatever the ruamel version."""
    global _BOUNDED
    if _BOUNDED is None:
        from ruamel.yaml.composer import Composer
        from ruamel.yaml.error import MarkedYAMLError

        class TooDeep(MarkedYAMLError):  # and any other problem found while reading, at its mark
            pass

        class BoundedScanner(scanner):  # type: ignore[misc]
            def fetch_flow_collection_start(self, token_class: Any, to_push: Any) -> None:
                if len(self.flow_context) >= MAX_DEPTH:
                    mark = self.reader.get_mark()
                    raise TooDeep(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
                super().fetch_flow_collection_start(token_class, to_push)

        class BoundedComposer(Composer):
            _ktrain_depth = 0

            def _deeper(self, compose: Any, anchor: Any) -> Any:
                self._ktrain_depth += 1
                try:
                    if self._ktrain_depth > MAX_DEPTH:
                        raise TooDeep(
                            None,
                            None,
                            f"nested more than {MAX_DEPTH} levels deep",
                            self.parser.peek_event().start_mark,
                        )
                    return compose(anchor)
                finally:
                    self._ktrain_depth -= 1

            def compose_sequence_node(self, anchor: Any) -> Any:
                return self._deeper(super().compose_sequence_node, anchor)

            def compose_mapping_node(self, anchor: Any) -> Any:
                return self._deeper(super().compose_mapping_node, anchor)

        class CheckedConstructor(constructor):  # type: ignore[misc]
            # ruamel's duplicate-key message formats the key and both values: an aliased value
            # (a billion laughs behind one anchor) expanded into it took 26 s and 548 MB for a
            # 1.6 KB file. The message is built from the source text instead (issue #25).
            def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
                if key not in mapping:
                    return True
                if not self.allow_duplicate_keys:
                    raise TooDeep(None, None, _duplicate_key_message(key_node, mapping, key), key_node.start_mark)
                return False

            def check_set_key(self, node: Any, key_node: Any, setting: Any, key: Any) -> None:
                if key in setting and not self.allow_duplicate_keys:
                    raise TooDeep(None, None, _duplicate_key_message(key_node, None, key), key_node.start_mark)

            def construct_non_recursive_object(self, node: Any, tag: Any = None) -> Any:
                try:
                    return super().construct_non_recursive_object(node, tag)
                except _VALUE_ERRORS as exc:
                    if _not_a_number(node):
                        return str(node.value)
                    raise TooDeep(None, None, f"cannot read this value: {_reason(exc)}", node.start_mark) from None

        # A timestamp is the text written, as kubectl reads it: go-yaml v2 decodes a timestamp-like
        # scalar into its text when the target is untyped (sigs.k8s.io/yaml's YAML-to-JSON step),
        # `2024-02-30` included, where building a datetime would fail and `isoformat()` respell it.
        CheckedConstructor.add_constructor(
            "tag:yaml.org,2002:timestamp", lambda self, node: str(self.construct_scalar(node))
        )
        _BOUNDED = (BoundedScanner, BoundedComposer, CheckedConstructor)
    return _BOUNDED


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _not_a_number(node: Any) -> bool:
    """A plain scalar the resolver took for a number, untagged, that is none (`0x_`, `0o_`): a
    string, as go-yaml reads it (kubectl's reader and kustomize's both fall back to the text when
    the number does not parse). A long run of digits is still an error: an integer out of range."""
    if node.style is not None or str(node.tag) not in _NUMBER_TAGS or not isinstance(node.value, str):
        return False
    start = node.start_mark
    buffer = getattr(start, "buffer", None)
    if isinstance(buffer, str) and buffer[start.pointer : start.pointer + 1] == "!":
        return False  # `!!int 0x_`: the file says it is a number
    return not node.value.lstrip("+-").replace("_", "").isdigit()


def _duplicate_key_message(key_node: Any, mapping: Any, key: Any) -> str:
    """`found duplicate key "numNodes"`, the key as the file spells it (at most 80 characters), and
    where it was first defined; nothing here expands an alias."""
    start, end = key_node.start_mark, key_node.end_mark
    buffer = getattr(start, "buffer", None)
    if isinstance(buffer, str) and end is not None:
        text = buffer[start.pointer : min(end.pointer, start.pointer + 81)].strip()
        if text[:1] in ("'", '"') and text[-1:] == text[:1] and len(text) > 1:
            text = text[1:-1]  # a quoted key: its value, as ruamel would show it
    else:
        text = key if isinstance(key, str) else type(key).__name__
    text = text if len(text) <= 80 else text[:80] + "..."
    first = ""
    try:
        line = mapping.lc.key(key)[0] if mapping is not None else None
        first = f" (first defined at line {line + 1})" if isinstance(line, int) else ""
    except (AttributeError, KeyError, TypeError, IndexError):
        pass
    return f'found duplicate key "{text}"{first}'


def _yaml(version: tuple[int, int] = (1, 1)) -> YAML:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.version = version  # kubectl's parser follows YAML 1.1
    y.allow_duplicate_keys = False
    y.Scanner, y.Composer, y.Constructor = _bounded_classes(y.Scanner, y.Constructor)
    return y


def _reason(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__)[:200]


class _Expansion:
    """Counts what _plain makes, to stop alias bombs (see _allowed_alias_ratio)."""

    __slots__ = ("alias_depth", "alias_text", "aliased", "count", "seen")

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.count = 0
        self.aliased = 0
        self.alias_depth = 0
        self.alias_text = 0


class _Refused(Exception):
    def __init__(self, message: str, path: Path) -> None:
        self.message = message
        self.path = path


def _plain(node: Any, path: Path, doc: Document, state: _Expansion) -> Any:
    """ruamel's round-trip nodes -> plain dict/list/scalars, recording positions."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    state.count += 1
    if state.alias_depth:
        state.aliased += 1
    if isinstance(node, str) and len(node) >= 64:  # a long scalar met again came from an alias
        if state.alias_depth or id(node) in state.seen:
            state.alias_text += len(node)
            if state.alias_text > MAX_ALIAS_TEXT:
                raise _Refused(f"aliases repeat more than {MAX_ALIAS_TEXT // (1024 * 1024)} MiB of text", path)
        else:
            state.seen.add(id(node))
    if state.aliased > 100 and state.count > 1000 and state.aliased / state.count > _allowed_alias_ratio(state.count):
        raise _Refused(EXCESSIVE_ALIASING, path)
    if isinstance(node, (CommentedMap, CommentedSeq)):
        if len(path) >= MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} levels deep (through aliases)", path)
        again = id(node) in state.seen  # an alias: the same node, expanded once more
        if again:
            state.alias_depth += 1
        else:
            state.seen.add(id(node))
        try:
            return _plain_collection(node, path, doc, state)
        finally:
            if again:
                state.alias_depth -= 1
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        if node.bit_length() > 64:  # and beyond 4,300 digits Python could not even print it
            raise _Refused("integer out of range: Kubernetes integers are at most 64 bits", path)
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):  # timestamps included: the text written (`_bounded_classes`)
        return str(node)
    return _other(node)


def _other(node: Any) -> Any:
    """What kubectl's YAML-to-JSON step makes of the rest: a `!!set` is a mapping to nulls,
    `!!binary` its base64 text, a value with an unknown tag (`!foo 1`) its text."""
    if isinstance(node, (set, frozenset)) or type(node).__name__ == "CommentedSet":
        return {str(k): None for k in node}
    if isinstance(node, (bytes, bytearray)):
        import base64

        return base64.b64encode(node).decode("ascii")
    value = getattr(node, "value", None)  # ruamel's TaggedScalar
    if isinstance(value, str):
        return value
    return str(node)


def _plain_collection(node: Any, path: Path, doc: Document, state: _Expansion) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            sub = (*path, key)
            try:
                kl, kc = node.lc.key(key)
                doc.key_positions[sub] = (kl + 1, kc + 1)
                vl, vc = node.lc.value(key)
                doc.positions[sub] = (vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            if isinstance(key, int) and key.bit_length() > 64:
                raise _Refused("integer key out of range", sub)
            out[key if isinstance(key, str) else str(key)] = _plain(value, sub, doc, state)
        return out
    items = []
    for i, value in enumerate(node):
        sub = (*path, i)
        try:
            il, ic = node.lc.item(i)
            doc.positions[sub] = (il + 1, ic + 1)
        except (KeyError, TypeError, AttributeError, IndexError):
            pass
        items.append(_plain(value, sub, doc, state))
    return items


def _unbuildable_scalar(text: str, file: str, lines: list[str], exc: Exception) -> InputError:
    """The InputError for the first scalar of `text` that cannot be constructed, at its position."""
    import warnings

    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    yaml = _yaml()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stack = list(reversed(list(yaml.compose_all(text))))
            while stack:
                node = stack.pop()
                if isinstance(node, ScalarNode):
                    try:
                        yaml.constructor.construct_object(node, deep=True)
                    except (ValueError, OverflowError) as bad:
                        line, col = node.start_mark.line + 1, node.start_mark.column + 1
                        what = (
                            f"{len(str(node.value))} digits, far beyond any API integer (at most 64 bits)"
                            if "digits" in str(bad)
                            else str(bad)
                        )
                        return InputError(
                            f"invalid YAML: this {str(node.tag).rsplit(':', 1)[-1]} cannot be read: {what}",
                            file=file,
                            line=line,
                            column=col,
                            source_line=lines[line - 1] if 0 < line <= len(lines) else None,
                        )
                elif isinstance(node, MappingNode):
                    stack += [part for pair in reversed(node.value) for part in reversed(pair)]
                elif isinstance(node, SequenceNode):
                    stack += list(reversed(node.value))
    except Exception:  # noqa: BLE001, S110 - only finding the position failed: report without it
        pass
    return InputError(f"invalid YAML: a value cannot be read: {str(exc)[:200]}", file=file)


def load_documents(text: str, file: str, *, version: tuple[int, int] = (1, 1)) -> list[Document]:
    """Parse multi-document YAML; a syntax error becomes an InputError at file:line:col.

    Bounded: nesting deeper than MAX_DEPTH and alias bombs are errors (see above). `version`:
    the YAML version whose rules read plain scalars, 1.1 as kubectl reads files; (1, 2) for what
    kustomize and kpt write (go-yaml v3: `n`, `on` and `12:30` are strings)."""
    import warnings  # (with ruamel: a parse, not a read from the cache)

    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    lines = text.splitlines()
    if len(text) > MAX_LINE_CHARS:  # (a shorter text has no longer line)
        by_newline = text.split("\n")  # numbered as editors and the YAML parser number them
        longest = max(range(len(by_newline)), key=lambda i: len(by_newline[i]))
        if len(by_newline[longest]) > MAX_LINE_CHARS:
            raise InputError(
                f"line {longest + 1} is {len(by_newline[longest]):,} characters long; ktrain reads YAML lines "
                f"of up to {MAX_LINE_CHARS:,}",
                file=file,
                line=longest + 1,
                hint="a job, runtime or values file has short lines: check that this is the file you meant",
            )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = list(_yaml(version).load_all(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        source = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
        raise InputError(f"invalid YAML: {problem}", file=file, line=line, column=col, source_line=source) from None
    except YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=file) from None
    except (ValueError, OverflowError) as exc:
        # A scalar YAML resolves to a type it cannot be built as: `2020-02-30` (a timestamp with
        # no such day), an integer of more than 4300 digits (Python's int-to-text limit).
        raise _unbuildable_scalar(text, file, lines, exc) from None
    except _VALUE_ERRORS as exc:  # found while filling a mapping or list, where no position is known
        raise InputError(f"invalid YAML: {_reason(exc)}", file=file) from None
    except RecursionError:  # a backstop: MAX_DEPTH stops nesting long before Python's stack
        raise InputError(f"invalid YAML: nested too deeply (the limit is {MAX_DEPTH} levels)", file=file) from None
    docs = []
    for node in raw:
        if node is None:
            continue
        doc = Document(data=None, file=file, lines=lines)
        lc = getattr(node, "lc", None)
        if lc is not None and lc.line is not None:  # the document itself, for errors about its shape
            doc.positions[()] = (lc.line + 1, lc.col + 1)
        try:
            doc.data = _plain(node, (), doc, _Expansion())
        except _Refused as exc:
            raise doc.error(f"invalid YAML: {exc.message}", exc.path) from None
        docs.append(doc)
    return docs


def _model_at(model: type[BaseModel], loc: Path) -> type[BaseModel] | None:
    """The pydantic model class that holds the field at `loc` (for "did you mean")."""
    import typing

    from pydantic import BaseModel

    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        found = None
        for name, info in current.model_fields.items():
            if part in (name, info.alias):
                found = info.annotation
                break
        if found is None:
            return None
        # unwrap Optional[...] / list[...]
        for _ in range(3):
            args = [a for a in typing.get_args(found) if a is not type(None)]
            if not args:
                break
            found = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), args[0])
        current = found
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


_TYPE_WORDS = {
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "bool_type": "must be a boolean (true or false)",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "float_type": "must be a number",
    "missing": "is required",
    "literal_error": "has an unsupported value",
}


_OPENAPI_TYPES = {
    "string_type": "string",
    "int_type": "integer",
    "bool_type": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "float_type": "number",
}


def path_text(loc: Path) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse_model(doc: Document, name: str, *, what: str) -> Any:
    """Validate a document into the API model `name` (`"TrainJob"`); problems become one
    InputError naming every field.

    The result is a plain record when the input needs no coercion (no pydantic import, see
    ktrain.api.records), else the pydantic model, which also explains what is wrong.
    """
    from ktrain.api.records import NotPlain, build, pydantic_model, record_class

    try:
        return build(record_class(name), doc.data)
    except NotPlain:
        model = pydantic_model(name)
    from pydantic import ValidationError

    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        problems: list[tuple[Path, str, str | None]] = []
        for err in exc.errors():
            # pydantic appends union-member tags to loc; keep only real path parts
            loc = tuple(
                p
                for p in err["loc"]
                if isinstance(p, int) or not str(p).startswith(("function-", "str", "int", "float"))
            )
            kind = err["type"]
            hint = None
            if kind == "extra_forbidden":
                holder = _model_at(model, loc[:-1])
                names = _field_names(holder) if holder else []
                import difflib

                close = difflib.get_close_matches(str(loc[-1]), names, n=1)
                # the API server's strict decoding error names the full path
                msg = f'unknown field "{path_text(loc)}"'
                if close:
                    hint = f"did you mean {close[0]!r}?"
            elif kind == "literal_error":
                msg = f"must be {err.get('ctx', {}).get('expected', 'one of the allowed values')}"
            else:
                msg = _TYPE_WORDS.get(kind, err["msg"])
                if kind in _OPENAPI_TYPES and "input" in err:
                    # the API server's wording: `Invalid value: "integer": <path> in body must be of
                    # type string: "integer"` (YAML `value: 1` or `value: on` for an env value)
                    from ktrain.api.common import openapi_type

                    got = openapi_type(err["input"])
                    msg = (
                        f"{msg}, got {got} {err['input']!r}"[:200]
                        + f'; Invalid value: "{got}": {path_text(loc)} in body must be of type '
                        f'{_OPENAPI_TYPES[kind]}: "{got}"'
                    )
            problems.append((loc, msg, hint))
        # dedupe (unions report once per member)
        seen: set[tuple[Path, str]] = set()
        uniq = []
        for loc, msg, hint in problems:
            if (loc, msg) not in seen:
                seen.add((loc, msg))
                uniq.append((loc, msg, hint))
        first_loc, first_msg, first_hint = uniq[0]
        unknown_field = first_msg.startswith("unknown field")
        # An unknown-field message names its path already; the suggestion goes to the hint.
        text = f"invalid {what}: " + (first_msg if unknown_field else f"{path_text(first_loc)}: {first_msg}")
        if len(uniq) > 1:
            text += "".join(f"\n  {path_text(loc)}: {msg}" for loc, msg, _ in uniq[1:])
        raise doc.error(text, first_loc, hint=first_hint, key=unknown_field) from None


def _brief(value: Any) -> str:
    """A short echo of a scalar (nothing for a mapping or a list): ` 'abc'`, ` 5`."""
    if isinstance(value, str):
        return f" {value[:60]!r}" + ("..." if len(value) > 60 else "")
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return f" {value!r}"
    if isinstance(value, int):
        return f" {value}" if value.bit_length() < 200 else ""
    return ""


def check_types(doc: Document, name: str, *, what: str) -> None:
    """Refuse a document with a scalar where the API model `name` has a mapping or a list (`spec: abc`,
    `metadata: 5`), before anything reads into it; worded and located as parse_model would.
    Other wrong types are left to parse_model and the schema, which report every problem at once."""
    from ktrain.api.records import type_errors

    found = type_errors(name, doc.data, containers_only=True)
    if not found:
        return
    from ktrain.api.base import openapi_type

    words = {
        "string": "must be a string",
        "integer": "must be an integer",
        "boolean": "must be a boolean (true or false)",
        "array": "must be a list",
        "object": "must be a mapping",
        "number": "must be a number",
    }
    texts = []
    for loc, expected, value in found:
        got = openapi_type(value)
        where = path_text(loc) or "<document>"
        texts.append(
            f"{where}: {words.get(expected, f'must be of type {expected}')}, got {got}{_brief(value)}"
            + f'; Invalid value: "{got}": {where} in body must be of type {expected}: "{got}"'
        )
    text = f"invalid {what}: " + texts[0] + "".join(f"\n  {t}" for t in texts[1:])
    raise doc.error(text, found[0][0])


def locate_field_errors(
    exc: ValidationFailedError, doc: Document, prefix: Path = (), only: Callable[[FieldError], bool] | None = None
) -> None:
    """Attach file:line:col to each FieldError (those `only` accepts) whose path exists in `doc`."""
    from ktrain.errors import Located

    for i, err in enumerate(exc.errors):
        path = parse_field_path(err.path)
        if not path or (only is not None and not only(err)):
            continue
        source, there = doc.origin((*prefix, *path))
        # an unknown field is pointed at by its key, as parse_model does
        line, col = source.locate(there, key=err.message.startswith("unknown field"))
        if line is not None:
            exc.locations[i] = Located(file=source.file, line=line, column=col, source_line=source.source_line(line))


def parse_field_path(text: str) -> Path:
    """ "spec.trainer.env[1].name" -> ("spec", "trainer", "env", 1, "name")."""
    out: list[str | int] = []
    for part in text.replace("]", "").split("."):
        if not part:
            continue
        head, *idx = part.split("[")
        if head:
            out.append(head)
        for i in idx:
            out.append(int(i) if i.isdigit() else i)
    return tuple(out)


__all__ = ["Document", "FieldError", "load_documents", "locate_field_errors", "parse_field_path", "parse_model"]
