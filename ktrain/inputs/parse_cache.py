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

Only stdlib imports here: the completion path uses this module.
"""

from __future__ import annotations

import os
import stat as _stat
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

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the completion path 3 ms to import
    from typing import Any

# Bump when the shape of a cached value changes (the loader's output, for runtimes).
RUNTIME_CACHE_FORMAT = 2
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


def store_runtime_file(path: str, text: str, documents: list[dict[str, Any]]) -> None:
    """Remember the parsed documents of `path` (as read: `text`)."""
    try:
        stat = os.stat(path)
    except OSError:
        return
    raw = text.encode("utf-8")
    if stat.st_size != len(raw):
        return  # changed since we read it
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
