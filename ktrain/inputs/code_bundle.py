"""`--code PATH`: local files that travel with the job, as ConfigMaps mounted into its pods.

What is packed: each PATH (a file, or a directory walked recursively) lands in the code directory
at its path relative to the current directory (`--code .` is the whole tree; a PATH outside the
current directory lands under its own name). Left out: `.git/`, `__pycache__/`, and whatever a
`.gitignore` or `.ktrainignore` on the way says (git's rules, read with `pathspec`). Refused, unless
named as a file or matched by `--code-include PATTERN`: likely secrets (`.env`, keys, cloud and
registry credentials, any file holding a private-key block). Also refused: symlinks that leave the
tree, special files, names that are not UTF-8, one file over a ConfigMap's size, more than
`MAX_TOTAL_BYTES` in all.

How it travels: files are ConfigMap keys (UTF-8 text in `data`, anything else in `binaryData`),
packed in path order into as few ConfigMaps as fit under the API server's 1 MiB limit, named
`<job>-code-<digest>` (`-<i>` when there are several): the digest covers every path, mode and byte,
so the same tree gives the same names and bytes whatever its mtimes, walk order or umask. One
projected volume joins them back into one read-only directory, `MOUNT_PATH`, with each key at its
path: no archive to unpack, nothing for the image to provide, and MPI workers see the same files
at the same path as the launcher.
"""

from __future__ import annotations

import os
from hashlib import sha256  # only with --code: not on the plain render path
from typing import Any

from ktrain import constants as c
from ktrain.errors import InputError, UsageError
from ktrain.util.structs import struct

Obj = dict[str, Any]

MOUNT_PATH = "/opt/ktrain/code"
VOLUME_NAME = "ktrain-code"
CODE_LABEL = c.CODE_DIGEST_KEY  # on the code ConfigMaps: the digest of what they hold
# The API server refuses a ConfigMap whose data + binaryData exceed 1 MiB (1,048,576 bytes);
# keys and the object's other fields need a little room.
MAX_CONFIGMAP_BYTES = 1_000_000
MAX_TOTAL_BYTES = 8 * 1024 * 1024
ALWAYS_IGNORED_DIRS = (".git", "__pycache__", ".hg", ".svn")
IGNORE_FILES = (".gitignore", ".ktrainignore")
# Likely secrets, by name (gitignore syntax, matched against the path in the code directory).
SECRET_PATTERNS = (
    ".env",
    ".env.*",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    ".aws/credentials",
    ".aws/config",
    ".docker/config.json",
    ".kube/config",
    "kubeconfig",
    "*.kubeconfig",
    "credentials.json",
    "application_default_credentials.json",
    "service-account*.json",
    "*-sa-key.json",
    ".htpasswd",
)
# A PEM private key's header line (RSA, EC, OPENSSH, ENCRYPTED, plain PKCS#8).
PRIVATE_KEY_HEADER = rb"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----"
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")


@struct
class CodeFile:
    path: str  # relative, "/"-separated: where it lands under MOUNT_PATH
    data: bytes
    executable: bool


@struct
class CodeBundle:
    files: list[CodeFile]

    @property
    def size(self) -> int:
        return sum(len(f.data) for f in self.files)

    def digest(self) -> str:
        cached = self.__dict__.get("_digest")  # the files do not change once read
        if cached is not None:
            return str(cached)
        h = sha256()
        for f in self.files:
            h.update(f.path.encode() + b"\0" + (b"x" if f.executable else b"-") + len(f.data).to_bytes(8, "big"))
            h.update(f.data)
        self.__dict__["_digest"] = h.hexdigest()[:10]
        return str(self.__dict__["_digest"])


