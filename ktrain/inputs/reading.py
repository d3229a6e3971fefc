"""Reading the files ktrain is given, within bounds: the one function every file input goes through.

A job file (`-f`), `--runtime-file`, `--patch`, `--values`, the files of a runtimes directory
and the parse cache's own entries are read by `read_input` / `read_bytes`:

- only a regular file (a symlink to one is fine), or stdin for `-`: `/dev/zero`, a FIFO, a
  socket or a directory is refused before anything is read (a FIFO is opened non-blocking, so
  a FIFO nobody writes to does not hang ktrain);
- at most `MAX_INPUT_BYTES` (16 MiB): a job file is a few KiB, a runtime a few dozen; the
  API server refuses a request body over 3 MiB and etcd an object over 1.5 MiB, so 16 MiB
  leaves room for any real input while a runaway one stops before it costs memory;
- UTF-8 text (as YAML and the API server want): anything else is an error at the
  file:line:col of the first byte that is not.

Stdlib only, and cheap: the completion path reads runtime files through here (ktrain.errors is
imported only to raise an error).
"""

from __future__ import annotations

import os
import stat as _stat
import sys

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.errors import InputError

MAX_INPUT_BYTES = 16 * 1024 * 1024
STDIN = "-"

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows


def _input_error(message: str, **where: Any) -> InputError:
    # ktrain.errors is imported for an error only: a TAB press reads files through here
    from ktrain.errors import InputError

    return InputError(message, **where)


