"""Where dynamic completion values come from, without importing anything heavy.

- Local runtime names: the runtime files, through the parse cache of `ktrain.inputs.parse_cache`.
- Contexts and namespaces: the kubeconfig files (`--kubeconfig`, else every file in
  `KUBECONFIG`, else `~/.kube/config`), read with ruamel only when their cached summary
  (names only, never credentials) is stale.
- Cluster runtimes and job names: a per-connection cache file. When it is older
  than `CLUSTER_TTL` a detached `python -m ktrain.completion.refresh` renews it in the
  background under a time limit, so the TAB press itself never waits for, or talks to, a cluster.
"""

from __future__ import annotations

import os
import sys
import time

from ktrain.inputs import parse_cache as cache
from ktrain.util.jsondata import dumps, loads

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

CLUSTER_TTL = 180.0  # seconds before cluster values are refreshed (in the background)
REFRESH_BACKOFF = 60.0  # do not start another refresh for the same connection within this time
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


# -- local runtimes -----------------------------------------------------------------------------


def _runtime_docs(path: str, cacheable: bool) -> list[dict[str, Any]]:
    if cacheable:
        text, docs = cache.read_runtime_file(path, positions=False)
        if docs is not None:
            return docs
    else:
        from ktrain.inputs.reading import read_input

        text = read_input(path, what="runtime file")
    from ktrain.inputs.documents import load_documents

    parsed = [
        {"data": d.data, "positions": d.positions, "key_positions": d.key_positions} for d in load_documents(text, path)
    ]
    if cacheable:
        cache.store_runtime_file(path, text, parsed)
    return parsed


def _yaml_files(directory: str) -> list[str]:
    """The runtime files of a directory, as the registry lists them."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith((".yaml", ".yml")))
    except OSError:
        return []
    return [p for p in (os.path.join(directory, n) for n in names) if os.path.isfile(p)]


def _runtimes_of(path: str, cacheable: bool) -> list[tuple[str, str]]:
    """(name, framework label) of each runtime in a file (nothing for one that cannot be read)."""
    try:
        docs = _runtime_docs(path, cacheable)
    except Exception:  # noqa: BLE001 - an unreadable file just offers nothing
        return []
    out = []
    for doc in docs:
        data = doc["data"]
        if isinstance(data, dict) and data.get("kind") in RUNTIME_KINDS:
            name = (data.get("metadata") or {}).get("name")
            if isinstance(name, str) and name:
                framework = ((data.get("metadata") or {}).get("labels") or {}).get("trainer.kubeflow.org/framework", "")
                out.append((name, framework))
    return out


def local_runtimes(files: list[str], dirs: list[str]) -> list[tuple[str, str]]:
    """(name, description) of every runtime the registry would see for these flags."""
    from ktrain.inputs.bundled import data_path

    env_dirs = [d for d in os.environ.get("KTRAIN_RUNTIMES_PATH", "").split(":") if d]
    groups = [*((d, "dir") for d in dirs), *((d, "env") for d in env_dirs), (data_path("runtimes"), "bundled")]
    held: list[tuple[str, list[tuple[str, str]]]] = [("file", _runtimes_of(f, False)) for f in files]
    for directory, label in groups:
        paths = _yaml_files(directory)
        # the registry's index of the directory, while it holds: one small read, not one per file
        index = cache.read_runtime_index(directory, paths)
        if index is not None:
            held += [(label, [(name, framework) for _, name, framework in runtimes]) for runtimes in index]
        else:
            held += [(label, _runtimes_of(path, True)) for path in paths]
    found: dict[str, str] = {}
    for label, runtimes in held:
        for name, framework in runtimes:
            if name not in found:
                found[name] = " ".join(x for x in (framework, "" if label == "bundled" else label) if x)
    return sorted(found.items())


# -- kubeconfig ---------------------------------------------------------------------------------


def kubeconfig_files(given: dict[str, list[str]]) -> list[str]:
    if given.get("--kubeconfig"):
        return [os.path.expanduser(given["--kubeconfig"][-1])]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
    return [os.path.join(os.path.expanduser("~"), ".kube", "config")]


def _kubeconfig_summary(path: str) -> dict[str, Any] | None:
    """{"current": name, "contexts": [[name, namespace], ...]} of one file; cached by stamp."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    entry_path = cache.entry_path("kubeconfig", os.path.abspath(path))
    entry = cache.read_json(entry_path)
    stamp = [os.path.abspath(path), stat.st_size, stat.st_mtime_ns]
    if isinstance(entry, dict) and entry.get("stamp") == stamp and isinstance(entry.get("contexts"), list):
        return entry
    from ruamel.yaml import YAML

    from ktrain.inputs.reading import read_input

    data = YAML(typ="safe", pure=True).load(read_input(path, what="kubeconfig"))  # bounded: no FIFO, no /dev/zero
    contexts = []
    for item in (data or {}).get("contexts") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            ns = (item.get("context") or {}).get("namespace")
            contexts.append([item["name"], ns if isinstance(ns, str) else ""])
    current = (data or {}).get("current-context")
    # Names only: credentials from the kubeconfig never reach the cache.
    summary = {"stamp": stamp, "current": current if isinstance(current, str) else "", "contexts": contexts}
    cache.write_json(entry_path, summary)
    return summary


