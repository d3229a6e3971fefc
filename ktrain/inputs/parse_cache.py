"""A small on-disk cache for things that are slow to compute and cheap to check.

Location: `$KTRAIN_CACHE_DIR`, else `$XDG_CACHE_HOME/ktrain`, else `~/.cache/ktrain`.
Every entry is plain JSON (never pickle: nothing in the cache can run code) and is keyed by
the source file's path, size and mtime, and checked against a checksum of its content, so a
stale or corrupt entry is ignored and recomputed, never trusted. (CRC-32, not SHA-256: it
guards against staleness and corruption, not an attacker — who can write ~/.cache can write
~/.bashrc — and hashlib would cost every TAB press 4 ms to import.) Failing to read or write
the cache is never an error: ktrain just does the work.

An entry is only ever trusted when every doubt is ruled out, else the source is parsed again:
- its directory is a real directory (not a symlink) owned by this user and writable by no one
  else (ktrain makes it mode 0700);
- the entry is a regular file owned by this user, opened without following a symlink
  (O_NOFOLLOW) and without blocking on a FIFO, at most `MAX_INPUT_BYTES` long;
- a runtime entry (`verified=True`) starts with a line holding a checksum of the rest, so an
  entry edited after ktrain wrote it (a changed image name, a deeply nested value) is not
  used; entries are written to a new file and renamed into place (a reader never sees half).

Only the stdlib and ktrain.util here: the completion path uses this module.
"""

from __future__ import annotations

import os
import stat as _stat
import sys
import zlib

from ktrain.inputs.reading import (
    _O_BINARY,
    _O_CLOEXEC,
    _O_NOFOLLOW,
    MAX_INPUT_BYTES,
    decode,
    open_regular,
    read_bytes_stat,
    read_fd,
)
from ktrain.util.jsondata import loads

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

# Bump when the shape of a cached value changes (the loader's output, for runtimes).
RUNTIME_CACHE_FORMAT = 2
RUNTIME_INDEX_FORMAT = 1
_HEADER = b"ktrain-cache "
_UID = os.getuid() if hasattr(os, "getuid") else None


def cache_dir() -> str:
    explicit = os.environ.get("KTRAIN_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ktrain")


def _safe_directory(directory: str) -> bool:
    """A directory only this user can write to (and not a symlink to somewhere else)."""
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    if not _stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022:
        return False
    return _UID is None or st.st_uid == _UID


