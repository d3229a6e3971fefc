"""Runtime blueprints and where they come from.

Precedence, highest first: `--runtime-file FILE`, each `--runtimes-dir DIR` in the order
given, the directories in `KTRAIN_RUNTIMES_PATH` (colon-separated), then the bundled set.
A runtime shadows one of the same kind and name from a lower source.
"""

from __future__ import annotations

import os

from ktrain import constants as c
from ktrain.errors import InputError, RuntimeNotFoundError
from ktrain.inputs.bundled import data_path
from ktrain.inputs.documents import Document, load_documents, parse_model
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # a record (ktrain.api.records), or the pydantic model for input pydantic coerced
    from collections.abc import Callable

    from ktrain.api.runtime import TrainingRuntime

SOURCE_BUNDLED = "bundled"


@struct
class RuntimeEntry:
    runtime: TrainingRuntime
    source: str  # "bundled", "file", "dir", "env", "cluster"
    path: str | None = None
    document: Document | None = None
    shadows: list[str] = field(default_factory=list)  # sources this entry hides

    @property
    def key(self) -> tuple[str, str]:
        return (self.runtime.kind, self.runtime.name)

    @property
    def origin(self) -> str:
        if self.path is None or self.source == SOURCE_BUNDLED:
            return self.source
        return f"{self.source}:{self.path}"


# Paths are plain strings (os.path): pathlib would add 6 ms to every cold render.
def _yaml_files(directory: str) -> list[str]:
    names = sorted(n for n in os.listdir(directory) if n.endswith((".yaml", ".yml")))
    return [p for p in (os.path.join(directory, n) for n in names) if os.path.isfile(p)]


def _runtime_documents(path: str, source: str) -> tuple[str, list[Document]]:
    """The text and YAML documents of a runtime file; those of registry directories (bundled,
    --runtimes-dir, KTRAIN_RUNTIMES_PATH) come from the parse cache when the file has not changed."""
    from ktrain.inputs.reading import read_input

    if str(path) == "-":
        text = read_input("-", what="runtime file", label="-")
        return text, load_documents(text, "-")
    if source == "file":  # one-off files: parse, do not fill the cache with them
        text = read_input(str(path), what="runtime file")
        return text, load_documents(text, str(path))
    from ktrain.inputs import parse_cache as cache

    text, cached = cache.read_runtime_file(str(path))
    if cached is not None:
        lines = text.splitlines()
        return text, [
            Document(
                data=d["data"], file=str(path), lines=lines, positions=d["positions"], key_positions=d["key_positions"]
            )
            for d in cached
        ]
    docs = load_documents(text, str(path))
    cache.store_runtime_file(
        str(path), text, [{"data": d.data, "positions": d.positions, "key_positions": d.key_positions} for d in docs]
    )
    return text, docs


def load_runtime_documents(docs: list[Document], source: str, path: str) -> list[RuntimeEntry]:
    """Every (Cluster)TrainingRuntime among parsed documents (other kinds are skipped)."""
    entries = []
    for doc in docs:
        if not isinstance(doc.data, dict):
            raise doc.error("a runtime document must be a mapping")
        kind = doc.data.get("kind")
        if kind not in c.RUNTIME_KINDS:
            continue
        runtime = parse_model(doc, "TrainingRuntime", what=str(kind))
        if not runtime.name:
            raise doc.error(f"{kind} has no metadata.name", ("metadata",))
        entries.append(RuntimeEntry(runtime=runtime, source=source, path=str(path), document=doc))
    return entries


def _framework(entry: RuntimeEntry) -> str:
    """The runtime's `trainer.kubeflow.org/framework` label (what completion shows beside it)."""
    data = entry.document.data if entry.document is not None else {}
    labels = (data.get("metadata") or {}).get("labels") or {}
    label = labels.get("trainer.kubeflow.org/framework", "") if isinstance(labels, dict) else ""
    return label if isinstance(label, str) else ""


