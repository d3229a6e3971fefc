"""Kubernetes strategic merge patch on plain mappings, for TrainJob runtimePatches.

Upstream (`pkg/runtime/core/trainingruntime.go`, `mergeRuntimePatches`) JSON-serialises the typed
JobSet `JobSetSpec` and each runtimePatch's `JobSetSpecPatch`, applies
`strategicpatch.StrategicMergePatch` (k8s.io/apimachinery `pkg/util/strategicpatch/patch.go`) with the
JobSet v1alpha2 `JobSetSpec` Go type as the schema, and decodes the result back into the type
(ENGINE.md §4.2). The Go struct tags `patchStrategy`/`patchMergeKey` decide how each list merges;
`JOBSET_SPEC_SCHEMA` is that table for every path under a JobSetSpec that has a tag.

What this module reproduces of apimachinery's `mergeMap`/`mergeSlice`:
- maps merge key by key; a `null` value deletes the key; other values replace;
- a list without a merge strategy is replaced by the patch's list;
- a list of objects with strategy `merge` merges items by their merge key (an unknown key adds the
  patch item as written); a list of scalars with strategy `merge` becomes the union;
- list order (`normalizeElementOrder`/`mergeSortedSlice`): items named in the patch keep the patch's
  order, items only in the original keep theirs, and an original-only item is placed before a
  patch item only when both stand in the original and it stood earlier. So a patch item new to the
  list never waits behind original-only items;
- the directives `$patch: replace|delete` (on a map or as a list item), `$retainKeys`,
  `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`, with the same errors.
Values are returned as the typed decode sees them: a value taken over from the patch as written
loses its `null`s and `$`-directives, which the Go struct decoding drops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ktrain.engine.gotypes import drop_zero_values
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any, Final

    from ktrain.util.jsondata import Obj


_DIRECTIVE: Final = "$patch"
_REPLACE: Final = "replace"
_DELETE: Final = "delete"
_MERGE: Final = "merge"
_RETAIN_KEYS: Final = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList/"
_SET_ELEMENT_ORDER: Final = "$setElementOrder/"


class StrategicMergeError(ValueError):
    """The patch cannot be applied; apimachinery returns an error for the same input."""


@struct(frozen=True)
class Field:
    """Patch metadata of one struct field (its Go struct tags)."""

    # patchStrategy "merge" on a list: merge items instead of replacing the list.
    merge: bool = False
    # patchMergeKey of a list of objects; empty with merge=True means a set of scalars.
    key: str = ""
    # The struct type of the value (or of the list items), when it has tagged fields itself.
    schema: Schema | None = None


@struct(frozen=True)
class Schema:
    """The fields of one Go struct type that carry patch metadata, by JSON name.

    Fields not listed behave as untagged fields: objects merge recursively, lists are replaced."""

    fields: Mapping[str, Field] = field(default_factory=dict)

    def get(self, name: str) -> Field:
        return self.fields.get(name, _UNTAGGED)


_UNTAGGED: Final = Field()


def _struct(**fields: Field) -> Schema:
    return Schema(fields)


def _of(schema: Schema) -> Field:
    return Field(schema=schema)


def _by(key: str, item: Schema | None = None) -> Field:
    return Field(merge=True, key=key, schema=item)


_SET: Final = Field(merge=True)  # list of scalars tagged patchStrategy=merge: union
_ATOMIC: Final = _UNTAGGED  # listed only to document it: no patch strategy, the list is replaced

# metav1.ObjectMeta (labels/annotations are plain maps: key-by-key merge needs no tag).
_OBJECT_META: Final = _struct(ownerReferences=_by("uid"), finalizers=_SET, managedFields=_ATOMIC)

# core/v1 Container / EphemeralContainer. command, args, envFrom, resizePolicy, restartPolicyRules
# and resources.claims have no strategy (replaced); resources.limits/requests are maps.
_CONTAINER: Final = _struct(
    ports=_by("containerPort"),
    env=_by("name"),
    volumeMounts=_by("mountPath"),
    volumeDevices=_by("devicePath"),
    command=_ATOMIC,
    args=_ATOMIC,
    envFrom=_ATOMIC,
)

# core/v1 Volume: only an ephemeral volume's claim template carries an ObjectMeta.
_VOLUME: Final = _struct(
    ephemeral=_of(_struct(volumeClaimTemplate=_of(_struct(metadata=_of(_OBJECT_META))))),
)

# core/v1 PodSpec. affinity, securityContext, dnsConfig, ... are structs whose lists have no
# strategy (e.g. nodeSelectorTerms, supplementalGroups): they merge as untagged objects.
_POD_SPEC: Final = _struct(
    # "merge,retainKeys": retainKeys only acts through a $retainKeys directive in the patch,
    # so a same-named volume without one gets its fields merged (ENGINE.md §16 item 29).
    volumes=_by("name", _VOLUME),
    initContainers=_by("name", _CONTAINER),
    containers=_by("name", _CONTAINER),
    ephemeralContainers=_by("name", _CONTAINER),
    imagePullSecrets=_by("name"),
    hostAliases=_by("ip"),
    # Go tag key is topologyKey alone (listMapKey also has whenUnsatisfiable; SMP ignores it).
    topologySpreadConstraints=_by("topologyKey"),
    schedulingGates=_by("name"),
    resourceClaims=_by("name"),  # "merge,retainKeys"
    tolerations=_ATOMIC,
    readinessGates=_ATOMIC,
)

_POD_TEMPLATE: Final = _struct(metadata=_of(_OBJECT_META), spec=_of(_POD_SPEC))
# batch/v1 JobTemplateSpec; JobSpec's own lists (podFailurePolicy.rules, ...) have no strategy.
_JOB_TEMPLATE: Final = _struct(metadata=_of(_OBJECT_META), spec=_of(_struct(template=_of(_POD_TEMPLATE))))
# JobSet v1alpha2 ReplicatedJob (v0.12.0 tags replicatedJobs and dependsOn, jobset PR #1185).
_REPLICATED_JOB: Final = _struct(template=_of(_JOB_TEMPLATE), dependsOn=_by("name"))

JOBSET_SPEC_SCHEMA: Final = _struct(
    replicatedJobs=_by("name", _REPLICATED_JOB),
    volumeClaimPolicies=_ATOMIC,
)


def strategic_merge(original: Mapping[str, Any], patch: Mapping[str, Any], schema: Schema = JOBSET_SPEC_SCHEMA) -> Obj:
    """`patch` applied to `original` as a strategic merge patch; neither input is changed."""
    return _merge_map(_plain(original), _plain(patch), schema)


def merge_runtime_patches(jobset_spec: Mapping[str, Any], patch_specs: Sequence[Mapping[str, Any]]) -> Obj:
    """The JobSet spec with each runtimePatch's `trainingRuntimeSpec.template.spec` applied in order.

    Each patch is first reduced to what upstream's typed `JobSetSpecPatch` serialises (`_as_sent`).
    Afterwards replicatedJobs are stably re-sorted by their index in `jobset_spec`. Upstream looks
    the index up in a Go map, so a name the runtime lacks gets the zero value 0 and sorts next to the
    runtime's first replicatedJob rather than at the end."""
    order: dict[Any, int] = {}
    for index, rjob in enumerate(_as_list(jobset_spec.get("replicatedJobs"))):
        if isinstance(rjob, Mapping) and _hashable(rjob.get("name")):
            order[rjob.get("name")] = index
    spec: Obj = _plain(jobset_spec)
    for patch in patch_specs:
        spec = _merge_map(spec, drop_zero_values(_as_sent(patch), "JobSetSpecPatch"), JOBSET_SPEC_SCHEMA)
    rjobs = spec.get("replicatedJobs")
    if isinstance(rjobs, list):
        spec["replicatedJobs"] = sorted(
            rjobs,
            key=lambda rjob: (
                order.get(rjob.get("name"), 0) if isinstance(rjob, dict) and _hashable(rjob.get("name")) else 0
            ),
        )
    return spec


