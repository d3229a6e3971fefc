"""The API server's field errors, worded as apimachinery words them: DNS names, bounds, invalid
values, string maps, domain-prefixed paths. Shared by the schema and webhook checks
(`ktrain.engine.validation`) and the JobSet plugin's admission checks."""

from __future__ import annotations

from ktrain.api.base import openapi_type
from ktrain.errors import FieldError
from ktrain.util.dnsnames import is_dns1035_label, is_dns1123_label, is_dns1123_subdomain
from ktrain.util.jsondata import quote

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


def matches(pattern: str, value: str) -> bool:
    import re  # compiled (and cached by re) only where such a field is set

    return re.match(pattern, value) is not None


DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
    "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
HTTP_PATH_MSG = "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"


def dns1035_label_errors(value: str) -> list[str]:
    """k8s `validation.IsDNS1035Label` messages."""
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not is_dns1035_label(value):
        errors.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
            "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return errors


DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def dns1123_label_errors(value: str) -> list[str]:
    """k8s `validation.IsDNS1123Label` messages (namespaces)."""
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not is_dns1123_label(value):
        errors.append(DNS1123_LABEL_MSG)
    return errors


def dns1123_subdomain_errors(value: str) -> list[str]:
    """k8s `validation.IsDNS1123Subdomain` messages (object names: Secrets, runtimes, ...)."""
    errors = []
    if len(value) > 253:
        errors.append("must be no more than 253 characters")
    if not is_dns1123_subdomain(value):
        errors.append(DNS1123_SUBDOMAIN_MSG)
    return errors


def name_errors(path: str, value: str | None, check: Any) -> list[FieldError]:
    """apimachinery's field errors for a name or namespace (`check` gives its messages)."""
    if not value:
        return []
    return [invalid(path, value[:300], message) for message in check(value)]


def show(value: Any) -> str:
    if isinstance(value, str) and len(value) > 256:  # a hostile value is not echoed whole
        value = value[:256] + "...(truncated)"
    if isinstance(value, (list, dict)):
        try:
            text = str(value)
        except ValueError:  # holds an integer too long to print
            return f"<a {type(value).__name__} too large to print>"
        return text if len(text) <= 300 else text[:300] + "...(truncated)"
    if isinstance(value, int) and not isinstance(value, bool):
        from ktrain.engine.shapes import int_text

        return int_text(value)
    return quote(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {show(value)}: {detail}")


def minimum(path: str, value: int | None, minimum: int) -> list[FieldError]:
    if value is not None and value < minimum:
        return [invalid(path, value, f"{path} in body should be greater than or equal to {minimum}")]
    return []


def max_items(path: str, items: list[Any] | None, limit: int) -> list[FieldError]:
    if items is not None and len(items) > limit:
        return [FieldError(path, f"Too many: {len(items)}: must have at most {limit} items", kind="TooMany")]
    return []


def max_length(path: str, value: str | None, limit: int) -> list[FieldError]:
    if value is not None and len(value) > limit:
        return [FieldError(path, f"Too long: may not be more than {limit} bytes", kind="TooLong")]
    return []


def unique_names(path: str, items: list[Any] | None, key: str = "name") -> list[FieldError]:
    seen: set[Any] = set()
    errors = []
    for i, item in enumerate(items or []):
        value = getattr(item, key, None) if not isinstance(item, dict) else item.get(key)
        if value in seen:
            errors.append(FieldError(f"{path}[{i}]", f"Duplicate value: {show({key: value})}", kind="Duplicate"))
        seen.add(value)
    return errors


def int_fields(fields: list[tuple[str, Any, int]]) -> list[FieldError]:
    from ktrain.engine.shapes import int_range_errors

    return [e for path, value, bits in fields if isinstance(value, int) for e in int_range_errors(path, value, bits)]


STRING_MAPS = ("labels", "annotations", "nodeSelector")


def string_map_errors(path: str, value: Any) -> list[FieldError]:
    """map[string]string fields (labels, annotations, nodeSelector): a YAML `true` or `8080` is not a
    string, and the API server says so (quote such values)."""
    if not isinstance(value, dict):
        return []
    errors = []
    for key, item in value.items():
        if not isinstance(item, str):
            got = openapi_type(item)
            errors.append(invalid(f"{path}.{key}", got, f'{path}.{key} in body must be of type string: "{got}"'))
    return errors


def validate_domain_prefixed_path(path: str, value: str) -> list[FieldError]:
    """k8s `validation.IsDomainPrefixedPath`."""
    if not value:
        return [FieldError(path, "Required value", kind="Required")]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errors = []
    if len(host) > 253:
        errors.append(invalid(path, host, "must be no more than 253 characters"))
    if not is_dns1123_subdomain(host):
        errors.append(invalid(path, host, DNS1123_SUBDOMAIN_MSG))
    if not matches(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$", rest):
        errors.append(invalid(path, rest, HTTP_PATH_MSG))
    return errors
