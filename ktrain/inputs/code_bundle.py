"""`--code PATH`: local files that travel with the job, as ConfigMaps mounted into its pods.

What is sent: a directory PATH's contents are the code directory, each file at its path relative
to PATH (as SkyPilot's `workdir`, Ray's `working_dir` and TorchX's workspace; `--code .` is the
current directory); a file PATH lands by its name. Several PATHs merge; two different files at
one path are an error. Left out: inside a git work tree, what git leaves out (`git ls-files
--cached --others --exclude-standard`: tracked files, and untracked ones that no .gitignore on
the way up to the work tree's top, `.git/info/exclude` or `core.excludesFile` ignores); elsewhere,
what the .gitignore files in PATH and below say, as git reads them (git, through an empty
repository of ktrain's; pathspec where git is not installed, which agrees with git but for
corner cases such as a negated anchored directory). `.ktrainignore` files (same syntax) leave out
more in both cases, as do `.git/`, `__pycache__/`, `.hg/`, `.svn/`.

Refused (`CodeRefusedError`, exit code 3, whatever the reason), unless named as a file or matched
by `--code-include PATTERN`: likely secrets, by name (credential files: `.env`, keys, keystores,
cloud and registry credentials) and by content (`ktrain.inputs.code_secrets`: detect-secrets'
plugins). Refused in any case: symlinks that leave PATH or loop, special files (git lists none),
names that are not UTF-8 or that the kubelet refuses, one file over a ConfigMap's size, more
than `MAX_TOTAL_BYTES` in all.

How it travels: files are ConfigMap keys (UTF-8 text in `data`, anything else in `binaryData`),
packed in path order into as few ConfigMaps as fit under the API server's 1 MiB limit, named
`<job>-code-<digest>` (`-<i>` when there are several): the digest covers every path, mode and byte,
so the same tree gives the same names and bytes whatever its mtimes, walk order or umask. One
projected volume joins them back into one directory, each key at its path: no archive to unpack,
nothing for the image to provide, and MPI workers see the same files at the same path as the
launcher. The trainer's wrapper copies it to a writable directory at `MOUNT_PATH`
(ktrain.authoring.code_launch).
"""

from __future__ import annotations

import base64
import errno
import os
import re
import subprocess
from dataclasses import dataclass
from hashlib import sha256  # only with --code: not on the plain render path
from typing import TYPE_CHECKING

from ktrain import constants as c
from ktrain.errors import CodeRefusedError
from ktrain.inputs.parse_cache import _safe_directory, cache_dir
from ktrain.inputs.reading import open_regular, read_fd

if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj

    # Rules in force: (base, up, spec). `base` is the directory (relative to the tree sent) of the
    # ignore file; `up` its path from an ignore file above the tree (git work tree mode only).
    Rules = list[tuple[str, str, Any]]

MOUNT_PATH = "/opt/ktrain/code"
VOLUME_NAME = "ktrain-code"
CODE_LABEL = c.CODE_DIGEST_KEY  # on the code ConfigMaps: the digest of what they hold
# The API server refuses a ConfigMap whose data + binaryData exceed 1 MiB (1,048,576 bytes);
# keys and the object's other fields need a little room.
MAX_CONFIGMAP_BYTES = 1_000_000
MAX_TOTAL_BYTES = 8 * 1024 * 1024
ALWAYS_IGNORED_DIRS = frozenset((".git", "__pycache__", ".hg", ".svn"))
IGNORE_FILE = ".gitignore"
KTRAIN_IGNORE_FILE = ".ktrainignore"
GIT_TIMEOUT = 30.0  # seconds for one git command
# Credential files by name (gitignore syntax, matched against the path in the code directory):
# conventions content scanning cannot judge (binary keystores, files whose every line is short).
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
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F)) + b"\n\t"