# --- maps ------------------------------------------------------------------------------------


def _merge_map(original: Obj, patch: Obj, schema: Schema | None) -> Obj:
    """apimachinery `mergeMap`. Both arguments are private copies and may be changed."""
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == _REPLACE:
            replacement: Obj = _as_placed({k: v for k, v in patch.items() if k != _DIRECTIVE})
            return replacement
        if directive == _DELETE:
            return {}  # the map becomes empty; the key itself stays
        raise StrategicMergeError(f"Unknown patch type: {directive}")  # "merge" included, as in Go
    _apply_retain_keys(original, patch)
    _apply_element_orders(original, patch, schema)
    for patch_key, value in patch.items():
        key, delete_list = patch_key, False
        if patch_key.startswith(_DELETE_FROM_PRIMITIVE_LIST):
            key, delete_list = patch_key[len(_DELETE_FROM_PRIMITIVE_LIST) :], True
        elif patch_key.startswith("$"):
            continue  # Go copies it over and the typed decode drops it
        if value is None:
            original.pop(key, None)
            continue
        if key not in original:
            # Go quirk kept: a deletion list for an absent list becomes that list.
            original[key] = _as_placed(value)
            continue
        current = original[key]
        meta = schema.get(key) if schema is not None else _UNTAGGED
        if isinstance(current, dict) and isinstance(value, dict):
            original[key] = _merge_map(current, value, meta.schema)
        elif isinstance(current, list) and isinstance(value, list):
            original[key] = _merge_list_field(current, value, meta, delete_list)
        else:
            original[key] = _as_placed(value)
    return original


