"""Validation of object metadata and of the built-in kinds the double serves.

Messages follow k8s.io/apimachinery/pkg/util/validation and pkg/apis/core/validation.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from .errors import ApiError, FieldError, bad_request, forbidden, invalid, required, too_long
from .resources import CONFIGMAPS, NAMESPACES, SECRETS, SERVICES, ResourceType

JSON = dict[str, Any]

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_1123_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
# ownerReference field -> the noun its "must not be empty" message uses.
_OWNER_REF_FIELDS = (("apiVersion", "version"), ("kind", "kind"), ("name", "name"), ("uid", "uid"))
MAX_CONFIG_BYTES = 1024 * 1024
MAX_ANNOTATION_BYTES = 256 * 1024


def validate_name(rt: ResourceType, name: str) -> list[FieldError]:
    field = "metadata.name"
    if rt is NAMESPACES:
        pattern, message, limit = _LABEL_1123, LABEL_1123_MSG, 63
    elif rt is SERVICES:
        pattern, message, limit = _LABEL_1035, LABEL_1035_MSG, 63
    else:
        pattern, message, limit = _SUBDOMAIN, SUBDOMAIN_MSG, 253
    errors: list[FieldError] = []
    if len(name) > limit:
        errors.append(invalid(field, name, f"must be no more than {limit} characters"))
    if not pattern.match(name):
        errors.append(invalid(field, name, message))
    return errors


def _qualified_name_errors(field: str, key: str) -> list[FieldError]:
    prefix, _, name = key.rpartition("/")
    errors: list[FieldError] = []
    if "/" in key:
        if not prefix:
            errors.append(invalid(field, key, "prefix part must be non-empty"))
        elif len(prefix) > 253 or not _SUBDOMAIN.match(prefix):
            errors.append(invalid(field, key, "prefix part " + SUBDOMAIN_MSG))
    if not name:
        errors.append(invalid(field, key, "name part must be non-empty"))
    elif len(name) > 63:
        errors.append(invalid(field, key, "name part must be no more than 63 characters"))
    elif not _QUALIFIED_NAME.match(name):
        errors.append(invalid(field, key, QUALIFIED_NAME_MSG))
    return errors


def validate_metadata(rt: ResourceType, obj: JSON) -> list[FieldError]:
    meta = obj.get("metadata") or {}
    errors: list[FieldError] = []
    name = meta.get("name") or ""
    if not name:
        errors.append(required("metadata.name", "name or generateName is required"))
    else:
        errors.extend(validate_name(rt, name))
    labels = meta.get("labels") or {}
    for key, value in labels.items():
        errors.extend(_qualified_name_errors("metadata.labels", key))
        if not isinstance(value, str):
            continue
        if len(value) > 63:
            errors.append(invalid("metadata.labels", value, "must be no more than 63 characters"))
        elif not _LABEL_VALUE.match(value):
            errors.append(invalid("metadata.labels", value, LABEL_VALUE_MSG))
    annotations = meta.get("annotations") or {}
    size = 0
    for key, value in annotations.items():
        errors.extend(_qualified_name_errors("metadata.annotations", key.lower()))
        size += len(key) + len(str(value))
    if size > MAX_ANNOTATION_BYTES:
        limit = f"must have at most {MAX_ANNOTATION_BYTES} bytes"
        errors.append(too_long("metadata.annotations", limit))
    controllers = 0
    for ref in meta.get("ownerReferences") or []:
        for key, what in _OWNER_REF_FIELDS:
            if not ref.get(key):
                errors.append(invalid(f"metadata.ownerReferences.{key}", "", f"{what} must not be empty"))
        if ref.get("controller"):
            controllers += 1
    if controllers > 1:
        errors.append(
            invalid(
                "metadata.ownerReferences",
                "object",
                "Only one reference can have Controller set to true",
            )
        )
    return errors


def normalise_secret(obj: JSON) -> None:
    """Fold stringData into data and check data is base64, as the Secret REST strategy does."""
    data = obj.get("data") or {}
    for key, value in data.items():
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise bad_request(
                f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0 (key {key})'
            ) from None
    string_data = obj.pop("stringData", None) or {}
    if string_data:
        data = dict(data)
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def check_string_map(kind: str, obj: JSON, field: str) -> ApiError | None:
    for _key, value in (obj.get(field) or {}).items():
        if not isinstance(value, str):
            return bad_request(
                f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal '
                f"{type(value).__name__} into Go struct field {kind}.{field} of type string"
            )
    return None


# The TrainJob CRD's rule on status.trainerStatus (manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml,
# `x-kubernetes-validations`; apiextensions-apiserver schema/cel/validation.go reports a failed rule on
# an object as `Invalid value: "object": <message>` at the object's path).
TRAINER_STATUS_RULE = "lastUpdatedTime is required when trainerStatus is present"


def validate_cel(rt: ResourceType, obj: JSON) -> list[FieldError]:
    """The CEL rules the double evaluates after the schema: TrainJob's trainerStatus one."""
    if (rt.group, rt.kind) != ("trainer.kubeflow.org", "TrainJob"):
        return []
    status = obj.get("status")
    trainer_status = status.get("trainerStatus") if isinstance(status, dict) else None
    if isinstance(trainer_status, dict) and "lastUpdatedTime" not in trainer_status:
        body = f'Invalid value: "object": {TRAINER_STATUS_RULE}'
        return [FieldError("FieldValueInvalid", "status.trainerStatus", body)]
    return []


def validate_kind(rt: ResourceType, obj: JSON, old: JSON | None) -> list[FieldError]:
    """Kind-specific checks for ConfigMaps and Secrets (keys, size, immutability)."""
    errors: list[FieldError] = []
    if rt not in (CONFIGMAPS, SECRETS):
        return errors
    size = 0
    for field in ("data", "binaryData"):
        for key, value in (obj.get(field) or {}).items():
            if len(key) > 253 or not _CONFIG_KEY.match(key):
                errors.append(invalid(f"{field}[{key}]", key, CONFIG_KEY_MSG))
            size += len(key) + len(str(value))
    if rt is SECRETS:
        # Secret data is stored decoded; approximate with the base64 length * 3/4.
        size = size * 3 // 4
    if size > MAX_CONFIG_BYTES:
        field = "[]" if rt is CONFIGMAPS else "data"
        errors.append(too_long(field, f"must have at most {MAX_CONFIG_BYTES} bytes"))
    if old is not None and old.get("immutable"):
        for field in ("data", "binaryData"):
            if (old.get(field) or {}) != (obj.get(field) or {}):
                errors.append(forbidden(field, "field is immutable when `immutable` is set"))
        if not obj.get("immutable"):
            errors.append(forbidden("immutable", "field is immutable when `immutable` is set"))
    if rt is SECRETS and old is not None and old.get("type") != obj.get("type"):
        errors.append(invalid("type", obj.get("type"), "field is immutable"))
    return errors
