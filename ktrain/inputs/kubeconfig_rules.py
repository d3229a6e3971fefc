"""What a kubeconfig may hold, checked as kubectl (client-go's `clientcmd`) checks it, before
either transport starts: one contract for both (`ktrain.cluster.kube.connect`).

- Every file is decoded as client-go decodes it (YAML to JSON, then into its types): a field of the
  wrong type (`as-groups: 5`, `insecure-skip-tls-verify: "yes"`), `*-data` that is not base64, and a
  name twice in one file's `clusters`, `users` or `contexts` ("duplicate name ... in list") are
  errors, not the first entry winning.
- The context in use is validated as `clientcmd.ConfirmUsable` and `transport.TLSConfigFor` do:
  `insecure-skip-tls-verify` beside a CA, a `proxy-url` that does not parse or is not http(s)/socks5,
  impersonation without `as`, an exec plugin beside an `auth-provider`.

Messages name the file, the entry and the field, never a value: a kubeconfig holds secrets.
"""

from __future__ import annotations

from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

# The fields of client-go's v1 Cluster, AuthInfo and Context that ktrain reads, by JSON type.
# Fields not listed are passed over, as client-go's decoder passes over unknown ones.
_STR, _BOOL, _STRS, _EXTRA, _MAP = "a string", "true or false", "a list of strings", "a map of string lists", "a map"
FIELDS: dict[str, dict[str, str]] = {
    "cluster": {
        "server": _STR,
        "tls-server-name": _STR,
        "insecure-skip-tls-verify": _BOOL,
        "certificate-authority": _STR,
        "certificate-authority-data": _STR,
        "proxy-url": _STR,
        "disable-compression": _BOOL,
    },
    "user": {
        "client-certificate": _STR,
        "client-certificate-data": _STR,
        "client-key": _STR,
        "client-key-data": _STR,
        "token": _STR,
        "tokenFile": _STR,
        "as": _STR,
        "as-uid": _STR,
        "as-groups": _STRS,
        "as-user-extra": _EXTRA,
        "username": _STR,
        "password": _STR,
        "auth-provider": _MAP,
        "exec": _MAP,
    },
    "context": {"cluster": _STR, "user": _STR, "namespace": _STR},
}
BASE64_FIELDS = ("certificate-authority-data", "client-certificate-data", "client-key-data")
INSECURE_WITH_CA = "specifying a root certificates file with the insecure flag is not allowed"


def _is(value: Any, kind: str) -> bool:
    if value is None:  # JSON null decodes to the zero value
        return True
    if kind == _STR:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _STRS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == _EXTRA:
        return isinstance(value, dict) and all(
            isinstance(k, str) and (v is None or (isinstance(v, list) and all(isinstance(s, str) for s in v)))
            for k, v in value.items()
        )
    return isinstance(value, dict)


def _base64(value: str) -> bool:
    import base64
    import binascii

    try:  # Go's base64.StdEncoding: padded, line breaks ignored
        base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def check_entries(path: str, key: str, body: str, items: list[Any]) -> None:
    """One file's `clusters`, `users` or `contexts` list, decoded as client-go decodes it."""
    seen: set[str] = set()
    fields = FIELDS[body]
    for item in items:
        name = item["name"]
        if name in seen:  # client-go's conversion: `duplicate name "x" in list` (it then prints the list)
            raise UsageError(
                f"cannot read kubeconfig {path}: duplicate name {name!r} in `{key}`",
                hint="kubectl refuses the file too; keep one entry per name",
            )
        seen.add(name)
        entry = item.get(body) or {}
        for field, kind in fields.items():
            value = entry.get(field)
            if not _is(value, kind):
                raise UsageError(f"cannot read kubeconfig {path}: `{field}` of {body} {name!r} must be {kind}")
            if field in BASE64_FIELDS and value and not _base64(value):
                raise UsageError(f"cannot read kubeconfig {path}: `{field}` of {body} {name!r} is not valid base64")


def check_usable(cluster_name: str, cluster: dict[str, Any], user_name: str, user: dict[str, Any]) -> None:
    """The selected cluster and user, as clientcmd.ConfirmUsable and transport.TLSConfigFor check them."""
    if cluster.get("insecure-skip-tls-verify") and (
        cluster.get("certificate-authority") or cluster.get("certificate-authority-data")
    ):
        raise UsageError(
            f"cluster {cluster_name!r}: {INSECURE_WITH_CA}",
            hint="drop `insecure-skip-tls-verify` (the CA then verifies the server) or the CA",
        )
    proxy = cluster.get("proxy-url")
    if proxy:
        why = proxy_problem(proxy)
        if why:
            raise UsageError(f"invalid 'proxy-url' for cluster {cluster_name!r}: {why}")
    if (user.get("as-uid") or user.get("as-groups") or user.get("as-user-extra")) and not user.get("as"):
        raise UsageError(f"requesting uid, groups or user-extra for {user_name!r} without impersonating a user")
    if (user.get("client-certificate") or user.get("client-certificate-data")) and not (
        user.get("client-key") or user.get("client-key-data")
    ):
        raise UsageError(
            f"client-key-data or client-key must be specified for {user_name!r} "
            "to use the clientCert authentication method"
        )
    if user.get("exec") and user.get("auth-provider"):
        raise UsageError(f"authProvider cannot be provided in combination with an exec plugin for {user_name!r}")


def proxy_problem(proxy: str) -> str | None:
    """client-go's parseProxyURL, in words that quote nothing (a proxy URL may hold a password)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(proxy)
        _ = parts.port  # raises for a port that is not a number
    except ValueError:
        return "could not parse it as a URL"
    if parts.scheme not in ("http", "https", "socks5"):
        scheme = parts.scheme if parts.scheme.isalnum() and len(parts.scheme) < 20 else "?"
        return f'unsupported scheme "{scheme}", must be http, https, or socks5'
    if not parts.hostname:
        return "it names no host"
    return None
