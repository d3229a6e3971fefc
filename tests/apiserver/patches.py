"""JSON merge patch (RFC 7386), a simple strategic merge patch, and JSON patch (RFC 6902)."""

from __future__ import annotations

import copy
from typing import Any

from .errors import ApiError, bad_request, generic

JSON = dict[str, Any]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: JSON = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Strategic merge without per-field merge keys: maps merge, lists replace.

    `$patch: replace` / `$patch: delete` directives on maps are honoured; `$retainKeys` and
    `$setElementOrder` directives are dropped.
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    body = {k: v for k, v in patch.items() if not k.startswith("$")}
    if directive == "delete":
        return None
    if directive == "replace":
        return copy.deepcopy(body)
    result: JSON = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in body.items():
        if key.startswith("$setElementOrder/") or key.startswith("$deleteFromPrimitiveList/"):
            continue
        if value is None:
            result.pop(key, None)
            continue
        merged = strategic_merge_patch(result.get(key), value)
        if merged is None:
            result.pop(key, None)
        else:
            result[key] = merged
    return result


# --- RFC 6902 -----------------------------------------------------------------------------------


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise bad_request(f"JSON pointer {pointer!r} must start with '/'")
    return [_unescape(t) for t in pointer[1:].split("/")]


def _patch_error(message: str) -> ApiError:
    # evanphx/json-patch failures surface as a generic 422 in the patch handler.
    return generic(422, message, "Invalid")


def _parent(doc: Any, tokens: list[str], path: str) -> tuple[JSON | list[Any], str]:
    current = doc
    for token in tokens[:-1]:
        if isinstance(current, dict):
            if token not in current:
                raise _patch_error(f"doc is missing path: {path}: missing value")
            current = current[token]
        elif isinstance(current, list):
            index = _index(token, len(current), path, allow_end=False)
            current = current[index]
        else:
            raise _patch_error(f"doc is missing path: {path}: missing value")
    if not isinstance(current, (dict, list)):
        raise _patch_error(f"doc is missing path: {path}: missing value")
    return current, tokens[-1]


def _index(token: str, length: int, path: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return length
    if not token.isdigit():
        raise _patch_error(f"invalid array index {token!r} in {path}")
    index = int(token)
    limit = length if allow_end else length - 1
    if index > limit:
        raise _patch_error(f"array index out of bounds in {path}")
    return index


def _get(doc: Any, path: str) -> Any:
    current = doc
    for token in _split_pointer(path):
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list):
            current = current[_index(token, len(current), path, allow_end=False)]
        else:
            raise _patch_error(f"doc is missing path: {path}: missing value")
    return current


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _split_pointer(path)
    if not tokens:
        return copy.deepcopy(value)
    parent, last = _parent(doc, tokens, path)
    if isinstance(parent, dict):
        parent[last] = copy.deepcopy(value)
    else:
        parent.insert(_index(last, len(parent), path, allow_end=True), copy.deepcopy(value))
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _split_pointer(path)
    if not tokens:
        raise _patch_error("cannot remove the document root")
    parent, last = _parent(doc, tokens, path)
    if isinstance(parent, dict):
        if last not in parent:
            raise _patch_error(f"remove operation does not apply: doc is missing key: {path}")
        return doc, parent.pop(last)
    return doc, parent.pop(_index(last, len(parent), path, allow_end=False))


def json_patch(doc: Any, operations: Any) -> Any:
    if not isinstance(operations, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    result = copy.deepcopy(doc)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op:
            raise bad_request("invalid JSON patch operation")
        kind = op["op"]
        path = str(op.get("path", ""))
        if kind == "add":
            result = _add(result, path, op.get("value"))
        elif kind == "remove":
            result, _ = _remove(result, path)
        elif kind == "replace":
            _get(result, path)  # must exist
            result, _ = _remove(result, path) if path else (result, None)
            result = _add(result, path, op.get("value"))
        elif kind == "move":
            result, value = _remove(result, str(op.get("from", "")))
            result = _add(result, path, value)
        elif kind == "copy":
            result = _add(result, path, _get(result, str(op.get("from", ""))))
        elif kind == "test":
            if _get(result, path) != op.get("value"):
                raise _patch_error(f"testing value {path} failed: test failed")
        else:
            raise bad_request(f"Unexpected kind: {kind}")
    return result