def _apply_retain_keys(original: Obj, patch: Obj) -> None:
    """`$retainKeys: [...]`: clear the original's other keys; every patched key must be listed."""
    if _RETAIN_KEYS not in patch:
        return
    retained = patch.pop(_RETAIN_KEYS)
    if not isinstance(retained, list):
        raise StrategicMergeError("invalid patch format: $retainKeys must be a list")
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
            continue
        if key not in retained:
            raise StrategicMergeError(f"invalid patch format: {key!r} is patched but not in $retainKeys")
    for key in [k for k in original if k not in retained]:
        del original[key]


def _apply_element_orders(original: Obj, patch: Obj, schema: Schema | None) -> None:
    """apimachinery `mergePatchIntoOriginal`: merge each list named by a `$setElementOrder/<list>`
    directive now, ordered by that directive first, then by the original's order."""
    for directive_key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
        set_order = patch.pop(directive_key)
        if not isinstance(set_order, list):
            raise StrategicMergeError(f"invalid patch format: {directive_key} must be a list")
        key = directive_key[len(_SET_ELEMENT_ORDER) :]
        meta = schema.get(key) if schema is not None else _UNTAGGED
        in_original, in_patch = key in original, key in patch
        original_list = original.get(key) if in_original else []
        patch_list = patch.get(key) if in_patch else []
        if not isinstance(original_list, list) or not isinstance(patch_list, list):
            raise StrategicMergeError(f"{key}: $setElementOrder needs a list on both sides")
        _check_set_order(patch_list, set_order, meta.key)
        if in_original and in_patch:
            merged = _merge_list_field(original_list, patch_list, meta, False)
        elif in_patch:
            merged = _as_placed(patch_list)
        elif in_original:
            merged = original_list
        else:
            continue
        kind = _element_kind([*original_list, *patch_list])
        patch_items, server_only = _partition(merged, set_order, meta.key)
        original[key] = _normalize_element_order(patch_items, server_only, set_order, original_list, meta.key, kind)
        patch.pop(key, None)


