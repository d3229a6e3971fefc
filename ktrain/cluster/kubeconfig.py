"""kubeconfig files read as kubectl (client-go's `clientcmd`) reads them, without the `kubernetes` package.

- Several files (`--kubeconfig a:b`, `$KUBECONFIG`) are merged: for clusters, users and contexts
  the first file that defines a name wins it whole, and `current-context` comes from the first
  file that sets one (`clientcmd.ClientConfigLoadingRules.Load`).
- Relative file references in a file are relative to that file's directory
  (`clientcmd.ResolveLocalPaths`): a cluster's `certificate-authority`, a user's
  `client-certificate`, `client-key` and `tokenFile`, and an exec plugin's `command` when it
  holds a path separator.
- The context is `--context`, else `current-context`; its namespace, cluster and user are what
  requests use.

Each file is read through the bounded reader (`ktrain.inputs.reading`: a regular file, at most
16 MiB) and parsed with PyYAML's C loader when it is there. Errors name the file and line and
never quote a value: a kubeconfig holds tokens and keys.
"""

from __future__ import annotations

import os

from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]


class Selected:
    """The parts of a merged kubeconfig one connection uses."""

    __slots__ = ("cluster", "context", "namespace", "user")

    def __init__(self, context: str, cluster: Entry, user: Entry, namespace: str | None) -> None:
        self.context = context
        self.cluster = cluster  # `cluster:` body, paths resolved
        self.user = user  # `user:` body, paths resolved ({} when the context names none)
        self.namespace = namespace


def _parse(path: str) -> Any:
    from ktrain.inputs.reading import check_yaml_graph, read_input

    text = read_input(path, what="kubeconfig")
    found, data = _cached(path, text)
    if found:
        return data
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # a safe loader
    try:
        node = loader.get_single_node()  # parsed once: the node graph gives the cache its places
        check_yaml_graph(node, path, "kubeconfig")  # an alias bomb or a deep nest, before it is built
        data = None if node is None else loader.construct_document(node)
        _remember(path, text, node, data, loader.construct_object)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise UsageError(f"cannot read kubeconfig {where}: {problem}") from None
    finally:
        loader.dispose()
    return data


# --- the kubeconfig skeleton cache -----------------------------------------------------------
# A kubeconfig is read on every cluster command, and importing a YAML parser costs about 15 ms:
# a fifth of a `kubectl get`. Its shape is cached instead, without a single value of it: every
# string is stored as the (start, end, quoting) of its text in the file, every mapping and list as
# such, and only booleans, nulls and integers as themselves. The next command reads the file (as
# always), checks the cache entry against a checksum of the text, and cuts the strings out of
# the text. So no token, key or password ever reaches the cache, and an entry is written only
# when rebuilding from it gives exactly what PyYAML parsed (multi-line or escaped strings, anchors
# with merge keys, timestamps, floats: not cached, parsed every time).

SKELETON_FORMAT = 1
_STYLES = {None: "p", "": "p", "'": "s", '"': "d"}  # the C loader says "" for plain


def _cached(path: str, text: str) -> tuple[bool, Any]:
    from ktrain.inputs import parse_cache

    entry = parse_cache.read_json(_entry_path(path), verified=True)
    if not isinstance(entry, dict) or entry.get("format") != SKELETON_FORMAT or entry.get("source") != path:
        return False, None
    if entry.get("text") != parse_cache.checksum(text.encode("utf-8", "surrogatepass")):
        return False, None
    try:
        return True, _rebuild(entry["skeleton"], text)
    except (KeyError, TypeError, ValueError, IndexError, RecursionError):
        return False, None


def _entry_path(path: str) -> str:
    from ktrain.inputs import parse_cache

    return parse_cache.entry_path("kubeconfig-shape", path)


def _remember(path: str, text: str, node: Any, data: Any, construct: Any) -> None:
    from ktrain.inputs import parse_cache

    try:
        skeleton = _skeleton(node, text, construct)
        if skeleton is _NOT_CACHED or _rebuild(skeleton, text) != data:
            return
    except RecursionError:
        return
    entry = {
        "format": SKELETON_FORMAT,
        "source": path,
        "text": parse_cache.checksum(text.encode("utf-8", "surrogatepass")),
        "skeleton": skeleton,
    }
    parse_cache.write_json(_entry_path(path), entry, verified=True)


_NOT_CACHED = object()


def _skeleton(node: Any, text: str, construct: Any) -> Any:
    """["m", [[key, value], ...]], ["l", [...]], ["v", true|false|null|int] or ["p"|"s"|"d", start, end].
    `construct`: the parsing loader's `construct_object`, for the scalars kept as values."""
    if node is None:
        return ["v", None]
    tag = str(node.tag)
    kind = type(node).__name__
    if kind == "MappingNode":
        if tag != "tag:yaml.org,2002:map":
            return _NOT_CACHED
        pairs = []
        for key, value in node.value:
            if str(key.tag) == "tag:yaml.org,2002:merge":
                return _NOT_CACHED
            k, v = _skeleton(key, text, construct), _skeleton(value, text, construct)
            if k is _NOT_CACHED or v is _NOT_CACHED or k[0] in ("m", "l"):
                return _NOT_CACHED
            pairs.append([k, v])
        return ["m", pairs]
    if kind == "SequenceNode":
        if tag != "tag:yaml.org,2002:seq":
            return _NOT_CACHED
        items = [_skeleton(item, text, construct) for item in node.value]
        return _NOT_CACHED if any(i is _NOT_CACHED for i in items) else ["l", items]
    if tag == "tag:yaml.org,2002:str":
        style = _STYLES.get(node.style)
        start, end = node.start_mark.index, node.end_mark.index
        if style is None or _cut(style, text, start, end) != node.value:
            return _NOT_CACHED
        return [style, start, end]
    if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int"):
        value = construct(node, deep=True)
        return ["v", value] if value is None or isinstance(value, (bool, int)) else _NOT_CACHED
    return _NOT_CACHED


