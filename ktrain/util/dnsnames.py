"""The name formats of k8s.io/apimachinery/pkg/util/validation, as plain string checks.

Checked as Go's regexp reads their patterns (`$` is the end of the text: a trailing newline is not
part of a name; Python's `re` `$` would let `abc\\n` pass) and without compiling a regular
expression: the render path and the cluster commands both check names, and `re` is start-up cost.
"""

from __future__ import annotations

_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_LABEL_CHARS = _LOWER_ALNUM | {"-"}


def is_dns1123_label(value: str) -> bool:
    """`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, the whole of `value`."""
    return bool(value) and value[0] in _LOWER_ALNUM and value[-1] in _LOWER_ALNUM and _LABEL_CHARS.issuperset(value)


def is_dns1035_label(value: str) -> bool:
    """`[a-z]([-a-z0-9]*[a-z0-9])?`, the whole of `value`."""
    return is_dns1123_label(value) and "a" <= value[0] <= "z"


def is_dns1123_subdomain(value: str) -> bool:
    """`[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, the whole of `value`:
    DNS-1123 labels joined by dots."""
    return all(map(is_dns1123_label, value.split(".")))