def _secret_names() -> Any:
    """SECRET_PATTERNS as one expression, with git's meaning (tests check it against pathspec):
    a pattern without a slash matches any component of the path (a file, or a directory and so
    everything in it); one with a slash matches from the top. Only `*` is special in them. Built
    here so that a tree with no .ktrainignore and no --code-include does not import pathspec."""

    def glob(pattern: str) -> str:
        return "[^/]*".join(re.escape(part) for part in pattern.split("*"))

    anywhere = "|".join(glob(p) for p in SECRET_PATTERNS if "/" not in p)
    from_top = "|".join(glob(p) for p in SECRET_PATTERNS if "/" in p)
    return re.compile(f"(?:^|.*/)(?:{anywhere})(?:/|$)|(?:{from_top})(?:/|$)")


@dataclass
class CodeFile:
    path: str  # relative, "/"-separated: where it lands in the code directory
    data: bytes
    executable: bool
    origin: str = ""  # the file it was read from, absolute ("" when made in memory)


@dataclass
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

    def landing(self, local_path: str, cwd: str | None = None) -> str | None:
        """Where the local file `local_path` (relative to `cwd`) lands, if it is sent."""
        wanted = os.path.realpath(os.path.join(cwd or os.getcwd(), local_path))
        for f in self.files:
            if f.origin and os.path.realpath(f.origin) == wanted:
                return f.path
        return None


def _spec(lines: list[str]) -> Any:
    """Git's rules for these lines; a line git ignores (a lone `!` or backslash) is skipped, as git does."""
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):  # pathspec's GitIgnorePatternError is a ValueError
        pass
    kept = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, TypeError):
            continue
        kept.append(line)
    return pathspec.GitIgnoreSpec.from_lines(kept)


def _read_ignore_file(path: str) -> list[str]:
    if not os.path.isfile(path):
        return []
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(1024 * 1024).splitlines()
    except OSError as exc:
        raise CodeRefusedError(f"--code: cannot read {path}: {exc.strerror}") from None


