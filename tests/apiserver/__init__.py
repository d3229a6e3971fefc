"""A Kubernetes API-server double for tests that need a cluster but must not need a real one.

`ApiServerDouble` runs a threaded HTTP server on 127.0.0.1 (random port) that speaks enough of
the Kubernetes REST protocol for the official `kubernetes` Python client to work unmodified:
discovery, CRUD with label/field selectors, merge / strategic / JSON patches, server-side apply
with managedFields and conflicts, dryRun, Status errors shaped like the real ones, ownerReference
garbage collection, watches, pod logs (including `follow` streaming) and events. Custom resources
are validated against the reference CRD schemas under ../shared when that directory exists
(tests that rely on that are marked `shared`; see tests/conftest.py).

Deliberate simplifications: deletion is immediate (no graceful deletion or lingering
finalizers), strategic merge replaces lists, server-side apply treats every list as atomic, and
CEL rules (`x-kubernetes-validations`) are not evaluated, except TrainJob's trainerStatus rule
(`lastUpdatedTime` required, `validation.validate_cel`) and JobSet's `self == oldSelf`
transition rules, which `jobset_admission` keeps as its own code (with or without ../shared) and
applies with JobSet's webhooks (create-time defaults, update immutability).
"""

from .cluster import Cluster
from .errors import ApiError, FieldError
from .resources import CRD_SETS, ResourceType
from .schema import DEFAULT_UPSTREAM
from .server import (
    ApiServerDouble,
    Fault,
    RecordedRequest,
    double_fixture,
    owner_reference,
)

__all__ = [
    "CRD_SETS",
    "DEFAULT_UPSTREAM",
    "ApiError",
    "ApiServerDouble",
    "Cluster",
    "Fault",
    "FieldError",
    "RecordedRequest",
    "ResourceType",
    "double_fixture",
    "owner_reference",
]
