"""`job create`'s pre-flight for PersistentVolumeClaims (`--checkpoint CLAIM`, a runtime's or a
patch's claims): a claim the pods mount that does not exist is reported before anything is
created, instead of as pods Pending for ever (`job why` says ClaimNotFound when it goes missing
later). A claim the user may not read (403) is left to the scheduler."""

from __future__ import annotations

from typing import Any

from ktrain.cluster import client as k
from ktrain.cluster.kube import KubeCluster
from ktrain.errors import ApiError, NotFoundError
from ktrain.util.jsondata import Obj


def claim_names(value: Any) -> list[str]:
    """Every `persistentVolumeClaim.claimName` in `value` (objects, pod templates, runtime
    patches), in order, once each."""
    found: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            pvc = node.get("persistentVolumeClaim")
            if isinstance(pvc, dict) and isinstance(pvc.get("claimName"), str) and pvc["claimName"] not in found:
                found.append(pvc["claimName"])
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def check_claims(cluster: KubeCluster, objects: list[Obj], namespace: str) -> None:
    missing = []
    for name in claim_names(objects):
        try:
            if k.get(cluster, k.PVC, name, namespace) is None:
                missing.append(name)
        except ApiError as exc:
            if exc.status != 403:
                raise
    if missing:
        names = ", ".join(f"persistentvolumeclaim {n!r}" for n in missing)
        raise NotFoundError(
            f"{names} not found in namespace {namespace}: the pods that mount it would stay Pending",
            hint=f"create it first (kubectl get pvc -n {namespace}), or fix the name given to --checkpoint",
        )