def _check_name(path: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise CodeRefusedError(f"--code: file name is not UTF-8: {shown!r}", hint="rename the file") from None
    if path.startswith(".."):
        # The kubelet refuses a volume path starting with `..` (its own `..data` lives there).
        raise CodeRefusedError(f"--code: {path!r}: the kubelet refuses a name starting with '..'", hint="rename it")


def _read_file(path: str, shown: str) -> tuple[bytes, bool]:
    """A regular file's bytes (the shared bounded reader's primitives) and its executable bit."""
    try:
        fd, info = open_regular(path)
    except ValueError as exc:
        raise CodeRefusedError(f"--code: {shown} is {exc}") from None
    except OSError as exc:
        raise CodeRefusedError(f"--code: cannot read {shown}: {exc.strerror or exc}") from None
    try:
        data = None if info.st_size > MAX_CONFIGMAP_BYTES else read_fd(fd, MAX_CONFIGMAP_BYTES)
    except OSError as exc:
        raise CodeRefusedError(f"--code: cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if data is None:
        raise CodeRefusedError(
            f"--code: {shown} is {max(info.st_size, MAX_CONFIGMAP_BYTES + 1):,} bytes, more than one ConfigMap "
            f"holds ({MAX_CONFIGMAP_BYTES:,})",
            hint="put large files in the image or on a volume (e.g. a dataset initializer)",
        )
    return data, bool(info.st_mode & 0o111)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _follow(path: str, rel: str, root: str) -> str:
    """The real path of the symlink `path` (shown as `rel`), which must stay inside `root`."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CodeRefusedError(
                f"--code: {rel} is a symlink loop", hint="remove the link, or ignore it (.ktrainignore)"
            ) from None
        raise CodeRefusedError(f"--code: {rel} is a broken symlink") from None
    real = os.path.realpath(path)
    if not _inside(real, root):
        raise CodeRefusedError(
            f"--code: {rel} is a symlink that leaves the tree ({real})",
            hint="copy the file into the tree, or remove the link",
        )
    return real


def _ignored(rel: str, is_dir: bool, rules: Rules) -> bool:
    if (
        not rel.isascii()
    ):  # a name that is not UTF-8 (surrogate escapes) is matched as shown, then refused unless ignored
        rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    ignored = False
    for base, up, spec in rules:
        sub = rel[len(base) + 1 :] if base else rel
        if up:
            sub = f"{up}/{sub}"
        if is_dir:
            sub += "/"
        result = spec.check_file(sub)
        if result.include is not None:
            ignored = bool(result.include)
    return ignored


def _walk(
    root: str, prefix: str, rules: Rules, names: tuple[str, ...], ancestors: tuple[str, ...]
) -> list[tuple[str, str]]:
    """(path in the code directory, file on disk) for every file under the real directory `root`
    that the ignore files `names` (read in each directory) and `rules` leave in."""
    out: list[tuple[str, str]] = []
    # (directory on disk, its path in the code directory, rules in force, real directories above it)
    stack: list[tuple[str, str, Rules, tuple[str, ...]]] = [(root, prefix, rules, ancestors)]
    while stack:
        directory, rel_dir, in_force, above = stack.pop()
        above = (*above, directory)
        own: list[str] = []
        for name in names:
            own += _read_ignore_file(os.path.join(directory, name))
        if own:
            in_force = [*in_force, (rel_dir, "", _spec(own))]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise CodeRefusedError(f"--code: cannot list {rel_dir or root}: {exc.strerror}") from None
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            _check_name(rel)
            link = entry.is_symlink()
            real = _follow(entry.path, rel, root) if link else entry.path
            is_dir = os.path.isdir(real)
            if is_dir and entry.name in ALWAYS_IGNORED_DIRS:
                continue
            if in_force and _ignored(rel, is_dir, in_force):
                continue
            if is_dir:
                if link and real in above:
                    raise CodeRefusedError(
                        f"--code: {rel} is a symlink loop (it links to {real}, a directory it is in)",
                        hint="remove the link, or ignore it (.ktrainignore)",
                    )
                stack.append((real, rel, in_force, above))
            else:
                out.append((rel, real))
    return out


def _git(args: list[str], cwd: str) -> Any:
    git = "git"  # found on PATH by the exec (shutil.which would cost the import of shutil)
    try:
        # core.fsmonitor would run a program the repository's config names
        return subprocess.run(
            [git, "-c", "core.fsmonitor=false", *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        raise CodeRefusedError(f"--code: git took more than {GIT_TIMEOUT:.0f} s to list {cwd}") from None
    except OSError:
        return None


def _work_tree_top(root: str) -> str | None:
    """The top of the git work tree holding `root` (a `.git` directory or file on the way up)."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        top = _git(["rev-parse", "--show-toplevel"], root)  # git's own answer, under its variables
        return os.path.realpath(os.fsdecode(top.stdout.strip())) if top and top.returncode == 0 else None
    directory = root
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _empty_repository() -> str | None:
    """An empty bare repository of ktrain's (made once, in its cache): git reads a tree that is in
    no work tree through it, with the same ignore rules."""
    os.makedirs(cache_dir(), mode=0o700, exist_ok=True)
    if not _safe_directory(cache_dir()):  # only this user may write there (git reads its config)
        return None
    path = os.path.join(cache_dir(), "empty-git")
    head = os.path.join(path, "HEAD")
    if os.path.isfile(head):
        return path
    # What git needs to take a directory for a repository (objects/, refs/, HEAD), made here
    # rather than by `git init`, a process more; HEAD last, by rename, so it means "complete".
    os.makedirs(os.path.join(path, "objects"), mode=0o700, exist_ok=True)
    os.makedirs(os.path.join(path, "refs"), mode=0o700, exist_ok=True)
    partial = f"{head}.{os.getpid()}"
    with open(partial, "w") as fh:
        fh.write("ref: refs/heads/main\n")
    os.replace(partial, head)
    return path


def _git_tree(root: str) -> list[tuple[str, str]] | None:
    """What git would commit under the real directory `root` (None without git): tracked files
    and the untracked ones git's ignore rules leave in, less `.ktrainignore`'s. Outside a work
    tree git reads the tree through an empty repository of ktrain's (`--git-dir`), so the rules
    are git's own there too."""
    top_dir = _work_tree_top(root)
    listing = None
    if top_dir is not None:
        listing = _git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
        if listing is not None and listing.returncode != 0:
            listing, top_dir = None, None  # e.g. a repository git will not read (safe.directory)
    if listing is None:
        top_dir = root
        try:
            empty = _empty_repository()
        except OSError:
            empty = None
        if empty is None:
            return None
        listing = _git(
            [f"--git-dir={empty}", f"--work-tree={root}", "ls-files", "-z", "--others", "--exclude-standard"], root
        )
    if listing is None or listing.returncode != 0 or top_dir is None:
        return None
    paths = sorted({os.fsdecode(p) for p in listing.stdout.split(b"\0") if p})
    # .ktrainignore files above the tree (up to the work tree's top), then in it
    rules: Rules = []
    if _inside(root, top_dir) and root != top_dir:
        parts = os.path.relpath(root, top_dir).split(os.sep)
        for depth in range(len(parts)):
            lines = _read_ignore_file(os.path.join(top_dir, *parts[:depth], KTRAIN_IGNORE_FILE))
            if lines:
                rules.append(("", "/".join(parts[depth:]), _spec(lines)))
    inside: dict[str, Any] = {}
    for path in paths:
        if path == KTRAIN_IGNORE_FILE or path.endswith("/" + KTRAIN_IGNORE_FILE):
            lines = _read_ignore_file(os.path.join(root, path))
            if lines:
                inside[path[: -len(KTRAIN_IGNORE_FILE)].rstrip("/")] = _spec(lines)
    out: list[tuple[str, str]] = []
    for rel in paths:
        parts = rel.split("/")
        if any(p in ALWAYS_IGNORED_DIRS for p in parts[:-1]):
            continue
        in_force = rules + [
            (base, "", inside[base]) for base in ("/".join(parts[:i]) for i in range(len(parts))) if base in inside
        ]
        if in_force and _ignored(rel, False, in_force):
            continue
        _check_name(rel)
        path = os.path.join(root, rel)
        if not os.path.lexists(path):
            continue  # tracked, deleted in the work tree
        real = _follow(path, rel, root) if os.path.islink(path) else path
        if os.path.isdir(real):  # a submodule, or a link to a directory: its files, by the same rules
            if real in (root, *(os.path.join(root, *parts[:i]) for i in range(1, len(parts)))):
                raise CodeRefusedError(
                    f"--code: {rel} is a symlink loop (it links to {real}, a directory it is in)",
                    hint="remove the link, or ignore it (.ktrainignore)",
                )
            out += _walk(real, rel, in_force, (IGNORE_FILE, KTRAIN_IGNORE_FILE), (root,))
        else:
            out.append((rel, real))
    return out


def tree_files(root: str) -> list[tuple[str, str]]:
    """(path in the code directory, file on disk) for the directory `root` sent as `--code`."""
    root = os.path.realpath(root)
    listed = _git_tree(root)
    if listed is not None:
        return listed
    return _walk(root, "", [], (IGNORE_FILE, KTRAIN_IGNORE_FILE), ())


def collect(paths: list[str], include: list[str] | None = None, cwd: str | None = None) -> CodeBundle:
    """Read the files of `--code PATH...` (see the module docstring)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    secret_names = _secret_names()
    include_spec = _spec(list(include)) if include else None
    found: dict[str, CodeFile] = {}
    to_scan: list[CodeFile] = []
    by_name: list[str] = []

    def add(real_path: str, rel: str, *, explicit: bool) -> None:
        _check_name(rel)
        data, executable = _read_file(real_path, rel)
        code_file = CodeFile(path=rel, data=data, executable=executable, origin=real_path)
        previous = found.get(rel)
        if previous is not None and previous.data != data:
            raise CodeRefusedError(
                f"--code: two different files land at {rel!r} ({previous.origin} and {real_path})",
                hint="a directory's contents land at the top of the code directory, a file by its name",
            )
        found[rel] = code_file
        if explicit or (include_spec is not None and include_spec.match_file(rel)):
            return
        if secret_names.match(rel):
            by_name.append(rel)
        else:
            to_scan.append(code_file)

    for given in paths:
        path = os.path.join(cwd, given)  # relative paths are relative to `cwd`
        if not os.path.lexists(path):
            raise CodeRefusedError(f"--code: no such file or directory: {given}")
        if os.path.isdir(path):
            for rel, real in tree_files(path):
                add(real, rel, explicit=False)
            continue
        if os.path.islink(path) and not os.path.exists(path):
            raise CodeRefusedError(f"--code: {given} is a broken symlink (or a symlink loop)")
        add(os.path.realpath(path), os.path.basename(os.path.abspath(path)), explicit=True)
    problems = [f"{rel}: a credential file (by its name)" for rel in sorted(by_name)]
    if to_scan:
        from ktrain.inputs.code_secrets import scan

        problems += [f"{f.path}:{f.line}: {f.kind}" for f in scan([(f.path, f.data) for f in to_scan])]
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        raise CodeRefusedError(
            "--code: refusing files that look like secrets:\n  " + "\n  ".join(shown),
            hint="leave them out (.ktrainignore), or send them anyway with --code-include PATTERN; a line "
            "detect-secrets should not flag can end with `# pragma: allowlist secret` "
            "(a Kubernetes Secret is the better home for credentials)",
        )
    bundle = CodeBundle(files=sorted(found.values(), key=lambda f: f.path))
    if not bundle.files:
        raise CodeRefusedError("--code: no files to send (everything was ignored)")
    if bundle.size > MAX_TOTAL_BYTES:
        largest = sorted(bundle.files, key=lambda f: -len(f.data))[:5]
        raise CodeRefusedError(
            f"--code: {bundle.size:,} bytes is more than ktrain sends with a job ({MAX_TOTAL_BYTES:,}); "
            "largest: " + ", ".join(f"{f.path} ({len(f.data):,})" for f in largest),
            hint="ignore them (.ktrainignore), or put them in the image or on a volume",
        )
    return bundle


def _key(path: str) -> str:
    """A ConfigMap key for `path` (keys allow only [-._a-zA-Z0-9]); the hash keeps them unique."""
    readable = "".join(ch if ch in _KEY_CHARS else "_" for ch in path.replace("/", "."))[-200:].lstrip(".") or "f"
    return f"{readable}.{sha256(path.encode()).hexdigest()[:8]}"


def _is_text(data: bytes) -> bool:
    if data.isascii():  # printable ASCII, newlines and tabs: nothing left once they are deleted
        return not data.translate(None, _PRINTABLE_ASCII)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    # str.isprintable runs in C over the whole text; newlines and tabs are the only other text
    return text.replace("\n", "").replace("\t", "").isprintable()


def _packed(bundle: CodeBundle) -> list[tuple[Obj, Obj]]:
    """(data, binaryData) of each ConfigMap, packed in path order; worked out once a bundle (a
    render asks for the ConfigMaps twice: for the volume, then for the objects)."""
    cached = bundle.__dict__.get("_packed")
    if cached is not None:
        return cached  # type: ignore[no-any-return]

    groups: list[list[CodeFile]] = [[]]
    used = 0
    for f in bundle.files:
        if groups[-1] and used + len(f.data) > MAX_CONFIGMAP_BYTES:
            groups.append([])
            used = 0
        groups[-1].append(f)
        used += len(f.data)
    packed: list[tuple[Obj, Obj]] = []
    for group in groups:
        data: Obj = {}
        binary: Obj = {}
        for f in group:
            if _is_text(f.data):
                data[_key(f.path)] = f.data.decode("utf-8")
            else:
                binary[_key(f.path)] = base64.b64encode(f.data).decode("ascii")
        packed.append((data, binary))
    bundle.__dict__["_packed"] = packed
    return packed


def config_maps(bundle: CodeBundle, job_name: str, namespace: str) -> list[Obj]:
    """The ConfigMaps holding the bundle, packed in path order."""
    base = f"{job_name}-code-{bundle.digest()}"
    groups = _packed(bundle)
    out = []
    for index, (data, binary) in enumerate(groups):
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
            cm["data"] = dict(data)  # each caller gets its own objects
        if binary:
            cm["binaryData"] = dict(binary)
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
