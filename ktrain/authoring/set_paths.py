"""`--set PATH=VALUE`: edit one field of a job document by its dotted path, type-checked.

Path syntax (a key, then `=`, then the value):

    trainer.numNodes=8                      a field (paths may start at `spec.` or below it)
    spec.trainer.command[0]=python          a list item by index (index == length appends)
    trainer.env[name=LR].value=3e-4         a list item by key; created when absent
    metadata.labels["app.kubernetes.io/name"]=x   a key with dots, quoted (or escape: a\\.b)

A path is a *job path* when its first part is a TrainJob field (`apiVersion`, `kind`,
`metadata`, `spec`, `status`) or a field of `spec` (`trainer`, `runtimeRef`, ...). Anything
else is a template value (see `ktrain.authoring.templating`). Values are converted to the type the
model declares (`numNodes` takes an integer, `suspend` true/false, `command` a list written
as YAML flow, `[torchrun, train.py]`); a value of the wrong type is an error pointing at it.
"""

from __future__ import annotations

import re
from typing import Any

from ktrain.api.record_spec import MODELS
from ktrain.errors import InputError
from ktrain.util.structs import struct

# Field types are those of the records table (ktrain/api/record_spec.py, generated from the
# pydantic models), so a `--set` render imports no pydantic: ("opt", T), ("model", name), ...
Spec = tuple[Any, ...]

# One part of a path: a field name, a list index, or a list item selected by `key=value`.
Part = str | int | tuple[str, str]

_INT = re.compile(r"^[-+]?[0-9]+$")
_MAX_INT_TEXT = 21  # a sign and the 20 digits of a 64-bit integer; longer stays text (or is an error)
# A path as deep as the deepest YAML input ktrain reads (ktrain.inputs.documents.MAX_DEPTH).
MAX_PATH_PARTS = 100
SET_FLAG = "--set"


@struct(frozen=True)
class Assignment:
    """One parsed `--set` argument."""

    text: str  # the argument as given
    parts: tuple[Part, ...]
    value: str
    value_column: int  # 1-based column of the value in `text` (for the caret)
    part_columns: tuple[int, ...] = ()  # 1-based column where each path part starts

    def column_of(self, depth: int) -> int:
        """Column of path part `depth` (counted in the path as written, without a `spec.` prefix)."""
        if 0 <= depth < len(self.part_columns):
            return self.part_columns[depth]
        return 1

    @property
    def key(self) -> str:
        return self.text[: self.value_column - 2]


def _error(text: str, message: str, column: int, hint: str | None = None) -> InputError:
    return InputError(message, file=SET_FLAG, column=column, source_line=text, hint=hint)


def parse_assignment(text: str) -> Assignment:
    """Split `a.b[name=x].c=value` into path parts and the value; errors point into `text`."""
    parts: list[Part] = []
    columns: list[int] = []
    current = ""
    i = 0
    n = len(text)
    started = False  # the current part has content (even an empty quoted key)

    def flush(at: int) -> None:
        nonlocal current, started
        if not started:
            raise _error(
                text,
                "empty field name in --set path",
                at + 1,
                hint="write --set trainer.numNodes=4 (parts separated by single dots)",
            )
        parts.append(current)
        columns.append(start + 1)
        current, started = "", False

    start = 0

    while i < n:
        ch = text[i]
        if not started and ch not in ".=[":
            start = i
        if ch == "\\" and i + 1 < n:
            current += text[i + 1]
            started = True
            i += 2
            continue
        if ch == "=":
            if started:
                flush(i)
            elif not parts:
                raise _error(text, "--set needs PATH=VALUE", i + 1)
            if len(parts) > MAX_PATH_PARTS:
                raise _error(
                    text, f"--set path has more than {MAX_PATH_PARTS} parts", columns[MAX_PATH_PARTS] if columns else 1
                )
            value = text[i + 1 :]
            return Assignment(
                text=text, parts=tuple(parts), value=value, value_column=i + 2, part_columns=tuple(columns)
            )
        if ch == ".":
            if started:
                flush(i)
            elif not parts or (isinstance(parts[-1], str) and text[i - 1] == "."):
                raise _error(text, "empty field name in --set path", i + 1)
            i += 1
            continue
        if ch == "[":
            if started:
                flush(i)
            end = _closing_bracket(text, i)
            inner = text[i + 1 : end]
            parts.append(_bracket(text, inner, i))
            columns.append(i + 1)
            i = end + 1
            continue
        current += ch
        started = True
        i += 1
    raise _error(text, "--set needs PATH=VALUE", n + 1, hint="e.g. --set trainer.numNodes=4")