def _cut(style: str, text: str, start: int, end: int) -> str | None:
    raw = text[start:end]
    if style == "p":
        return raw
    if len(raw) < 2 or raw[0] != raw[-1] or "\n" in raw:
        return None
    inner = raw[1:-1]
    if style == "s":
        return inner.replace("''", "'")
    return None if "\\" in inner else inner


def _rebuild(skeleton: Any, text: str) -> Any:
    kind = skeleton[0]
    if kind == "m":
        return {_rebuild(k, text): _rebuild(v, text) for k, v in skeleton[1]}
    if kind == "l":
        return [_rebuild(item, text) for item in skeleton[1]]
    if kind == "v":
        value = skeleton[1]
        if value is None or isinstance(value, (bool, int)):
            return value
        raise ValueError("not a cached scalar")
    cut = _cut(kind, text, int(skeleton[1]), int(skeleton[2]))
    if cut is None:
        raise ValueError("not a cached string")
    return cut


def _resolve(base: str, value: Any) -> Any:
    # client-go's ResolvePath: joined to the file's directory, no `~` expansion
    if isinstance(value, str) and value and not os.path.isabs(value):
        return os.path.join(base, value)
    return value


def _resolved_cluster(entry: Entry, base: str) -> Entry:
    out = dict(entry)
    if "certificate-authority" in out:
        out["certificate-authority"] = _resolve(base, out["certificate-authority"])
    return out


def _resolved_user(entry: Entry, base: str) -> Entry:
    out = dict(entry)
    for key in ("client-certificate", "client-key", "tokenFile"):
        if key in out:
            out[key] = _resolve(base, out[key])
    exec_ = out.get("exec")
    if isinstance(exec_, dict):
        command = exec_.get("command")
        # client-go: a bare name is looked up on PATH; one with a separator is a path, relative to the file
        if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
            out["exec"] = {**exec_, "command": os.path.normpath(os.path.join(base, command))}
    return out


class Merged:
    """Named clusters, users and contexts of several files, merged the way kubectl merges them."""

    def __init__(self, files: list[str]) -> None:
        self.clusters: dict[str, Entry] = {}
        self.users: dict[str, Entry] = {}
        self.contexts: dict[str, Entry] = {}
        self.current: str | None = None
        for path in files:
            self._add(path)

    def _add(self, path: str) -> None:
        data = _parse(path)
        if data is None:
            return
        if not isinstance(data, dict):
            raise UsageError(f"cannot read kubeconfig {path}: it is not a mapping (a Config object)")
        from ktrain.inputs.kubeconfig_rules import check_entries

        base = os.path.dirname(os.path.abspath(path))
        for key, table, body, resolve in (
            ("clusters", self.clusters, "cluster", _resolved_cluster),
            ("users", self.users, "user", _resolved_user),
            ("contexts", self.contexts, "context", None),
        ):
            items = data.get(key) or []
            if not isinstance(items, list):
                raise UsageError(f"cannot read kubeconfig {path}: `{key}` is not a list")
            for item in items:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    raise UsageError(f"cannot read kubeconfig {path}: an entry of `{key}` has no name")
                entry = item.get(body) or {}
                if not isinstance(entry, dict):
                    raise UsageError(f"cannot read kubeconfig {path}: {body} {item['name']!r} is not a mapping")
            check_entries(path, key, body, items)
            for item in items:
                entry = item.get(body) or {}
                table.setdefault(item["name"], resolve(entry, base) if resolve else entry)
        current = data.get("current-context")
        if self.current is None and isinstance(current, str) and current:
            self.current = current

    def select(self, context: str | None) -> Selected:
        """The context `context` (else current-context), its cluster and its user."""
        if context is not None and context not in self.contexts:
            known = ", ".join(sorted(self.contexts)) or "none"
            raise UsageError(
                f"context {context!r} not found in kubeconfig (known: {known})",
                hint="`kubectl config get-contexts` lists them",
            )
        name = context or self.current
        if not name:
            raise UsageError("the kubeconfig has no current context", hint="pass --context NAME")
        if name not in self.contexts:
            known = ", ".join(sorted(self.contexts)) or "none"
            raise UsageError(
                f"the current context {name!r} is not defined in the kubeconfig (known: {known})",
                hint="pass --context NAME, or `kubectl config use-context NAME`",
            )
        entry = self.contexts[name]
        cluster_name, user_name = entry.get("cluster"), entry.get("user")
        if not isinstance(cluster_name, str) or cluster_name not in self.clusters:
            raise UsageError(
                f"context {name!r} uses cluster {cluster_name!r}, which the kubeconfig does not define",
                hint="`kubectl config view` shows the clusters",
            )
        cluster = self.clusters[cluster_name]
        if not isinstance(cluster.get("server"), str) or not cluster["server"]:
            raise UsageError(f"cluster {cluster_name!r} of context {name!r} has no server in the kubeconfig")
        user: Entry = {}
        if isinstance(user_name, str) and user_name:
            if user_name not in self.users:
                raise UsageError(
                    f"context {name!r} uses user {user_name!r}, which the kubeconfig does not define",
                    hint="`kubectl config view` shows the users",
                )
            user = self.users[user_name]
        from ktrain.inputs.kubeconfig_rules import check_usable

        check_usable(cluster_name, cluster, str(user_name or ""), user)
        namespace = entry.get("namespace")
        return Selected(name, cluster, user, namespace if isinstance(namespace, str) and namespace else None)