def _size_text(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"


def _kind(mode: int) -> str:
    if _stat.S_ISDIR(mode):
        return "a directory"
    if _stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if _stat.S_ISCHR(mode):
        return "a character device"
    if _stat.S_ISBLK(mode):
        return "a block device"
    if _stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _too_big(label: str, what: str, limit: int) -> InputError:
    return _input_error(
        f"{what} is larger than {_size_text(limit)}; ktrain reads inputs up to that size",
        file=label,
        hint="a job, runtime or values file is a few KiB: check that this is the file you meant",
    )


def open_regular(path: str, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """An fd open for reading on the regular file `path`, and its fstat.

    Raises OSError when it cannot be opened, and ValueError (with a message) when it is not
    a regular file. With follow=False a symlink is not followed (O_NOFOLLOW: an OSError).
    """
    flags = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY | (0 if follow else _O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not _stat.S_ISREG(st.st_mode):
            raise ValueError(f"{_kind(st.st_mode)}, not a regular file")
        if _O_NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, limit: int) -> bytes | None:
    """Up to `limit` bytes from fd, or None when there are more."""
    chunks = []
    total = 0
    while True:
        chunk = os.read(fd, min(1024 * 1024, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None
    return b"".join(chunks)


def read_bytes(path: str, *, what: str = "file", label: str | None = None, limit: int | None = None) -> bytes:
    """The bytes of a regular file (or of stdin for `-`), at most `limit` of them."""
    return read_bytes_stat(path, what=what, label=label, limit=limit)[0]


def read_bytes_stat(
    path: str, *, what: str = "file", label: str | None = None, limit: int | None = None
) -> tuple[bytes, os.stat_result | None]:
    """read_bytes, and the file's fstat as it was opened (None for stdin)."""
    label = label or path
    limit = MAX_INPUT_BYTES if limit is None else limit
    if path == STDIN:
        return _read_stdin(label, what, limit), None
    try:
        fd, st = open_regular(path)
    except ValueError as exc:
        raise _input_error(
            f"cannot read {what}: it is {exc}",
            file=label,
            hint="ktrain reads regular files; to read from a pipe, pass `-` and redirect it to stdin",
        ) from None
    except OSError as exc:
        raise _input_error(f"cannot read {what}: {exc.strerror or exc}", file=label) from None
    try:
        if st.st_size > limit:
            raise _too_big(label, what, limit)
        data = read_fd(fd, limit)
    except OSError as exc:
        raise _input_error(f"cannot read {what}: {exc.strerror or exc}", file=label) from None
    finally:
        os.close(fd)
    if data is None:
        raise _too_big(label, what, limit)
    return data, st


def _read_stdin(label: str, what: str, limit: int) -> bytes:
    stream = sys.stdin
    if stream is None:
        raise _input_error(f"cannot read {what}: there is no stdin", file=label)
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            data = bytes(buffer.read(limit + 1))
        else:  # a text stream (tests replace sys.stdin with io.StringIO)
            text = stream.read(limit + 1)
            data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
    except OSError as exc:
        raise _input_error(f"cannot read {what}: {exc.strerror or exc}", file=label) from None
    except UnicodeDecodeError as exc:  # a text stream decoding for us
        raise _input_error(f"{what} is not UTF-8 text: {exc.reason}", file=label) from None
    if len(data) > limit:
        raise _too_big(label, what, limit)
    return data


def decode(data: bytes, label: str, what: str = "file") -> str:
    """UTF-8 text; bytes that are not UTF-8 are an error at their file:line:col."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        if line_end < 0:
            line_end = len(data)
        line = data.count(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode("utf-8", "replace")) + 1
        source = data[line_start:line_end].decode("utf-8", "replace").rstrip("\r")
        raise _input_error(
            f"{what} is not UTF-8 text: byte 0x{data[start]:02x} at offset {start} ({exc.reason})",
            file=label,
            line=line,
            column=column,
            source_line=source,
            hint="save the file as UTF-8",
        ) from None
    return text


def read_input(path: str, *, what: str = "file", label: str | None = None) -> str:
    """The UTF-8 text of an input file (or stdin for `-`), bounded: see the module docstring."""
    label = label or ("<stdin>" if path == STDIN else path)
    return decode(read_bytes(path, what=what, label=label), label, what)


# YAML bounds, for every YAML input (`ktrain.inputs.documents` reads job files with them; the
# kubeconfig reader checks PyYAML's node graph with `check_yaml_graph`): nesting depth, and alias
# expansion bounded as go-yaml (kubectl's YAML reader) bounds it: past 1,000 values, of which more
# than 100 came from aliases, the share that came from aliases may be at most 99% (up to 400,000
# values), falling to 10% at 4,000,000; the text aliases repeat may total at most MAX_INPUT_BYTES.
MAX_YAML_DEPTH = 100
MAX_ALIAS_TEXT = MAX_INPUT_BYTES
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000
EXCESSIVE_ALIASING = "the document contains excessive aliasing (an alias bomb?)"


def allowed_alias_ratio(count: int) -> float:
    if count <= _ALIAS_RATIO_LOW:
        return 0.99
    if count >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (count - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def check_yaml_graph(root: Any, label: str, what: str = "file") -> None:
    """Refuse a composed YAML node graph (PyYAML's nodes: `.value` a list of nodes, of (key, value)
    pairs, or a scalar's text) that would expand past the bounds above, before anything is built
    from it. Each distinct node is visited once (its expanded size is remembered), so a billion
    laughs costs microseconds; a recursive alias is refused too."""
    if root is None:
        return
    sizes: dict[int, tuple[int, int, int]] = {}  # id -> (values, depth, text) once expanded
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        value = node.value
        children = (
            []
            if isinstance(value, str)
            else [c for item in value for c in (item if isinstance(item, tuple) else (item,))]
        )
        if done:
            on_path.discard(key)
            count, depth, text = 1, 0, 0 if children else len(value)
            for child in children:
                c_count, c_depth, c_text = sizes[id(child)]
                count, depth, text = count + c_count, max(depth, c_depth), text + c_text
            sizes[key] = (count, depth + (1 if children or not isinstance(value, str) else 0), text)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _input_error(f"{what} is not readable: a YAML alias refers to itself", file=label)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
        if len(on_path) > MAX_YAML_DEPTH:
            raise _input_error(f"{what} is nested more than {MAX_YAML_DEPTH} levels deep", file=label)
    count, depth, text = sizes[id(root)]
    aliased = count - len(sizes)
    if depth > MAX_YAML_DEPTH:
        raise _input_error(f"{what} is nested more than {MAX_YAML_DEPTH} levels deep (through aliases)", file=label)
    if aliased > 100 and count > 1000 and aliased / count > allowed_alias_ratio(count):
        raise _input_error(f"{what} is refused: {EXCESSIVE_ALIASING}", file=label)
    if text > MAX_ALIAS_TEXT + MAX_INPUT_BYTES:
        raise _input_error(
            f"{what} is refused: aliases repeat more than {_size_text(MAX_ALIAS_TEXT)} of text", file=label
        )


__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_YAML_DEPTH",
    "allowed_alias_ratio",
    "check_yaml_graph",
    "decode",
    "open_regular",
    "read_bytes",
    "read_bytes_stat",
    "read_fd",
    "read_input",
]