def _closing_bracket(text: str, start: int) -> int:
    quote = None
    for j in range(start + 1, len(text)):
        ch = text[j]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "]":
            return j
    raise _error(text, "unclosed '[' in --set path", start + 1)


def _bracket(text: str, inner: str, at: int) -> Part:
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "\"'":
        return inner[1:-1]  # a quoted key: ["app.kubernetes.io/name"]
    if inner.isdigit():
        return int(inner)
    key, sep, value = inner.partition("=")
    if sep and key:
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        return (key, value)
    raise _error(text, f'bad list selector [{inner}]: use [INDEX], [KEY=VALUE] or ["quoted key"]', at + 1)


# --- which paths are job paths -----------------------------------------------------------------


def _aliases(model: str) -> list[str]:
    return [f[1] for f in MODELS[model]["fields"]]


def root_fields() -> list[str]:
    return _aliases("TrainJob")


def spec_fields() -> list[str]:
    return _aliases("TrainJobSpec")


def is_job_path(parts: tuple[Part, ...]) -> bool:
    head = parts[0] if parts else None
    return isinstance(head, str) and (head in root_fields() or head in spec_fields())


def absolute(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """`trainer.numNodes` -> `spec.trainer.numNodes` (paths below `spec` may omit it)."""
    if parts and parts[0] in root_fields():
        return parts
    return ("spec", *parts)


def closest_field(name: str) -> str | None:
    import difflib

    close = difflib.get_close_matches(name, [*spec_fields(), *root_fields()], n=1)
    return close[0] if close else None


# --- types along a path ----------------------------------------------------------------------


def _unwrap(spec: Spec) -> Spec:
    """Optional[X] -> X."""
    while spec[0] == "opt":
        spec = spec[1]
    return spec


@struct(frozen=True)
class _Problem:
    message: str
    suggestion: str | None = None
    about_parent: bool = False  # "spec.trainer.numNodes is not a mapping" vs "...numNode: unknown field"


def _unknown(name: str, known: list[str], what: str) -> _Problem:
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    suggestion = close[0] if close else None
    return _Problem(f"{what} {name!r}" + (f" (did you mean {suggestion!r}?)" if suggestion else ""), suggestion)


_ANY: Spec = ("any",)


def _step(spec: Spec, part: Part) -> tuple[Spec | None, _Problem | None]:
    """The type one level down, or (None, what is wrong)."""
    ann = _unwrap(spec)
    kind = ann[0]
    if kind == "any":
        return _ANY, None
    if isinstance(part, (int, tuple)):
        if kind != "list":
            return None, _Problem("is not a list", about_parent=True)
        item = ann[1]
        holder = _unwrap(item)
        if isinstance(part, tuple) and holder[0] == "model" and part[0] not in _aliases(holder[1]):
            return None, _unknown(part[0], _aliases(holder[1]), "list items have no field")
        return item, None
    if kind == "model":
        model = MODELS[ann[1]]
        for attr, alias, field_spec, _, _ in model["fields"]:
            if part in (attr, alias):
                return field_spec, None
        if model["extra"] == "allow":
            return _ANY, None
        return None, _unknown(part, _aliases(ann[1]), "unknown field")
    if kind == "dict":
        return ann[1], None
    return None, _Problem("is not a mapping", about_parent=True)


def _describe(parts: tuple[Part, ...]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, tuple):
            out += f"[{p[0]}={p[1]}]"
        else:
            out += ("." if out else "") + (p if "." not in p else f'["{p}"]')
    return out


def _parse_yaml_value(a: Assignment) -> Any:
    from ktrain.inputs.documents import load_documents

    docs = load_documents(a.value, SET_FLAG)
    return docs[0].data if docs else None


def convert(a: Assignment, spec: Spec, where: str) -> Any:
    """The `--set` text as a value of the field type `spec` (a clear error when it cannot be)."""
    ann = _unwrap(spec)
    kind = ann[0]
    value = a.value

    def bad(what: str) -> InputError:
        return _error(a.text, f"{where} {what}, got {value!r}", a.value_column)

    if kind == "bool":
        if value in ("true", "false"):
            return value == "true"
        raise bad("must be true or false")
    if kind == "int":
        if _INT.match(value) and len(value) <= _MAX_INT_TEXT:
            return int(value)
        raise bad("must be an integer" if len(value) <= _MAX_INT_TEXT else "must be an integer of at most 64 bits")
    if kind == "float":
        try:
            return float(value)
        except ValueError:
            raise bad("must be a number") from None
    if kind == "str":
        return value
    if kind == "lit":
        allowed = [str(x) for x in ann[1]]
        if value in allowed:
            return value
        raise bad("must be one of " + ", ".join(allowed))
    if kind == "union" and ("str",) in ann[1]:
        return value  # e.g. a quantity: str | int | float; the text is kept as written
    try:
        parsed = _parse_yaml_value(a)
    except InputError as exc:
        raise _error(a.text, f"{where}: the value is not valid YAML: {exc.message}", a.value_column) from None
    if kind == "list" and not isinstance(parsed, list):
        raise bad("must be a list (YAML flow, e.g. [torchrun, train.py])")
    if kind in ("dict", "model") and not isinstance(parsed, dict):
        raise bad("must be a mapping (YAML flow, e.g. {key: value})")
    return parsed


# --- applying ----------------------------------------------------------------------------------


def apply_assignment(data: dict[str, Any], a: Assignment, model: str = "TrainJob") -> None:
    """Set the field `a` names inside `data` (a mapping of the API model `model`), creating
    parents as needed."""
    parts = absolute(a.parts)
    shift = len(parts) - len(a.parts)  # 1 when `spec.` was implied
    annotation: Spec | None = ("model", model)
    for depth, part in enumerate(parts):
        assert annotation is not None
        annotation, problem = _step(annotation, part)
        if problem is not None:
            if problem.about_parent:
                message = f"{_describe(parts[:depth]) or 'the TrainJob'} {problem.message}"
            else:
                message = f"{_describe(parts[: depth + 1])}: {problem.message}"
            hint = f"did you mean {problem.suggestion!r}?" if problem.suggestion else None
            raise _error(a.text, message, a.column_of(depth - shift), hint=hint)
    assert annotation is not None
    value = convert(a, annotation, _describe(parts))
    node: Any = data
    for depth, part in enumerate(parts[:-1]):
        node = _child(node, part, parts[depth + 1], a, parts[: depth + 1])
    _assign(node, parts[-1], value, a, parts)


def _new_container(next_part: Part) -> Any:
    return [] if isinstance(next_part, (int, tuple)) else {}


def _child(node: Any, part: Part, next_part: Part, a: Assignment, so_far: tuple[Part, ...]) -> Any:
    if isinstance(part, str):
        if not isinstance(node, dict):
            raise _error(a.text, f"{_describe(so_far[:-1])} is not a mapping in the job", 1)
        child = node.get(part)
        if not isinstance(child, (dict, list)):
            child = _new_container(next_part)
            node[part] = child
        return child
    if not isinstance(node, list):
        raise _error(a.text, f"{_describe(so_far[:-1])} is not a list in the job", 1)
    index = _index(node, part, a, so_far)
    if index == len(node):
        node.append({part[0]: part[1]} if isinstance(part, tuple) else _new_container(next_part))
    elif not isinstance(node[index], (dict, list)):
        node[index] = _new_container(next_part)
    return node[index]


def _index(node: list[Any], part: Part, a: Assignment, so_far: tuple[Part, ...]) -> int:
    if isinstance(part, tuple):
        key, want = part
        for i, item in enumerate(node):
            if isinstance(item, dict) and str(item.get(key)) == want:
                return i
        return len(node)  # a new item with that key
    assert isinstance(part, int)
    if part > len(node):
        raise _error(
            a.text,
            f"{_describe(so_far)}: index {part} is out of range (the list has {len(node)} "
            f"item{'s' if len(node) != 1 else ''}; use [{len(node)}] to append)",
            1,
        )
    return part


def _assign(node: Any, part: Part, value: Any, a: Assignment, parts: tuple[Part, ...]) -> None:
    if isinstance(part, str):
        if not isinstance(node, dict):
            raise _error(a.text, f"{_describe(parts[:-1])} is not a mapping in the job", 1)
        node[part] = value
        return
    if not isinstance(node, list):
        raise _error(a.text, f"{_describe(parts[:-1])} is not a list in the job", 1)
    index = _index(node, part, a, parts)
    if index == len(node):
        node.append(value)
    else:
        node[index] = value


def template_value(a: Assignment) -> tuple[tuple[str, ...], Any]:
    """A `--set` for a template: dotted keys nest; integers and true/false are typed, the rest
    stays text exactly as written (so `lr=3e-4` renders as `3e-4`, not `0.0003`)."""
    keys = []
    for part in a.parts:
        if not isinstance(part, str):
            raise _error(a.text, "template values take plain dotted names (no [..])", 1)
        keys.append(part)
    value: Any = a.value
    if _INT.match(a.value) and len(a.value) <= _MAX_INT_TEXT:
        value = int(a.value)
    elif a.value in ("true", "false"):
        value = a.value == "true"
    return tuple(keys), value


def nest(values: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    node = values
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[keys[-1]] = value
