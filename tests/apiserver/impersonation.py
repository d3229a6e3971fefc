"""Impersonation as the real API server's filter does it (k8s.io/apiserver/pkg/endpoints/filters/
impersonation.go, `WithImpersonation` and `buildImpersonationRequests`).

The headers `Impersonate-User`, `Impersonate-Group` (repeated), `Impersonate-Extra-<key>` (the key
lower-cased and `url.PathUnescape`d, the header repeated for several values) and `Impersonate-Uid`
become one impersonation request each, in that order; each must be allowed to the authenticated
user (verb `impersonate` on `users`, `serviceaccounts` for `system:serviceaccount:NS:NAME` in
that namespace, `groups`, `userextras/<key>` and `uids` in group `authentication.k8s.io`), else
403 with the authorizer's message (`responsewriters.Forbidden` around `apierrors.NewForbidden`):

    users "jane" is forbidden: User "me" cannot impersonate resource "users" in API group "" at the cluster scope

Groups, extras or a uid without a user are refused before any check (the real filter answers that
with a 500 InternalError; client-go refuses such a kubeconfig before sending).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from .errors import ApiError, forbidden_request

PREFIX = "impersonate-extra-"


def requested(headers: Any) -> list[tuple[str, str, str, str]]:
    """(resource, group, namespace, name) per impersonation request, in the filter's order."""
    out: list[tuple[str, str, str, str]] = []
    user = headers.get("Impersonate-User") or ""
    if user:
        parts = user.split(":")
        if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"] and parts[2] and parts[3]:
            out.append(("serviceaccounts", "", parts[2], parts[3]))
        else:
            out.append(("users", "", "", user))
    out += [("groups", "", "", g) for g in headers.get_all("Impersonate-Group") or []]
    for name in dict.fromkeys(k.lower() for k in headers if k.lower().startswith(PREFIX)):
        key = unquote(name[len(PREFIX) :])
        out += [(f"userextras/{key}", "authentication.k8s.io", "", v) for v in headers.get_all(name) or []]
    uid = headers.get("Impersonate-Uid") or ""
    if uid:
        out.append(("uids", "authentication.k8s.io", "", uid))
    if out and not user:
        raise ApiError(
            500, f"Internal error occurred: requested {len(out)} without impersonating a user", "InternalError"
        )
    return out


def check(headers: Any, requester: str, allowed: set[tuple[str, str]]) -> dict[str, Any] | None:
    """The identity a request acts as (None without impersonation), or the 403 of the first
    request `allowed` ((resource, name) pairs, `*` for any name) does not hold."""
    identity: dict[str, Any] | None = None
    for resource, group, namespace, name in requested(headers):
        base = resource.partition("/")[0]
        if (base, name) not in allowed and (base, "*") not in allowed:
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            why = f'User "{requester}" cannot impersonate resource "{resource}" in API group "{group}" {scope}'
            raise forbidden_request(group, base, name, why)
        identity = identity or {"user": "", "groups": [], "extra": {}, "uid": ""}
        if base in ("users", "serviceaccounts"):
            identity["user"] = name if base == "users" else f"system:serviceaccount:{namespace}:{name}"
        elif base == "groups":
            identity["groups"].append(name)
        elif base == "userextras":
            identity["extra"].setdefault(resource.partition("/")[2], []).append(name)
        else:
            identity["uid"] = name
    return identity
