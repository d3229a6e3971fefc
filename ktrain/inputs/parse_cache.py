"""A small on-disk cache for things that are slow to compute and cheap to check.

Location: `$KTRAIN_CACHE_DIR`, else `$XDG_CACHE_HOME/ktrain`, else `~/.cache/ktrain`.
Every entry is plain JSON (never pickle: nothing in the cache can run code) and is keyed by
the source file's path, size and mtime, and checked against a checksum of its content, so a
stale or corrupt entry is ignored and recomputed, never trusted. (CRC-32, not SHA-256: it
guards against staleness and corruption, not an attacker — who can write ~/.cache can write
~/.bashrc — and hashlib would cost every TAB press 4 ms to import.) Failing to read or write
the cache is never an error: ktrain just does the work.

Only stdlib imports here: the completion path uses this module.
"""

from __future__ import annotations

import json
import os
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the completion path 3 ms to import
    from typing import Any

# Bump when the shape of a cached value changes (the loader's output, for runtimes).
RUNTIME_CACHE_FORMAT = 1


def cache_dir() -> str:
    explicit = os.environ.get("KTRAIN_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ktrain")


def read_json(path: str) -> Any:
    """The JSON value stored at `path`, or None when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def write_json(path: str, value: Any) -> bool:
    """Write atomically (a reader never sees half a file); False when it could not be written."""
    try:
        text = json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError):
        return False
    directory = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


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
    Raises OSError when the file itself cannot be read.
    """
    with open(path, "rb") as fh:
        raw = fh.read()
        stat = os.fstat(fh.fileno())
    text = raw.decode("utf-8")
    entry = read_json(entry_path("runtimes", os.path.abspath(path)))
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
    )
