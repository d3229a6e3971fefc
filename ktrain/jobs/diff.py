"""`job diff`'s normalisation, pure: what the server manages left out, Secrets masked as `kubectl
diff` masks them, dependents owned as `job create` stores them."""

from __future__ import annotations

from ktrain.jobs.plan import owner_reference
from ktrain.util.jsondata import Obj, deep_copy

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    pass


# What the server sets and keeps on every object: not part of what was asked for.
SERVER_METADATA = (
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
    "generateName",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
# kubectl's client-side apply bookkeeping: a copy of the object, not a field of it.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
GENERATE_NAME = "ktrain-diff-"  # short: the name-length rules of a JobSet's pods hold for it

# kubectl diff's Secret masks (k8s.io/kubectl/pkg/cmd/diff/diff.go, Masker)
MASK = "***"
MASK_BEFORE = "*** (before)"
MASK_AFTER = "*** (after)"


def stripped(obj: Obj) -> Obj:
    """`obj` without what the server manages (a copy)."""
    out = deep_copy(obj)
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in SERVER_METADATA:
            meta.pop(key, None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED in annotations:
            del annotations[LAST_APPLIED]
            if not annotations:
                del meta["annotations"]
    return out


def mask_secrets(live: Obj | None, merged: Obj | None) -> tuple[Obj | None, Obj | None]:
    """Secret values replaced as `kubectl diff` does: `***` where both sides agree or one side
    has no such key, `*** (before)` / `*** (after)` where they differ."""
    before = dict((live or {}).get("data") or {})
    after = dict((merged or {}).get("data") or {})
    masked_before: dict[str, str] = {}
    masked_after: dict[str, str] = {}
    for key in before:
        if key in after and before[key] != after[key]:
            masked_before[key], masked_after[key] = MASK_BEFORE, MASK_AFTER
        else:
            masked_before[key] = MASK
            if key in after:
                masked_after[key] = MASK
    for key in after:
        masked_after.setdefault(key, MASK)
    if live is not None and "data" in live:
        live = {**live, "data": masked_before}
    if merged is not None and "data" in merged:
        merged = {**merged, "data": masked_after}
    return live, merged


def with_owner(obj: Obj, owner: Obj | None) -> Obj:
    """A dependent as `job create` stores it: owned by the job's JobSet (or TrainJob)."""
    if owner is None or obj is owner or not (owner.get("metadata") or {}).get("uid"):
        return obj
    out = deep_copy(obj)
    out.setdefault("metadata", {})["ownerReferences"] = [owner_reference(owner)]
    return out