def kubeconfig_contexts(given: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(context, namespace) pairs, merged as kubectl does: the first file to name a context wins."""
    out: dict[str, str] = {}
    for path in kubeconfig_files(given):
        try:
            summary = _kubeconfig_summary(path)
        except Exception:  # noqa: BLE001 - a broken kubeconfig offers nothing
            continue
        for name, ns in (summary or {}).get("contexts", []):
            out.setdefault(name, ns)
    return sorted(out.items())


# -- cluster values -----------------------------------------------------------------------------


def connection_args(given: dict[str, list[str]]) -> list[str]:
    args: list[str] = []
    for flag in ("--kubeconfig", "--context", "--namespace"):
        if given.get(flag):
            args += [flag, given[flag][-1]]
    return args


def _cluster_entry_path(conn: list[str]) -> str:
    return cache.entry_path("cluster", dumps([conn, os.environ.get("KUBECONFIG", "")]))


def _has_cluster_config(given: dict[str, list[str]]) -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) or any(os.path.isfile(p) for p in kubeconfig_files(given))


def cluster_values(kind: str, given: dict[str, list[str]]) -> list[str]:
    """Cached `kind` values ("runtimes" or "jobs") for this connection.

    Stale or missing values start a background refresh; this call returns at once with what
    the cache holds (possibly nothing).
    """
    conn = connection_args(given)
    entry_path = _cluster_entry_path(conn)
    entry = cache.read_json(entry_path)
    fresh = (
        isinstance(entry, dict)
        and isinstance(entry.get("time"), (int, float))
        and 0 <= time.time() - entry["time"] < CLUSTER_TTL
    )
    if not fresh and _has_cluster_config(given):
        _start_refresh(entry_path, conn)
    values = entry.get(kind) if isinstance(entry, dict) else None
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _start_refresh(entry_path: str, conn: list[str]) -> None:
    marker = entry_path + ".refreshing"
    try:
        if time.time() - os.stat(marker).st_mtime < REFRESH_BACKOFF:
            return  # one is running (or just failed): do not pile them up
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        with open(marker, "w", encoding="utf-8"):
            pass
        import subprocess

        from ktrain.completion.refresh import command_env

        subprocess.Popen(
            [sys.executable, "-m", "ktrain.completion.refresh", entry_path, *conn],
            env=command_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


# -- --set keys ---------------------------------------------------------------------------------


def _walk_schema(
    schema: dict[str, Any], node: dict[str, Any], prefix: str, out: list[tuple[str, str]], depth: int = 0
) -> None:
    if depth > 8:
        return
    for option in node.get("anyOf") or []:
        if option.get("type") != "null":
            node = option
            break
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        node = schema.get("$defs", {}).get(ref[len("#/$defs/") :], {})
    props = node.get("properties")
    if isinstance(props, dict) and node.get("type", "object") == "object":
        for name, sub in props.items():
            _walk_schema(schema, sub, f"{prefix}.{name}" if prefix else name, out, depth + 1)
        return
    if prefix:
        out.append((prefix, str(node.get("type", "object"))))


def set_keys() -> list[tuple[str, str]]:
    """Dotted `--set` keys of the TrainJob file (relative to `spec`, plus `metadata.*`)."""
    from ktrain.inputs.bundled import data_path

    with open(os.path.join(data_path("schemas"), "trainjob.schema.json"), encoding="utf-8") as fh:
        schema = loads(fh.read())
    out: list[tuple[str, str]] = []
    props = schema.get("properties", {})
    _walk_schema(schema, props.get("spec", {}), "", out)
    _walk_schema(schema, props.get("metadata", {}), "metadata", out)
    return out