def _spec(lines: list[str]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _read_ignore_rules(directory: str) -> list[str]:
    lines: list[str] = []
    for name in IGNORE_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    lines += fh.read(1024 * 1024).splitlines()
            except OSError as exc:
                raise InputError(f"cannot read {name}: {exc.strerror}", file=path) from None
    return lines


def _landing(path: str, cwd: str) -> str:
    """Where PATH lands in the code directory: relative to the current directory, else its name."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, cwd)
    if rel == os.curdir:
        return ""
    if rel.startswith(os.pardir + os.sep) or rel == os.pardir or os.path.isabs(rel):
        return os.path.basename(absolute.rstrip(os.sep))
    return rel.replace(os.sep, "/")


def _check_name(path: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise InputError(f"--code: file name is not UTF-8: {shown!r}", hint="rename the file") from None


def _is_secret(rel: str, data: bytes, secret_spec: Any) -> bool:
    if secret_spec.match_file(rel):
        return True
    import re

    return b"-----BEGIN " in data and re.search(PRIVATE_KEY_HEADER, data) is not None


def _read_file(path: str, shown: str) -> tuple[bytes, bool]:
    """A regular file's bytes (the shared bounded reader's primitives) and its executable bit."""
    from ktrain.inputs.reading import open_regular, read_fd

    try:
        fd, info = open_regular(path)
    except ValueError as exc:
        raise InputError(f"--code: {shown} is {exc}") from None
    except OSError as exc:
        raise InputError(f"--code: cannot read {shown}: {exc.strerror or exc}") from None
    try:
        data = None if info.st_size > MAX_CONFIGMAP_BYTES else read_fd(fd, MAX_CONFIGMAP_BYTES)
    except OSError as exc:
        raise InputError(f"--code: cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if data is None:
        raise InputError(
            f"--code: {shown} is {max(info.st_size, MAX_CONFIGMAP_BYTES + 1):,} bytes, more than one ConfigMap "
            f"holds ({MAX_CONFIGMAP_BYTES:,})",
            hint="put large files in the image or on a volume (e.g. a dataset initializer)",
        )
    return data, bool(info.st_mode & 0o111)


def collect(paths: list[str], include: list[str] | None = None, cwd: str | None = None) -> CodeBundle:
    """Read the files of `--code PATH...` (see the module docstring)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    secret_spec = _spec(list(SECRET_PATTERNS))
    include_spec = _spec(list(include or []))
    found: dict[str, CodeFile] = {}
    refused: list[str] = []

    def add(real_path: str, rel: str, *, explicit: bool) -> None:
        _check_name(rel)
        data, executable = _read_file(real_path, rel)
        if not explicit and not include_spec.match_file(rel) and _is_secret(rel, data, secret_spec):
            refused.append(rel)
            return
        previous = found.get(rel)
        if previous is not None and previous.data != data:
            raise UsageError(f"--code: two different files land at {rel!r}", hint="give each --code path once")
        found[rel] = CodeFile(path=rel, data=data, executable=executable)

    for given in paths:
        given = os.path.join(cwd, given)  # relative paths are relative to `cwd`
        if not os.path.lexists(given):
            raise InputError(f"--code: no such file or directory: {given}")
        landing = _landing(given, cwd)
        if not os.path.isdir(given):
            if os.path.islink(given) and not os.path.isfile(given):
                raise InputError(f"--code: {given} is a broken symlink")
            add(os.path.realpath(given), landing or os.path.basename(given), explicit=True)
            continue
        root = os.path.realpath(given)
        visited = {root}
        # (directory on disk, its path in the code directory, ignore rules in force with their base)
        stack: list[tuple[str, str, list[tuple[str, Any]]]] = [(root, landing, [])]
        while stack:
            directory, rel_dir, rules = stack.pop()
            own = _read_ignore_rules(directory)
            if own:
                rules = [*rules, (rel_dir, _spec(own))]
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError as exc:
                raise InputError(f"--code: cannot list {rel_dir or given}: {exc.strerror}") from None
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                _check_name(rel)
                is_dir = entry.is_dir(follow_symlinks=True)
                if is_dir and entry.name in ALWAYS_IGNORED_DIRS:
                    continue
                if _ignored(rel, is_dir, rules):
                    continue
                real = os.path.realpath(entry.path)
                if entry.is_symlink() and not (real == root or real.startswith(root + os.sep)):
                    raise InputError(
                        f"--code: {rel} is a symlink that leaves the tree ({real})",
                        hint="copy the file into the tree, or remove the link",
                    )
                if is_dir:
                    if real not in visited:
                        visited.add(real)
                        stack.append((real, rel, rules))
                    continue
                if entry.is_symlink() and not os.path.exists(real):
                    raise InputError(f"--code: {rel} is a broken symlink")
                add(real, rel, explicit=False)
    if refused:
        raise UsageError(
            "--code: refusing files that look like secrets: " + ", ".join(sorted(refused)[:10]),
            hint="leave them out (.ktrainignore), or send them anyway with --code-include PATTERN "
            "(a Kubernetes Secret is the better home for credentials)",
        )
    bundle = CodeBundle(files=sorted(found.values(), key=lambda f: f.path))
    if not bundle.files:
        raise UsageError("--code: no files to send (everything was ignored)")
    if bundle.size > MAX_TOTAL_BYTES:
        largest = sorted(bundle.files, key=lambda f: -len(f.data))[:5]
        raise UsageError(
            f"--code: {bundle.size:,} bytes is more than ktrain sends with a job ({MAX_TOTAL_BYTES:,}); "
            "largest: " + ", ".join(f"{f.path} ({len(f.data):,})" for f in largest),
            hint="ignore them (.ktrainignore), or put them in the image or on a volume",
        )
    return bundle


