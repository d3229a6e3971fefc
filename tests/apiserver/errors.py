"""`Status` bodies and field errors shaped like the real API server's.

The shapes follow k8s.io/apimachinery/pkg/api/errors (StatusError constructors) and
k8s.io/apimachinery/pkg/util/validation/field (ErrorList formatting), so client code that parses
`reason`, `details.causes` or the message text sees what a real cluster would send.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

# HTTP code -> metav1.StatusReason used by the real server for that code.
REASON_FOR_CODE: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def go_quote(value: str) -> str:
    """Go's %q for the strings we print (JSON string escaping is close enough)."""
    return json.dumps(value, ensure_ascii=False)


def format_value(value: Any) -> str:
    """How field.Error prints a bad value: strings quoted, numbers/bools bare, null as "null"."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_quote(json.dumps(value, sort_keys=True, separators=(",", ":")))


@dataclass(frozen=True)
class FieldError:
    """One entry of a field.ErrorList; `body` is field.Error.ErrorBody()."""

    reason: str
    field: str
    body: str

    def cause(self) -> JSON:
        return {"reason": self.reason, "message": self.body, "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.body}" if self.field else self.body


def _with_detail(head: str, detail: str) -> str:
    return f"{head}: {detail}" if detail else head


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, _with_detail("Required value", detail))


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("FieldValueInvalid", field, _with_detail(f"Invalid value: {format_value(value)}", detail))


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    body = _with_detail(f"Invalid value: {format_value(value)}", detail)
    return FieldError("FieldValueTypeInvalid", field, body)


def not_supported(field: str, value: Any, valid: Sequence[Any]) -> FieldError:
    choices = ", ".join(format_value(v) for v in valid)
    return FieldError(
        "FieldValueNotSupported",
        field,
        f"Unsupported value: {format_value(value)}: supported values: {choices}",
    )


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, _with_detail("Forbidden", detail))


def too_long(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueTooLong", field, _with_detail("Too long", detail))


def too_many(field: str, actual: int, limit: int) -> FieldError:
    return FieldError("FieldValueTooMany", field, f"Too many: {actual}: must have at most {limit} items")


def aggregate(errors: Sequence[FieldError]) -> str:
    """field.ErrorList.ToAggregate().Error(): one error bare, several in brackets."""
    texts: list[str] = []
    for err in errors:
        text = str(err)
        if text not in texts:
            texts.append(text)
    if len(texts) == 1:
        return texts[0]
    return "[" + ", ".join(texts) + "]"


class ApiError(Exception):
    """An error the server answers with a Status body."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: JSON | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason if reason is not None else REASON_FOR_CODE.get(code, "Unknown")
        self.details = details

    def status(self) -> JSON:
        return failure_status(self.code, self.message, self.reason, self.details)


def _details(name: str = "", group: str = "", kind: str = "", causes: list[JSON] | None = None) -> JSON:
    # StatusDetails fields are all `omitempty`.
    out: JSON = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    if kind:
        out["kind"] = kind
    if causes:
        out["causes"] = causes
    return out


def failure_status(code: int, message: str, reason: str, details: JSON | None = None) -> JSON:
    body: JSON = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        body["reason"] = reason
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def success_status(name: str, group: str, kind: str, uid: str) -> JSON:
    details = _details(name, group, kind)
    details["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


# --- constructors mirroring k8s.io/apimachinery/pkg/api/errors ------------------------------


def not_found(group: str, resource: str, name: str) -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError(404, f'{qualified} "{name}" not found', "NotFound", _details(name, group, resource))


def already_exists(group: str, resource: str, name: str) -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError(
        409,
        f'{qualified} "{name}" already exists',
        "AlreadyExists",
        _details(name, group, resource),
    )


def conflict(group: str, resource: str, name: str, why: str) -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
        "Conflict",
        _details(name, group, resource),
    )


def invalid_object(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> ApiError:
    qualified = f"{kind}.{group}" if group else kind
    causes = [e.cause() for e in errors]
    return ApiError(
        422,
        f'{qualified} "{name}" is invalid: {aggregate(errors)}',
        "Invalid",
        _details(name, group, kind, causes),
    )


def forbidden_request(group: str, resource: str, name: str, why: str) -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    head = f'{qualified} "{name}"' if name else qualified
    details = _details(name, group, resource)
    return ApiError(403, f"{head} is forbidden: {why}", "Forbidden", details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def unsupported_media_type(accepted: Sequence[str]) -> ApiError:
    return ApiError(
        415,
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
        "UnsupportedMediaType",
    )


def method_not_supported(group: str, resource: str) -> ApiError:
    return ApiError(
        405,
        "the server does not allow this method on the requested resource",
        "MethodNotAllowed",
        _details("", group, resource),
    )


def no_such_resource() -> ApiError:
    return ApiError(404, "the server could not find the requested resource", "NotFound", {})


def expired(message: str) -> ApiError:
    return ApiError(410, message, "Expired")


def generic(code: int, message: str, reason: str | None = None) -> ApiError:
    return ApiError(code, message, reason)