def _read_entry(path: str) -> bytes | None:
    if not _safe_directory(os.path.dirname(path)):
        return None
    try:
        fd, st = open_regular(path, follow=False)
    except (OSError, ValueError):
        return None
    try:
        if (_UID is not None and st.st_uid != _UID) or st.st_size > MAX_INPUT_BYTES:
            return None
        return read_fd(fd, MAX_INPUT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_json(path: str, verified: bool = False) -> Any:
    """The JSON value stored at `path`, or None when it is missing, unreadable or in doubt
    (see the module docstring); `verified`: the entry must carry a matching checksum."""
    raw = _read_entry(path)
    if raw is None:
        return None
    if verified:
        header, sep, raw = raw.partition(b"\n")
        if not sep or header != _HEADER + checksum(raw).encode("ascii"):
            return None
    try:
        return loads(raw.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError):
        return None


def write_json(path: str, value: Any, verified: bool = False) -> bool:
    """Write atomically (a reader never sees half a file); False when it could not be written."""
    import json  # on a miss only: reading an entry needs no json module

    try:
        data = json.dumps(value, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return False
    if verified:
        data = _HEADER + checksum(data).encode("ascii") + b"\n" + data
    directory = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not _safe_directory(directory):
            return False
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY, 0o600)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def checksum(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def entry_path(kind: str, source: str) -> str:
    """Where the cache keeps the entry of `kind` for `source` (the entry also records `source`)."""
    key = checksum(source.encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir(), kind, key + ".json")


def _position_list(positions: dict[tuple[Any, ...], tuple[int, int]]) -> list[list[Any]]:
    return [[*path, line, col] for path, (line, col) in positions.items()]


def _position_dict(items: list[list[Any]]) -> dict[tuple[Any, ...], tuple[int, int]]:
    return {tuple(item[:-2]): (int(item[-2]), int(item[-1])) for item in items}


def read_runtime_file(path: str, positions: bool = True) -> tuple[str, list[dict[str, Any]] | None]:
    """The text of a runtime file and its parsed documents from the cache (None on a miss).

    Each document is `{"data", "positions", "key_positions"}` as `ktrain.inputs.documents` makes them
    (with positions=False only `data`: completion needs names, not error positions).
    Raises InputError when the file itself cannot be read (see ktrain.inputs.reading).
    """
    raw, stat = read_bytes_stat(path, what="runtime file")
    text = decode(raw, path, "runtime file")
    if stat is None:  # stdin: nothing to key an entry by
        return text, None
    entry = read_json(entry_path("runtimes", os.path.abspath(path)), verified=True)
    try:
        if (
            entry["format"] == RUNTIME_CACHE_FORMAT
            and entry["path"] == os.path.abspath(path)
            and entry["size"] == stat.st_size
            and entry["mtime_ns"] == stat.st_mtime_ns
            and entry["checksum"] == checksum(raw)
        ):
            docs = [
                {
                    "data": d["data"],
                    "positions": _position_dict(d["positions"]),
                    "key_positions": _position_dict(d["key_positions"]),
                }
                if positions
                else {"data": d["data"]}
                for d in entry["documents"]
            ]
            return text, docs
    except (TypeError, KeyError, ValueError, IndexError):
        pass  # corrupt or from another format: recompute
    return text, None


def _as_read(path: str, text: str) -> tuple[os.stat_result, bytes] | None:
    """(the file's stat, `text` as bytes) while `path` is still the size it was when read as
    `text`; None when it is gone or has changed since."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    raw = text.encode("utf-8")
    return (stat, raw) if stat.st_size == len(raw) else None


def store_runtime_file(path: str, text: str, documents: list[dict[str, Any]]) -> None:
    """Remember the parsed documents of `path` (as read: `text`)."""
    found = _as_read(path, text)
    if found is None:
        return
    stat, raw = found
    write_json(
        entry_path("runtimes", os.path.abspath(path)),
        {
            "format": RUNTIME_CACHE_FORMAT,
            "path": os.path.abspath(path),
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "checksum": checksum(raw),
            "documents": [
                {
                    "data": d["data"],
                    "positions": _position_list(d["positions"]),
                    "key_positions": _position_list(d["key_positions"]),
                }
                for d in documents
            ],
        },
        verified=True,
    )


# -- the runtimes of a directory ----------------------------------------------------------------
#
# Which runtimes each file of a runtimes directory holds (kind, name and framework label), for a
# lookup by name that reads only the file holding that name, and for completion. Written by the
# registry once every file of the directory has been read into valid runtimes, so an index that
# still matches every file (the same names, sizes, mtimes and checksums) says that reading them
# again would find the same runtimes and no error. Tied to this ktrain's version: another version
# may judge a runtime differently.


def _index_path(directory: str) -> str:
    return entry_path("runtime-index", os.path.abspath(directory))


def _version() -> str:
    # ktrain's version, from the package already loaded (this module is part of it): `from ktrain
    # import __version__` would be an import of the package's lazy Python API for import-linter
    version = getattr(sys.modules.get("ktrain"), "__version__", "")
    return f"{RUNTIME_INDEX_FORMAT}/{RUNTIME_CACHE_FORMAT}/{version}"


def _file_stamp(path: str) -> tuple[int, int, str] | None:
    """(size, mtime_ns, checksum of the content) of a regular file, None when it cannot be read."""
    try:
        fd, st = open_regular(path)
    except (OSError, ValueError):
        return None
    try:
        raw = read_fd(fd, MAX_INPUT_BYTES) if st.st_size <= MAX_INPUT_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if raw is None else (st.st_size, st.st_mtime_ns, checksum(raw))


def read_runtime_index(directory: str, files: list[str]) -> list[list[tuple[str, str, str]]] | None:
    """For each of `files` (the runtime files of `directory`, in order): (kind, name, framework
    label) of each runtime it holds. None when there is no index, or it was written by another
    ktrain, or for other files, or any file has changed since."""
    entry = read_json(_index_path(directory), verified=True)
    try:
        if entry["version"] != _version() or entry["directory"] != os.path.abspath(directory):
            return None
        recorded = entry["files"]
        if len(recorded) != len(files):
            return None
        out: list[list[tuple[str, str, str]]] = []
        for path, (name, size, mtime_ns, sums, runtimes) in zip(files, recorded, strict=True):
            if name != os.path.basename(path) or _file_stamp(path) != (size, mtime_ns, sums):
                return None
            out.append([(str(kind), str(rt), str(label)) for kind, rt, label in runtimes])
        return out
    except (TypeError, KeyError, ValueError):
        return None  # corrupt or from another format


def store_runtime_index(directory: str, files: list[tuple[str, str, list[tuple[str, str, str]]]]) -> None:
    """Remember which runtimes the files of `directory` hold: (path, its text as read, (kind, name,
    framework label) of each runtime) for every file, all of them read without error."""
    recorded = []
    for path, text, runtimes in files:
        found = _as_read(path, text)
        if found is None:
            return
        stat, raw = found
        recorded.append([os.path.basename(path), stat.st_size, stat.st_mtime_ns, checksum(raw), runtimes])
    value = {"version": _version(), "directory": os.path.abspath(directory), "files": recorded}
    write_json(_index_path(directory), value, verified=True)