class RuntimeRegistry:
    def __init__(
        self,
        *,
        files: list[str] | None = None,
        dirs: list[str] | None = None,
        env_path: str | None = None,
        bundled: bool = True,
    ) -> None:
        self._files = list(files or [])
        self._dirs = list(dirs or [])
        self._env_dirs = [d for d in (env_path or "").split(":") if d]
        self._bundled = bundled
        self._entries: list[RuntimeEntry] | None = None
        self._cluster: list[RuntimeEntry] = []
        self._cluster_first = False
        self._cluster_namespace: str | None = None
        self._namespaced: Callable[[str], list[RuntimeEntry]] | None = None
        # Runtimes generated for a converted v1 job: above every other source.
        self._converted: list[RuntimeEntry] = []
        # The local files, by source: (source, directory or None for a --runtime-file, files).
        self._groups: list[tuple[str, str | None, list[str]]] | None = None
        # What was read so far: (source, path) -> (the file's text, its runtimes).
        self._read: dict[tuple[str, str], tuple[str, list[RuntimeEntry]]] = {}
        self._indexes: dict[str, list[list[tuple[str, str, str]]] | None] = {}

    def add_converted(self, entries: list[RuntimeEntry]) -> None:
        """Runtimes that come with the job: generated for a converted Training Operator v1 job, or
        written in the job's own file. They win over every other source."""
        self._converted = [*entries, *self._converted]
        self._entries = None

    def add_cluster_entries(
        self,
        entries: list[RuntimeEntry],
        *,
        prefer: bool,
        namespace: str | None = None,
        namespaced: Callable[[str], list[RuntimeEntry]] | None = None,
    ) -> None:
        """Runtimes read from a cluster: when `prefer` (what the controller would use) above every
        local source but an explicit `--runtime-file`, else below them all (a fallback for names not
        found locally). `entries` hold the TrainingRuntimes of `namespace`; `namespaced(ns)` reads
        another namespace's when a job turns out to live there (see `use_namespace`)."""
        self._cluster = list(entries)
        self._cluster_first = prefer
        self._cluster_namespace = namespace
        self._namespaced = namespaced
        self._entries = None

    def use_namespace(self, namespace: str) -> None:
        """The job lives in `namespace`: its namespaced TrainingRuntimes are the ones that count."""
        if self._namespaced is None or namespace == self._cluster_namespace:
            return
        kept = [e for e in self._cluster if e.runtime.kind != c.TRAINING_RUNTIME_KIND]
        self._cluster = kept + self._namespaced(namespace)
        self._cluster_namespace = namespace
        self._entries = None

    def _sources(self) -> list[tuple[str, str, bool]]:
        """(source, path, is_file) from highest to lowest precedence."""
        out: list[tuple[str, str, bool]] = [("file", os.fspath(f), True) for f in self._files]
        for source, dirs in (("dir", self._dirs), ("env", self._env_dirs)):
            for d in dirs:
                p = os.fspath(d)
                if not os.path.isdir(p):
                    raise InputError(
                        f"runtimes directory {d!r} does not exist", hint="check --runtimes-dir and KTRAIN_RUNTIMES_PATH"
                    )
                out.append((source, p, False))
        if self._bundled:
            out.append((SOURCE_BUNDLED, data_path("runtimes"), False))
        return out

    def _file_groups(self) -> list[tuple[str, str | None, list[str]]]:
        if self._groups is None:
            self._groups = [
                (source, None, [path]) if is_file else (source, path, _yaml_files(path))
                for source, path, is_file in self._sources()
            ]
        return self._groups

    def _blocks(self) -> list[list[RuntimeEntry] | tuple[str, str | None, list[str]]]:
        """Every source, highest precedence first: entries at hand, or a group of local files."""
        groups = self._file_groups()
        named: list[list[RuntimeEntry] | tuple[str, str | None, list[str]]] = [g for g in groups if g[0] == "file"]
        rest = [g for g in groups if g[0] != "file"]
        if self._cluster_first:  # an explicit --runtime-file still wins: the user named it
            return [self._converted, *named, self._cluster, *rest]
        return [self._converted, *named, *rest, self._cluster]

    def _file_entries(self, source: str, path: str) -> list[RuntimeEntry]:
        done = self._read.get((source, path))
        if done is None:
            text, docs = _runtime_documents(path, source)
            done = self._read[(source, path)] = (text, load_runtime_documents(docs, source, path))
        return done[1]

    def all_entries(self) -> list[RuntimeEntry]:
        """Every runtime found, highest precedence first, shadowed ones included."""
        if self._entries is None:
            entries: list[RuntimeEntry] = []
            for block in self._blocks():
                if isinstance(block, list):
                    entries += block
                else:
                    source, _, files = block
                    for path in files:
                        entries += self._file_entries(source, path)
            self._entries = entries
        return self._entries

    def _named(self, name: str) -> list[RuntimeEntry]:
        """The runtimes called `name`, highest precedence first. A directory whose index (see
        ktrain.inputs.parse_cache.read_runtime_index) still holds is read only where it has one:
        a render reads one runtime file, not every file of the bundled set."""
        if self._entries is not None:
            return [e for e in self._entries if e.runtime.name == name]
        found: list[RuntimeEntry] = []
        for block in self._blocks():
            if isinstance(block, list):
                found += [e for e in block if e.runtime.name == name]
                continue
            source, directory, files = block
            index = self._index(source, directory, files)
            for i, path in enumerate(files):
                if index is None or any(held == name for _, held, _ in index[i]):
                    found += [e for e in self._file_entries(source, path) if e.runtime.name == name]
            if index is None and directory is not None and source != "file":
                self._store_index(source, directory, files)
        return found

    def _index(self, source: str, directory: str | None, files: list[str]) -> list[list[tuple[str, str, str]]] | None:
        if directory is None or source == "file":
            return None
        if directory not in self._indexes:
            from ktrain.inputs import parse_cache as cache

            self._indexes[directory] = cache.read_runtime_index(directory, files)
        return self._indexes[directory]

    def _store_index(self, source: str, directory: str, files: list[str]) -> None:
        """Every file of `directory` was read without error: remember which runtimes each holds."""
        from ktrain.inputs import parse_cache as cache

        held: list[tuple[str, str, list[tuple[str, str, str]]]] = []
        for path in files:
            text, entries = self._read[(source, path)]
            held.append((path, text, [(e.runtime.kind, e.runtime.name, _framework(e)) for e in entries]))
        cache.store_runtime_index(directory, held)

    def entries(self) -> list[RuntimeEntry]:
        """The visible runtimes (one per kind and name), each noting what it shadows."""
        winners: dict[tuple[str, str], RuntimeEntry] = {}
        for entry in self.all_entries():
            if entry.key in winners:
                winners[entry.key].shadows.append(entry.origin)
            else:
                entry.shadows = []
                winners[entry.key] = entry
        return sorted(winners.values(), key=lambda e: (e.runtime.name, e.runtime.kind))

    def names(self) -> list[str]:
        return sorted({e.runtime.name for e in self.entries()})

    def find(self, name: str, kind: str | None = None) -> RuntimeEntry | None:
        """The visible runtime of that name and kind; without a kind, the one from the highest
        source (a --runtime-file TrainingRuntime beats a bundled ClusterTrainingRuntime)."""
        named = self._named(name)
        winners: dict[tuple[str, str], RuntimeEntry] = {}
        for entry in named:  # each winner's `shadows`, as entries() notes them
            if entry.key in winners:
                winners[entry.key].shadows.append(entry.origin)
            else:
                entry.shadows = []
                winners[entry.key] = entry
        for entry in named:  # highest precedence first: the first match is visible
            if kind is None or entry.runtime.kind == kind:
                return entry
        return None

    def get(self, name: str, kind: str | None = None) -> RuntimeEntry:
        entry = self.find(name, kind)
        if entry is not None:
            return entry
        names = self.names()
        import difflib

        # difflib is quadratic: a name no runtime can have (over 253 characters) gets no suggestion
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5) if len(name) <= 253 else []
        what = kind or "runtime"
        message = f"{what} {name!r} not found"
        if names:
            message += ". Known runtimes: " + ", ".join(names)
        hint = f"did you mean {close[0]!r}?" if close else "see `ktrain runtime list`"
        raise RuntimeNotFoundError(message, hint=hint)