def _ignored(rel: str, is_dir: bool, rules: list[tuple[str, Any]]) -> bool:
    ignored = False
    for base, spec in rules:
        sub = rel[len(base) + 1 :] if base else rel
        if is_dir:
            sub += "/"
        result = spec.check_file(sub)
        if result.include is not None:
            ignored = bool(result.include)
    return ignored


def _key(path: str) -> str:
    """A ConfigMap key for `path` (keys allow only [-._a-zA-Z0-9]); the hash keeps them unique."""
    readable = "".join(ch if ch in _KEY_CHARS else "_" for ch in path.replace("/", "."))[-200:].lstrip(".") or "f"
    return f"{readable}.{sha256(path.encode()).hexdigest()[:8]}"


def _is_text(data: bytes) -> bool:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    # str.isprintable runs in C over the whole text; newlines and tabs are the only other text
    return text.replace("\n", "").replace("\t", "").isprintable()


def config_maps(bundle: CodeBundle, job_name: str, namespace: str) -> list[Obj]:
    """The ConfigMaps holding the bundle, packed in path order."""
    groups: list[list[CodeFile]] = [[]]
    used = 0
    for f in bundle.files:
        if groups[-1] and used + len(f.data) > MAX_CONFIGMAP_BYTES:
            groups.append([])
            used = 0
        groups[-1].append(f)
        used += len(f.data)
    base = f"{job_name}-code-{bundle.digest()}"
    out = []
    for index, group in enumerate(groups):
        import base64

        data: Obj = {}
        binary: Obj = {}
        for f in group:
            if _is_text(f.data):
                data[_key(f.path)] = f.data.decode("utf-8")
            else:
                binary[_key(f.path)] = base64.b64encode(f.data).decode("ascii")
        cm: Obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": base if len(groups) == 1 else f"{base}-{index}",
                "namespace": namespace,
                "labels": {CODE_LABEL: bundle.digest()},
            },
        }
        if data:
            cm["data"] = data
        if binary:
            cm["binaryData"] = binary
        out.append(cm)
    return out


def is_code(obj: Obj) -> bool:
    """Whether a rendered object is one of `--code`'s ConfigMaps."""
    return CODE_LABEL in ((obj.get("metadata") or {}).get("labels") or {})


def volume(bundle: CodeBundle, maps: list[Obj]) -> Obj:
    """One read-only directory joining every ConfigMap, each key at its path."""
    by_key = {_key(f.path): f for f in bundle.files}
    sources = []
    for cm in maps:
        keys = sorted([*(cm.get("data") or {}), *(cm.get("binaryData") or {})])
        items = []
        for key in keys:
            f = by_key[key]
            item: Obj = {"key": key, "path": f.path}
            if f.executable:
                item["mode"] = 0o755
            items.append(item)
        sources.append({"configMap": {"name": cm["metadata"]["name"], "items": items}})
    return {"name": VOLUME_NAME, "projected": {"defaultMode": 0o644, "sources": sources}}