def _check_set_order(patch_list: list[Any], set_order: list[Any], merge_key: str) -> None:
    """apimachinery `validatePatchWithSetOrderList`: the patch list's items must appear in the
    `$setElementOrder` list, in the same relative order."""
    if not patch_list or not set_order:
        return
    items = patch_list
    if merge_key:
        items = [p for p in patch_list if not (isinstance(p, dict) and p.get(_DIRECTIVE) == _DELETE)]
    i = j = 0
    while i < len(items) and j < len(set_order):
        if isinstance(items[i], dict) and _DIRECTIVE in items[i]:
            i += 1
            continue
        if _key_equal(items[i], set_order[j], merge_key):
            i += 1
        j += 1
    if i < len(items):
        raise StrategicMergeError(
            f"The order in patch list {patch_list} doesn't match $setElementOrder list {set_order}"
        )


# --- lists -----------------------------------------------------------------------------------


def _merge_list_field(original: list[Any], patch: list[Any], meta: Field, delete_list: bool) -> list[Any]:
    """apimachinery `mergeSliceHandler`: without strategy `merge` the patch list replaces the list."""
    if not meta.merge:
        replacement: list[Any] = _as_placed(patch)
        return replacement
    return _merge_slice(original, patch, meta, delete_list)


def _merge_slice(original: list[Any], patch: list[Any], meta: Field, delete_list: bool) -> list[Any]:
    """apimachinery `mergeSlice`."""
    if not original and not patch:
        return original
    kind = _element_kind([*original, *patch])
    merge_key = meta.key
    if kind != "map":
        if delete_list:
            return [v for v in original if not any(_same(v, d) for d in patch)]
        merged = _dedupe([*original, *patch])
    else:
        if not merge_key:
            raise StrategicMergeError("cannot merge lists without merge key for type map")
        original, patch = _special_elements(original, patch, merge_key)
        merged = _merge_by_key(original, patch, merge_key, meta.schema)
    patch_items, server_only = _partition(merged, patch, merge_key)
    return _normalize_element_order(patch_items, server_only, patch, original, merge_key, kind)


