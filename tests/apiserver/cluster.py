"""In-memory cluster state and the REST semantics of each verb, independent of HTTP."""

from __future__ import annotations

import base64
import builtins
import copy
import datetime as dt
import json
import random
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import fields, jobset_admission
from .errors import (
    ApiError,
    FieldError,
    already_exists,
    bad_request,
    conflict,
    forbidden,
    invalid_object,
    no_such_resource,
    not_found,
    not_supported,
    required,
    success_status,
    unsupported_media_type,
)
from .patches import json_patch, merge_patch, strategic_merge_patch
from .resources import (
    BUILTIN_TYPES,
    CONFIGMAPS,
    CRD_SETS,
    CRDS,
    NAMESPACES,
    PODS,
    SECRETS,
    ResourceType,
    crd_object,
)
from .schema import CrdSchema, crd_schema, load_crd
from .validation import check_string_map, normalise_secret, validate_cel, validate_kind, validate_metadata

JSON = dict[str, Any]
ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"
# Metadata the server owns: dropped from create requests, carried over on updates.
_SERVER_SET_META = (
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "managedFields",
    "selfLink",
)
_PRESERVED_META = (
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "resourceVersion",
)


def rfc3339(moment: dt.datetime | None = None) -> str:
    moment = moment or dt.datetime.now(dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_nano(moment: dt.datetime) -> str:
    """Go's RFC3339Nano: fractional seconds without trailing zeros."""
    moment = moment.astimezone(dt.timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return f"{text}.{fraction}Z" if fraction else f"{text}Z"


@dataclass(frozen=True)
class Change:
    """One entry of the watch history."""

    rv: int
    type: str  # ADDED, MODIFIED or DELETED
    rtype: ResourceType
    namespace: str
    old: JSON | None
    new: JSON


@dataclass(frozen=True)
class LogLine:
    time: dt.datetime
    text: str


@dataclass
class WriteResult:
    obj: JSON
    created: bool = False
    warnings: tuple[str, ...] = ()


class Cluster:
    def __init__(
        self,
        crd_sets: Iterable[str],
        upstream_dir: Path | None,
        validate_schemas: bool = True,
        strict_namespaces: bool = True,
        namespaces: Sequence[str] = DEFAULT_NAMESPACES,
        full_crd_schemas: bool = True,
        jobset_webhooks: bool = True,
    ) -> None:
        # tests/conftest.py hears this: a test starting the double must be marked `double`, so that
        # CI also runs it without ../shared (whose CRD schemas the double uses when present).
        sys.audit("ktrain.tests.apiserver_double")
        self.lock = threading.RLock()
        # JobSet's webhooks and CEL transition rules (jobset_admission), when JobSets are served.
        self.jobset_webhooks = jobset_webhooks
        # Validating webhooks a test adds: each is called as hook(kind, obj, old) on a create or update
        # that passed the schema and raises an ApiError to deny it (a TrainJob webhook, ...).
        self.admission_hooks: list[Callable[[str, JSON, JSON | None], None]] = []
        self.changed = threading.Condition(self.lock)
        self.closing = False
        self.rv = 0
        self.compacted_rv = 0
        self.history: list[Change] = []
        self.strict_namespaces = strict_namespaces
        present = upstream_dir is not None and upstream_dir.is_dir()
        self.upstream_dir = upstream_dir if present else None
        self.validate_schemas = validate_schemas and self.upstream_dir is not None
        self.types: dict[tuple[str, str], ResourceType] = {rt.key: rt for rt in BUILTIN_TYPES}
        for name in sorted(crd_sets):
            for rt in CRD_SETS[name]:
                self.types[rt.key] = rt
        self.store: dict[tuple[str, str], dict[ObjectKey, JSON]] = {k: {} for k in self.types}
        self.logs: dict[tuple[str, str, str, bool], list[LogLine]] = {}
        for ns in namespaces:
            self.put(NAMESPACES, {"metadata": {"name": ns}})
        for rt in self.custom_types():
            doc = self._crd_doc(rt) if full_crd_schemas else None
            crd = crd_object(rt, doc, rfc3339(), str(uuid.uuid4()))
            # CRDs are read-only here, so the (large, shared) upstream spec is stored uncopied;
            # every read deep-copies.
            with self.lock:
                self._write(CRDS, crd, None, copy_result=False)

    # -- type lookup -----------------------------------------------------------------------

    def custom_types(self) -> builtins.list[ResourceType]:
        return [rt for rt in self.types.values() if rt.custom]

    def served_groups(self) -> dict[str, str]:
        """group -> version for every non-core group."""
        out: dict[str, str] = {}
        for rt in self.types.values():
            if rt.group:
                out.setdefault(rt.group, rt.version)
        return out

    def types_in(self, group: str, version: str) -> builtins.list[ResourceType]:
        return [rt for rt in self.types.values() if rt.group == group and rt.version == version]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType:
        rt = self.types.get((group, plural))
        if rt is None or rt.version != version:
            raise no_such_resource()
        return rt

    def resolve(self, resource: str, group: str | None = None) -> ResourceType:
        """Find a served type by plural, singular, kind, short name or `plural.group`."""
        wanted = resource.lower()
        matches = [rt for rt in self.types.values() if wanted in rt.aliases() and (group is None or rt.group == group)]
        if not matches:
            raise KeyError(f"no served resource matches {resource!r} (group={group!r})")
        if len(matches) > 1:
            options = ", ".join(sorted(rt.group_resource for rt in matches))
            raise ValueError(f"{resource!r} is ambiguous ({options}); pass group= or plural.group")
        return matches[0]

    def _crd_doc(self, rt: ResourceType) -> JSON | None:
        if self.upstream_dir is None or rt.crd_file is None:
            return None
        path = self.upstream_dir / rt.crd_file
        return load_crd(path) if path.is_file() else None

    def schema_for(self, rt: ResourceType) -> CrdSchema | None:
        if not self.validate_schemas or self.upstream_dir is None or rt.crd_file is None:
            return None
        path = self.upstream_dir / rt.crd_file
        return crd_schema(path, rt.version) if path.is_file() else None

    # -- raw storage -----------------------------------------------------------------------

    def _next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def _record(self, kind: str, rt: ResourceType, old: JSON | None, new: JSON) -> None:
        ns = (new.get("metadata") or {}).get("namespace", "") if rt.namespaced else ""
        self.history.append(Change(self.rv, kind, rt, ns, old, new))
        self.changed.notify_all()

    def _key(self, rt: ResourceType, namespace: str | None, name: str) -> ObjectKey:
        return ((namespace or "") if rt.namespaced else "", name)

    def _stored(self, rt: ResourceType, namespace: str | None, name: str) -> JSON | None:
        return self.store[rt.key].get(self._key(rt, namespace, name))

    def _write(self, rt: ResourceType, obj: JSON, old: JSON | None, copy_result: bool = True) -> JSON:
        obj["metadata"]["resourceVersion"] = self._next_rv()
        meta = obj["metadata"]
        self.store[rt.key][self._key(rt, meta.get("namespace"), meta["name"])] = obj
        self._record("ADDED" if old is None else "MODIFIED", rt, old, obj)
        return copy.deepcopy(obj) if copy_result else obj

    def _remove(self, rt: ResourceType, obj: JSON) -> JSON:
        meta = obj["metadata"]
        self.store[rt.key].pop(self._key(rt, meta.get("namespace"), meta["name"]), None)
        gone = copy.deepcopy(obj)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        self._record("DELETED", rt, obj, gone)
        return gone

    def put(self, rt: ResourceType, obj: JSON, manager: str = "apiserver-double") -> JSON:
        """Store `obj` as given (create or replace), filling in server-set metadata only."""
        with self.lock:
            obj = copy.deepcopy(obj)
            obj.setdefault("apiVersion", rt.api_version)
            obj.setdefault("kind", rt.kind)
            meta = obj.setdefault("metadata", {})
            if rt.namespaced:
                meta.setdefault("namespace", "default")
            else:
                meta.pop("namespace", None)
            old = self._stored(rt, meta.get("namespace"), meta["name"])
            meta.setdefault("uid", old["metadata"]["uid"] if old else str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", old["metadata"]["creationTimestamp"] if old else rfc3339())
            if rt.has_generation:
                meta.setdefault("generation", 1)
            if rt is NAMESPACES:
                obj.setdefault("spec", {"finalizers": ["kubernetes"]})
                obj.setdefault("status", {"phase": "Active"})
            if manager and "managedFields" not in meta:
                fields.record_update(old, obj, manager, rt.api_version, rfc3339())
            return self._write(rt, obj, old)

    # -- reads -----------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> JSON:
        with self.lock:
            obj = self._stored(rt, namespace, name)
            if obj is None:
                raise not_found(rt.group, rt.plural, name)
            return copy.deepcopy(obj)

    def items(self, rt: ResourceType, namespace: str | None, accept: Callable[[JSON], bool]) -> builtins.list[JSON]:
        with self.lock:
            found = [
                obj
                for (ns, _), obj in sorted(self.store[rt.key].items())
                if (namespace is None or not rt.namespaced or ns == namespace) and accept(obj)
            ]
            return copy.deepcopy(found)

    def list(
        self,
        rt: ResourceType,
        namespace: str | None,
        accept: Callable[[JSON], bool],
        limit: int = 0,
        continue_token: str = "",
    ) -> JSON:
        with self.lock:
            items = self.items(rt, namespace, accept)
            rv = str(self.rv)
        if continue_token:
            try:
                after = tuple(json.loads(base64.b64decode(continue_token))["after"])
            except (ValueError, KeyError, TypeError):
                raise bad_request("continue key is not valid: invalid continue token") from None
            items = [o for o in items if _sort_key(o) > after]
        metadata: JSON = {"resourceVersion": rv}
        if limit and len(items) > limit:
            remaining = len(items) - limit
            items = items[:limit]
            token = json.dumps({"after": list(_sort_key(items[-1]))}).encode()
            metadata["continue"] = base64.b64encode(token).decode()
            metadata["remainingItemCount"] = remaining
        if not rt.custom:
            # Typed lists leave TypeMeta empty on their items.
            for item in items:
                item.pop("apiVersion", None)
                item.pop("kind", None)
        return {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": metadata,
            "items": items,
        }

    def changes_after(self, rv: int) -> builtins.list[Change]:
        with self.lock:
            if rv < self.compacted_rv:
                raise ApiError(410, f"too old resource version: {rv} ({self.compacted_rv})", "Expired")
            return [c for c in self.history if c.rv > rv]

    def compact(self) -> None:
        """Forget the watch history, so watches from older resourceVersions get 410 Gone."""
        with self.lock:
            self.compacted_rv = self.rv + 1
            self.history.clear()

    # -- shared write pipeline ----------------------------------------------------------------

    def _decode(self, rt: ResourceType, body: Any) -> JSON:
        if not isinstance(body, dict):
            raise bad_request(f"the object provided is unrecognized (must be of type {rt.kind})")
        obj = copy.deepcopy(body)
        if rt.custom:
            if not obj.get("kind"):
                raise bad_request(f"Object 'Kind' is missing in '{json.dumps(body)}'")
            if not obj.get("apiVersion"):
                raise bad_request(f"Object 'apiVersion' is missing in '{json.dumps(body)}'")
        obj.setdefault("apiVersion", rt.api_version)
        obj.setdefault("kind", rt.kind)
        if obj["kind"] != rt.kind or obj["apiVersion"] != rt.api_version:
            raise bad_request(
                f"the API version in the data ({obj['apiVersion']}) does not match the expected "
                f"API version ({rt.api_version})"
                if obj["apiVersion"] != rt.api_version
                else f'{obj["kind"]} in version "{rt.version}" cannot be handled as a {rt.kind}'
            )
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}')
        return obj

    def _check_namespace(self, rt: ResourceType, obj: JSON, namespace: str | None) -> None:
        meta = obj["metadata"]
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and namespace and body_ns != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace or body_ns or "default"
        else:
            meta.pop("namespace", None)

    def _require_namespace(self, rt: ResourceType, namespace: str) -> None:
        if rt.namespaced and self.strict_namespaces:
            ns = self._stored(NAMESPACES, None, namespace)
            if ns is None:
                raise not_found("", "namespaces", namespace)

    def _prepare(
        self, rt: ResourceType, obj: JSON, old: JSON | None, field_validation: str
    ) -> tuple[JSON, builtins.list[str]]:
        """Normalise, prune/default and validate `obj`; returns it with unknown-field warnings."""
        warnings: list[str] = []
        if rt is SECRETS:
            normalise_secret(obj)
        if old is None and self._jobset_admission(rt):
            jobset_admission.default_on_create(obj)  # the mutating webhook: create only
        if rt in (CONFIGMAPS, SECRETS):
            for field in ("data", "binaryData"):
                error = check_string_map(rt.kind, obj, field)
                if error is not None:
                    raise error
        schema = self.schema_for(rt)
        if schema is not None:
            obj, unknown = schema.normalise(obj)
            if unknown and field_validation == "Strict":
                detail = ", ".join(f'unknown field "{p}"' for p in unknown)
                raise bad_request(f"strict decoding error: {detail}")
            if field_validation != "Ignore":
                warnings.extend(f'unknown field "{p}"' for p in unknown)
        errors: list[FieldError] = list(validate_metadata(rt, obj))
        errors.extend(validate_kind(rt, obj, old))
        if schema is not None:
            errors.extend(schema.validate(obj))
        errors.extend(validate_cel(rt, obj))
        if errors:
            raise invalid_object(rt.group, rt.kind, obj["metadata"].get("name", ""), errors)
        if old is None and self._jobset_admission(rt):
            refused = jobset_admission.webhook_create_errors(obj)  # the validating webhook, after the schema
            if refused:
                raise jobset_admission.webhook_create_denied(refused)
        for hook in self.admission_hooks:  # a test's own validating webhooks
            hook(rt.kind, obj, old)
        return obj, warnings

    def _jobset_admission(self, rt: ResourceType) -> bool:
        return self.jobset_webhooks and rt.group == "jobset.x-k8s.io" and rt.kind == "JobSet"

    def _spec_part(self, rt: ResourceType, obj: JSON) -> JSON:
        skip = {"metadata", "status"} if rt.status_subresource else {"metadata"}
        return {k: v for k, v in obj.items() if k not in skip}

    # -- create ------------------------------------------------------------------------------

    def create(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: Any,
        manager: str,
        dry_run: bool = False,
        field_validation: str = "",
    ) -> WriteResult:
        with self.lock:
            obj = self._decode(rt, body)
            self._check_namespace(rt, obj, namespace)
            meta = obj["metadata"]
            if meta.get("resourceVersion"):
                raise bad_request("resourceVersion should not be set on objects to be created")
            for key in _SERVER_SET_META:
                meta.pop(key, None)
            if not meta.get("name") and meta.get("generateName"):
                suffix = "".join(random.choice(_GENERATE_CHARS) for _ in range(5))
                meta["name"] = str(meta["generateName"])[:58] + suffix
            if rt.namespaced:
                self._require_namespace(rt, meta["namespace"])
            self._reset_status_on_create(rt, obj)
            obj, warnings = self._prepare(rt, obj, None, field_validation)
            fields.record_update(None, obj, manager, rt.api_version, rfc3339())
            return self._insert(rt, obj, dry_run, warnings)

    def _reset_status_on_create(self, rt: ResourceType, obj: JSON) -> None:
        if rt.custom and rt.status_subresource:
            obj.pop("status", None)
        elif rt is PODS:
            obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        elif rt is NAMESPACES:
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj["status"] = {"phase": "Active"}

    def _insert(self, rt: ResourceType, obj: JSON, dry_run: bool, warnings: builtins.list[str]) -> WriteResult:
        meta = obj["metadata"]
        if self._stored(rt, meta.get("namespace"), meta["name"]) is not None:
            raise already_exists(rt.group, rt.plural, meta["name"])
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = rfc3339()
        if rt.has_generation:
            meta["generation"] = 1
        if dry_run:
            return WriteResult(copy.deepcopy(obj), True, tuple(warnings))
        return WriteResult(self._write(rt, obj, None), True, tuple(warnings))

    # -- update / patch / apply ------------------------------------------------------------------

    def update(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        manager: str,
        dry_run: bool = False,
        field_validation: str = "",
        subresource: str = "",
    ) -> WriteResult:
        with self.lock:
            obj = self._decode(rt, body)
            body_name = obj["metadata"].get("name")
            if body_name != name:
                raise _name_mismatch(body_name or "", name)
            self._check_namespace(rt, obj, namespace)
            old = self._stored(rt, namespace, name)
            if old is None:
                raise not_found(rt.group, rt.plural, name)
            wanted_rv = obj["metadata"].get("resourceVersion")
            if wanted_rv:
                self._check_rv(rt, old, wanted_rv)
            elif rt.custom:
                error = FieldError(
                    "FieldValueInvalid",
                    "metadata.resourceVersion",
                    "Invalid value: 0x0: must be specified for an update",
                )
                raise invalid_object(rt.group, rt.kind, name, [error])
            new = self._merge_subresource(rt, old, obj, subresource)
            return self._finish(rt, old, new, manager, dry_run, field_validation, subresource)

    def _check_rv(self, rt: ResourceType, old: JSON, wanted: str) -> None:
        if wanted != old["metadata"]["resourceVersion"]:
            raise conflict(
                rt.group,
                rt.plural,
                old["metadata"]["name"],
                "the object has been modified; please apply your changes to the latest version and try again",
            )

    def _merge_subresource(self, rt: ResourceType, old: JSON, new: JSON, subresource: str) -> JSON:
        """Writes to /status change only status; writes to the main resource keep status."""
        if subresource == "status":
            merged = copy.deepcopy(old)
            if "status" in new:
                merged["status"] = copy.deepcopy(new["status"])
            else:
                merged.pop("status", None)
            return merged
        if rt.status_subresource:
            new = copy.deepcopy(new)
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        return new

    def _finish(
        self,
        rt: ResourceType,
        old: JSON,
        new: JSON,
        manager: str | None,
        dry_run: bool,
        field_validation: str,
        subresource: str,
    ) -> WriteResult:
        meta = new.setdefault("metadata", {})
        for key in _PRESERVED_META:
            if key in old["metadata"]:
                meta[key] = old["metadata"][key]
            else:
                meta.pop(key, None)
        meta["name"] = old["metadata"]["name"]
        if rt.namespaced:
            meta["namespace"] = old["metadata"]["namespace"]
        new, warnings = self._prepare(rt, new, old, field_validation)
        if self._jobset_admission(rt):
            errors = jobset_admission.transition_errors(old, new)
            if errors:
                raise invalid_object(rt.group, rt.kind, old["metadata"]["name"], errors)
            errors = [] if subresource else jobset_admission.webhook_update_errors(old, new)
            if errors:
                raise jobset_admission.webhook_denied(errors)
        meta = new["metadata"]
        if manager is not None:
            fields.record_update(old, new, manager, rt.api_version, rfc3339(), subresource)
        else:
            _retain_existing_fields(new)
        if rt.has_generation and self._spec_part(rt, old) != self._spec_part(rt, new):
            meta["generation"] = int(old["metadata"].get("generation", 1)) + 1
        if new == old or dry_run:
            return WriteResult(copy.deepcopy(new), False, tuple(warnings))
        return WriteResult(self._write(rt, new, old), False, tuple(warnings))

    def patch(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        raw: bytes,
        manager: str | None,
        user_agent_manager: str,
        force: bool = False,
        dry_run: bool = False,
        field_validation: str = "",
        subresource: str = "",
    ) -> WriteResult:
        patch_type = content_type.split(";")[0].strip().lower()
        # Custom resources have no patch strategy metadata, so no strategic merge.
        strategic = [] if rt.custom else [STRATEGIC_PATCH]
        accepted = [JSON_PATCH, MERGE_PATCH, *strategic, APPLY_PATCH]
        if patch_type not in accepted:
            raise unsupported_media_type(accepted)
        is_apply = patch_type == APPLY_PATCH
        if is_apply and not manager:
            raise invalid_object(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [required("fieldManager", "is required for apply patch")],
            )
        if force and not is_apply:
            raise invalid_object(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [forbidden("force", "may not be specified for non-apply patch")],
            )
        try:
            document = yaml.safe_load(raw) if is_apply else json.loads(raw or b"null")
        except (ValueError, yaml.YAMLError) as exc:
            prefix = "error decoding YAML" if is_apply else "error decoding patch"
            raise bad_request(f"{prefix}: {exc}") from None
        with self.lock:
            old = self._stored(rt, namespace, name)
            if is_apply:
                assert manager
                return self._apply(
                    rt, namespace, name, old, document, manager, force, dry_run, field_validation, subresource
                )
            if old is None:
                raise not_found(rt.group, rt.plural, name)
            if patch_type == JSON_PATCH:
                patched = json_patch(old, document)
            elif patch_type == MERGE_PATCH:
                patched = merge_patch(old, document)
            else:
                patched = strategic_merge_patch(old, document)
            if not isinstance(patched, dict):
                raise bad_request("the patch produced an object that is not a JSON object")
            patched_meta = patched.get("metadata") or {}
            wanted_rv = patched_meta.get("resourceVersion")
            if wanted_rv:
                self._check_rv(rt, old, wanted_rv)
            if patched_meta.get("name", name) != name:
                raise _name_mismatch(str(patched_meta.get("name")), name)
            patched.setdefault("metadata", {})
            new = self._merge_subresource(rt, old, patched, subresource)
            return self._finish(rt, old, new, manager or user_agent_manager, dry_run, field_validation, subresource)

    def _apply(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        old: JSON | None,
        document: Any,
        manager: str,
        force: bool,
        dry_run: bool,
        field_validation: str,
        subresource: str,
    ) -> WriteResult:
        if not isinstance(document, dict):
            raise bad_request("error decoding YAML: the apply configuration must be an object")
        if not document.get("apiVersion") or not document.get("kind"):
            raise bad_request("apiVersion and kind must be set in an apply configuration")
        applied = self._decode(rt, document)
        meta = applied["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise _name_mismatch(meta["name"], name)
        meta["name"] = name
        self._check_namespace(rt, applied, namespace)
        if subresource == "status":
            kept = ("apiVersion", "kind", "metadata", "status")
            applied = {k: v for k, v in applied.items() if k in kept}
            applied["metadata"] = {k: v for k, v in meta.items() if k in ("name", "namespace")}
        elif rt.status_subresource:
            applied.pop("status", None)
        now = rfc3339()
        if old is None:
            if subresource:
                raise not_found(rt.group, rt.plural, name)
            if rt.namespaced:
                self._require_namespace(rt, meta["namespace"])
            merged = fields.apply(None, applied, manager, force, now)
            merged["metadata"]["name"] = name
            if rt.namespaced:
                merged["metadata"]["namespace"] = meta["namespace"]
            self._reset_status_on_create(rt, merged)
            merged, warnings = self._prepare(rt, merged, None, field_validation)
            _retain_existing_fields(merged)
            return self._insert(rt, merged, dry_run, warnings)
        merged = fields.apply(old, applied, manager, force, now, subresource)
        new = self._merge_subresource(rt, old, merged, subresource)
        return self._finish(rt, old, new, None, dry_run, field_validation, subresource)

    # -- delete and garbage collection ---------------------------------------------------------

    def delete(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        propagation: str | None = None,
        dry_run: bool = False,
        preconditions: JSON | None = None,
    ) -> JSON:
        with self.lock:
            old = self._stored(rt, namespace, name)
            if old is None:
                raise not_found(rt.group, rt.plural, name)
            policy = propagation or rt.default_propagation
            if policy not in PROPAGATION_POLICIES:
                raise invalid_object(
                    "meta.k8s.io",
                    "DeleteOptions",
                    "",
                    [not_supported("propagationPolicy", policy, PROPAGATION_POLICIES)],
                )
            pre = preconditions or {}
            meta = old["metadata"]
            if pre.get("uid") and pre["uid"] != meta["uid"]:
                raise conflict(
                    rt.group,
                    rt.plural,
                    name,
                    f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta['uid']}",
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
                raise conflict(
                    rt.group,
                    rt.plural,
                    name,
                    "Precondition failed: ResourceVersion in precondition: "
                    f"{pre['resourceVersion']}, "
                    f"ResourceVersion in object meta: {meta['resourceVersion']}",
                )
            last = copy.deepcopy(old)
            if not dry_run:
                self._delete_tree(rt, old, policy)
            return self._delete_response(rt, last, policy)

    def _delete_response(self, rt: ResourceType, last: JSON, policy: str) -> JSON:
        now = rfc3339()
        if rt.custom or rt is PODS or policy == "Foreground":
            if policy == "Foreground":
                last["metadata"]["deletionTimestamp"] = now
                last["metadata"].setdefault("finalizers", []).append("foregroundDeletion")
            return last
        if rt is NAMESPACES:
            last["metadata"]["deletionTimestamp"] = now
            last["status"] = {"phase": "Terminating"}
            return last
        meta = last["metadata"]
        return success_status(meta["name"], rt.group, rt.plural, meta["uid"])

    def _all_objects(self) -> builtins.list[tuple[ResourceType, JSON]]:
        return [(self.types[key], obj) for key, objs in self.store.items() for obj in list(objs.values())]

    def _uid_exists(self, uid: str) -> bool:
        return any(obj["metadata"].get("uid") == uid for _, obj in self._all_objects())

    def _delete_tree(self, rt: ResourceType, obj: JSON, policy: str) -> None:
        uid = obj["metadata"]["uid"]
        self._remove(rt, obj)
        if rt is NAMESPACES:
            ns = obj["metadata"]["name"]
            for other_rt, other in self._all_objects():
                if other_rt.namespaced and other["metadata"].get("namespace") == ns:
                    self._remove(other_rt, other)
        for dep_rt, dep in self._all_objects():
            refs = dep["metadata"].get("ownerReferences") or []
            if not any(r.get("uid") == uid for r in refs):
                continue
            remaining = [r for r in refs if r.get("uid") != uid]
            live_owners = [r for r in remaining if self._uid_exists(str(r.get("uid")))]
            if policy == "Orphan" or live_owners:
                # The garbage collector drops the reference instead of deleting the dependent.
                updated = copy.deepcopy(dep)
                if remaining:
                    updated["metadata"]["ownerReferences"] = remaining
                else:
                    updated["metadata"].pop("ownerReferences", None)
                self._write(dep_rt, updated, dep)
            else:
                self._delete_tree(dep_rt, dep, policy)

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        accept: Callable[[JSON], bool],
        propagation: str | None = None,
        dry_run: bool = False,
    ) -> JSON:
        with self.lock:
            doomed = self.items(rt, namespace, accept)
            for obj in doomed:
                ns, name = obj["metadata"].get("namespace"), obj["metadata"]["name"]
                # An earlier deletion in this loop may already have collected this one.
                if not dry_run and self._stored(rt, ns, name) is not None:
                    self.delete(rt, ns, name, propagation)
            if rt.custom:
                return {
                    "apiVersion": rt.api_version,
                    "kind": rt.list_kind,
                    "metadata": {"resourceVersion": str(self.rv)},
                    "items": doomed,
                }
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}

    # -- pod logs ------------------------------------------------------------------------------

    def append_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        text: str,
        previous: bool = False,
        time: dt.datetime | None = None,
    ) -> None:
        with self.lock:
            lines = self.logs.setdefault((namespace, pod, container, previous), [])
            moment = time or dt.datetime.now(dt.timezone.utc)
            parts = text.split("\n")
            if parts and parts[-1] == "":
                parts.pop()  # a trailing newline ends the last line rather than starting one
            for part in parts:
                lines.append(LogLine(moment, part))
            self.changed.notify_all()

    def log_lines(self, namespace: str, pod: str, container: str, previous: bool) -> builtins.list[LogLine]:
        with self.lock:
            return list(self.logs.get((namespace, pod, container, previous), []))

    def container_state(self, namespace: str, pod: str, container: str) -> JSON:
        with self.lock:
            obj = self._stored(PODS, namespace, pod)
            if obj is None:
                return {"terminated": {"reason": "PodDeleted"}}
            status = obj.get("status") or {}
            entries = (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
            for entry in entries:
                if entry.get("name") == container:
                    return dict(entry.get("state") or {})
            return {}


def _name_mismatch(body_name: str, url_name: str) -> ApiError:
    return bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({url_name})")


def _sort_key(obj: JSON) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace", "")), str(meta.get("name", "")))


def _retain_existing_fields(obj: JSON) -> None:
    """Drop ownership of fields that pruning removed after an apply."""
    entries = fields.parse_entries(obj)
    present = fields.leaves(obj)
    for entry in entries:
        entry.fields = {p for p in entry.fields if p in present}
    kept = [e.to_json() for e in entries if e.fields]
    if kept:
        obj["metadata"]["managedFields"] = kept
    else:
        obj["metadata"].pop("managedFields", None)