def _special_elements(original: list[Any], patch: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """apimachinery `mergeSliceWithSpecialElements`: `{$patch: delete, <key>: v}` removes the
    original items with that key; a `{$patch: replace}` item makes the other items the whole list."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in item:
                raise StrategicMergeError(f"map: {item} does not contain declared merge key: {merge_key}")
            original = [o for o in original if not (merge_key in o and _same(o[merge_key], item[merge_key]))]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise StrategicMergeError("merging lists cannot yet be specified in the patch")
        else:
            raise StrategicMergeError(f"Unknown patch type: {directive}")
    if replace:
        return _as_placed(plain), []
    return original, plain


def _merge_by_key(original: list[Obj], patch: list[Obj], merge_key: str, item_schema: Schema | None) -> list[Obj]:
    """apimachinery `mergeSliceWithoutSpecialElements`: merge into the first item with the same key,
    or add the patch item as written."""
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise StrategicMergeError(f"map: {item} does not contain declared merge key: {merge_key}")
        for index, existing in enumerate(merged):
            if merge_key in existing and _same(existing[merge_key], item[merge_key]):
                merged[index] = _merge_map(existing, item, item_schema)
                break
        else:
            merged.append(_as_placed(item))
    return merged


def _partition(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """Split `merged` into the items named in `by` and the others (original-only), order kept."""
    named: list[Any] = []
    others: list[Any] = []
    for item in merged:
        if merge_key:
            if not isinstance(item, dict) or merge_key not in item:
                raise StrategicMergeError(f"map: {item} does not contain declared merge key: {merge_key}")
            found = any(isinstance(b, dict) and merge_key in b and _same(b[merge_key], item[merge_key]) for b in by)
        else:
            if isinstance(item, (dict, list)):
                raise StrategicMergeError(f"cannot order {item!r} without a merge key")
            found = any(_same(b, item) for b in by)
        (named if found else others).append(item)
    return named, others


def _normalize_element_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: str,
) -> list[Any]:
    """apimachinery `normalizeElementOrder`."""
    patch_items = _normalize_slice_order(patch_items, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted(server_only, patch_items, server_order, merge_key, kind)


def _normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """apimachinery `normalizeSliceOrder`: stable sort by position in `order`; deletion items last."""
    to_delete: list[Any] = []
    if kind == "map":
        for item in [*to_sort, *order]:
            if not isinstance(item, dict) or merge_key not in item:
                raise StrategicMergeError(f"map: {item} does not contain declared merge key: {merge_key}")
        to_delete = [item for item in to_sort if item.get(_DIRECTIVE) == _DELETE]
        to_sort = [item for item in to_sort if item.get(_DIRECTIVE) != _DELETE]
    # On the merge's own paths every item is in `order`; anything else (-1) goes first, stably.
    ordered = sorted(to_sort, key=lambda item: _index(order, item, merge_key, kind))
    return ordered + to_delete


def _merge_sorted(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """apimachinery `mergeSortedSlice`: interleave original-only items (`left`) into the patch items
    (`right`). A left item goes first only when both items stand in the original and it is earlier."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], merge_key, kind)
            ri = _index(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _index(items: list[Any], wanted: Any, merge_key: str, kind: str) -> int:
    """apimachinery `index`: position of the first item with the same merge-key value (or the same
    scalar), -1 if none."""

    def value(item: Any) -> Any:
        if kind == "map":
            return item.get(merge_key) if isinstance(item, dict) else None
        return item

    target = value(wanted)
    for position, item in enumerate(items):
        if _same(value(item), target):
            return position
    return -1


# --- values ----------------------------------------------------------------------------------


def _element_kind(items: list[Any]) -> str:
    """apimachinery `sliceElementType`: "map" or a scalar kind; all items must share it."""
    kinds = {_kind(item) for item in items}
    if not kinds:
        raise StrategicMergeError("no elements in any of the given slices")
    if "list" in kinds:
        raise StrategicMergeError("lists of lists are not supported")
    if len(kinds) > 1:
        raise StrategicMergeError(f"list element types are not identical: {items}")
    return kinds.pop()


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"  # JSON numbers are all float64 in Go
    if value is None:
        return "null"
    return "string"


def _same(a: Any, b: Any) -> bool:
    """Go `==` on JSON-decoded values: 1 == 1.0, but True != 1 and "1" != 1."""
    return _kind(a) == _kind(b) and a == b


def _key_equal(left: Any, right: Any, merge_key: str) -> bool:
    """apimachinery `mergeKeyValueEqual`."""
    if not merge_key:
        return _same(left, right)
    if not isinstance(left, dict) or not isinstance(right, dict) or merge_key not in left or merge_key not in right:
        raise StrategicMergeError(f"map does not contain declared merge key: {merge_key}")
    return _same(left[merge_key], right[merge_key])


def _dedupe(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if not any(_same(item, seen) for seen in out):
            out.append(item)
    return out


def _as_placed(value: Any) -> Any:
    """A patch value taken over as written, as the Go typed decode sees it: no nulls in objects and
    no `$` directive keys (unknown to every struct)."""
    if isinstance(value, dict):
        return {k: _as_placed(v) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [_as_placed(v) for v in value]
    return value


def _as_sent(value: Any) -> Any:
    """A runtimePatch spec as upstream serialises its typed `JobSetSpecPatch`: the CRD prunes `$`
    keys, a null is a nil field, and every list field is `omitempty`, so `[]` is not sent either.
    (Zero strings/booleans/numbers of non-pointer `omitempty` fields: `gotypes.drop_zero_values`.)"""
    if isinstance(value, Mapping):
        out: Obj = {}
        for key, item in value.items():
            if item is None or str(key).startswith("$") or (isinstance(item, list) and not item):
                continue
            out[str(key)] = _as_sent(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_as_sent(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """A deep copy made of dicts and lists only (YAML loaders hand out subclasses)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _hashable(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []
