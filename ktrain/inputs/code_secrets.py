"""Secrets in the files `--code` sends, found by content with detect-secrets (Yelp's maintained
detector): its plugins for cloud keys (AWS, Azure, IBM, ...), tokens (GitHub, GitLab, OpenAI,
Slack, Stripe, PyPI, npm, JWT, ...), private keys, passwords in URLs and assignments, and
high-entropy strings; each file read as its `scan_file` reads one (config and YAML files through
its transformers). What ktrain changes: no public-IP plugin (an address is not a credential);
instead of the `is_indirect_reference` filter (which drops every line shaped `x = f(...)`, so
`client = OpenAI(api_key="sk-...")` would pass) its own filters keep references, placeholders and
data from being taken for secrets (ktrain.inputs.secret_policy). A line detect-secrets should not
flag takes its usual `# pragma: allowlist secret` comment. A finding is reported as path, line
and kind, never the value.

Fast without changing a finding (tests/unit/inputs/test_code_secrets.py checks it against `scan_file`):
detect-secrets runs every plugin's expressions on every line, about ten seconds a megabyte.
ktrain first screens all the files at once (`_screen`): a few passes of re2 and bytes.find over
their bytes, a necessary condition for each plugin's expressions (`PROBES`: parts of them, with
looser character classes) and for its high-entropy strings (a quoted run with enough distinct
characters), about ten milliseconds a megabyte. Only the lines it flags meet detect-secrets'
plugins and filters, and detect-secrets is imported only when a line is flagged or a file is one
its transformers read (YAML, ini-shaped). Its `requests` import (for verifying secrets over the
network, which ktrain never does) is kept out. And the content hashes of the files scanned are
remembered with what was found in ktrain's cache (`code-secrets/`, keyed by detect-secrets'
version and these settings): a tree sent again is scanned only where it changed.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import sys
from bisect import bisect_right
from dataclasses import dataclass
from hashlib import sha256
from importlib.util import find_spec
from types import ModuleType
from typing import TYPE_CHECKING

from ktrain.inputs.parse_cache import cache_dir, read_json, write_json

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

SCHEME = "2"  # part of the cache key: change it when the settings below change
EXCLUDED_PLUGINS = frozenset({"IPPublicDetector"})
FILTERS = (
    "detect_secrets.filters.heuristic.is_non_text_file",
    "detect_secrets.filters.allowlist.is_line_allowlisted",
    "detect_secrets.filters.heuristic.is_sequential_string",
    "detect_secrets.filters.heuristic.is_potential_uuid",
    "detect_secrets.filters.heuristic.is_likely_id_string",
    "detect_secrets.filters.heuristic.is_templated_secret",
    "detect_secrets.filters.heuristic.is_prefixed_with_dollar_sign",
    "detect_secrets.filters.heuristic.is_lock_file",
    "detect_secrets.filters.heuristic.is_not_alphanumeric_string",
    "detect_secrets.filters.heuristic.is_swagger_file",
    "ktrain.inputs.secret_policy.is_not_a_credential",
    "ktrain.inputs.secret_policy.is_key_header_alone",
)
MAX_REMEMBERED = 50_000  # content hashes kept in the cache
# The detect-secrets release whose expressions PROBES was written against (tests check every
# expression of the installed one); with another, every line goes to the plugins (exact, slow).
SCREENED_VERSION = "1.5.0"
# detect-secrets' default entropy limits: a string of k distinct characters has at most
# log2(k) bits each, so only a run of more than 2**limit distinct characters can be reported.
BASE64_LIMIT = 4.5
HEX_LIMIT = 3.0
BASE64_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/\\-_="
HEX_CHARS = b"0123456789abcdefABCDEF"
# detect-secrets' file types (util/filetype.py): a file of none of them is "other", which its
# eager config transformer may read.
KNOWN_EXTENSIONS = frozenset(
    {".cls", ".example", ".eyaml", ".go", ".java", ".js", ".m", ".php", ".py", ".pyi", ".swift", ".tf", ".yaml"}
    | {".yml", ".cs", ".c", ".cpp", ".cnf", ".conf", ".cfg", ".cf", ".ini", ".properties", ".toml"}
)
YAML_EXTENSIONS = frozenset({".yaml", ".yml", ".eyaml"})


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    kind: str  # detect-secrets' secret type, e.g. "AWS Access Key"


def scan(files: list[tuple[str, bytes]]) -> list[Finding]:
    """The secrets in `files` ((path in the code directory, content)), sorted by path and line."""
    digests = {path: sha256(data).hexdigest()[:32] for path, data in files}
    key = _cache_key()
    known = _remembered(key)
    todo = [(path, data) for path, data in files if digests[path] not in known]
    findings = [
        Finding(path=path, line=line, kind=kind)
        for path, _ in files
        if digests[path] in known
        for line, kind in known[digests[path]]
    ]
    if todo:
        fresh = _detect(todo)
        findings += fresh
        if key:
            by_file: dict[str, list[tuple[int, str]]] = {path: [] for path, _ in todo}
            for f in fresh:
                by_file[f.path].append((f.line, f.kind))
            _remember(key, known, {digests[path]: sorted(set(lines)) for path, lines in by_file.items()})
    return sorted(set(findings), key=lambda f: (f.path, f.line, f.kind))


# Token formats detect-secrets has no plugin for (its NpmDetector sees only an .npmrc's
# `//registry/:_authToken=` line, and no plugin knows Hugging Face's), refused wherever they stand
# (a comment, an f-string, `token: ...`), as the README promises for known formats: a prefix and
# a fixed-length run of letters and digits with no word character around it, and at least 10
# distinct characters (a placeholder such as `hf_xxx...` is not a token). npm: `npm_` + 36
# (npm's granular and classic tokens); Hugging Face: `hf_` + 34 (huggingface_hub's User Access Tokens).
OWN_FORMATS = (("npm Token", b"npm_", 36), ("Hugging Face Token", b"hf_", 34))


def _own_formats(files: list[tuple[str, bytes]]) -> list[Finding]:
    expression = re.compile(
        rb"(?<![A-Za-z0-9_])("
        + b"|".join(p + b"[A-Za-z0-9]{%d}" % n for _, p, n in OWN_FORMATS)
        + rb")(?![A-Za-z0-9_])"
    )
    found: list[Finding] = []
    for path, data in files:
        if b"npm_" not in data and b"hf_" not in data:
            continue
        for match in expression.finditer(data):
            token = match.group(1)
            if len(set(token.partition(b"_")[2])) < 10:
                continue
            start = data.rfind(b"\n", 0, match.start()) + 1
            end = data.find(b"\n", match.end())
            if b"pragma: allowlist secret" in data[start : end if end >= 0 else len(data)]:
                continue
            kind = next(k for k, prefix, _ in OWN_FORMATS if token.startswith(prefix))
            found.append(Finding(path=path, line=data.count(b"\n", 0, match.start()) + 1, kind=kind))
    return found


def _detect(files: list[tuple[str, bytes]]) -> list[Finding]:
    """What detect-secrets' `scan_file` finds in each file, with ktrain's settings, and the
    token formats of OWN_FORMATS."""
    own = _own_formats(files)
    return own + _detect_secrets(files)


def _detect_secrets(files: list[tuple[str, bytes]]) -> list[Finding]:
    plain: list[tuple[str, str]] = []
    views: list[bytes] = []
    transformed: list[tuple[str, str]] = []
    for path, data in files:
        text = _text(data)
        if text is None:
            continue  # not UTF-8: scan_file skips it
        if _may_transform(path, text):
            transformed.append((path, text))
        else:
            plain.append((path, text))
            views.append(data if data.isascii() and b"\r" not in data else _view(text))
    exact = _screened_version() != SCREENED_VERSION
    flagged = [
        (path, text, lines)
        for (path, text), lines in zip(plain, _screen(views) if plain and not exact else [], strict=False)
        if lines
    ]
    if exact:
        transformed += plain
    if not flagged and not transformed:
        return []
    _import_detect_secrets()
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import _is_filtered_out
    from detect_secrets.settings import get_plugins, transient_settings

    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    plugins_used = [{"name": cls.__name__} for cls in classes if cls.__name__ not in EXCLUDED_PLUGINS]
    found: list[Finding] = []
    with transient_settings({"plugins_used": plugins_used, "filters_used": [{"path": p} for p in FILTERS]}) as settings:
        # The content is in memory, under its path in the code directory: not a file to check for.
        settings.disable_filters("detect_secrets.filters.common.is_invalid_file")
        plugins = list(get_plugins())
        for path, text, lines in flagged:
            if not _is_filtered_out(required_filter_parameters=["filename"], filename=path):
                found += _scan_lines(path, _readlines(text), lines, plugins)
        for path, text in transformed:
            found += _scan_transformed(path, text, plugins, exact)
    return found


def _text(data: bytes) -> str | None:
    """`data` as scan_file reads it (text mode: UTF-8, universal newlines); None if not UTF-8."""
    try:
        text = data.decode("ascii") if data.isascii() else data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _readlines(text: str) -> list[str]:
    """`text`'s lines as readlines gives them: split after each "\\n" only."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _may_transform(path: str, text: str) -> bool:
    """Whether one of detect-secrets' transformers could read the file (then its lines are the
    transformer's): YAML by name; a config file (configparser) only if its first line that is
    not blank or a comment opens a section; the eager config reader, for a file of no known
    type, only if every line could be part of an ini file (a section, `key = value`, `key:
    value`, an indented continuation, a comment)."""
    extension = os.path.splitext(path)[1]
    if extension in YAML_EXTENSIONS:
        return True
    eager = extension not in KNOWN_EXTENSIONS
    first = True
    for line in _lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if first:
            if stripped.startswith("["):
                return True
            if not eager:
                return False
            first = False
        if not (line[:1].isspace() or stripped.startswith("[") or "=" in stripped or ":" in stripped):
            return False
    return eager and not first


def _lines(text: str) -> Iterator[str]:
    """`text`'s lines (split at "\\n"), one at a time: most files are judged by their first."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _scan_transformed(path: str, text: str, plugins: list[Any], exact: bool) -> list[Finding]:
    """scan_file on a file a transformer may read: its lines as the transformers give them, else
    as read; if that finds nothing, the eager transformers' lines."""
    from detect_secrets.core.scan import _is_filtered_out
    from detect_secrets.transformers import get_transformed_file

    if _is_filtered_out(required_filter_parameters=["filename"], filename=path):
        return []
    handle: Any = io.StringIO(text)
    handle.name = path
    for eager in (False, True):
        handle.seek(0)
        lines = get_transformed_file(handle, use_eager_transformers=eager)
        if not lines:
            if eager:
                return []
            lines = _readlines(text)
        joined = "\n".join(line.rstrip().replace("\n", " ") for line in lines)
        flagged = set(range(len(lines))) if exact else _screen([_view(joined)])[0]
        found = _scan_lines(path, lines, flagged, plugins)
        if found:
            return found
    return []


def _scan_lines(path: str, lines: list[str], flagged: set[int], plugins: list[Any]) -> list[Finding]:
    """detect-secrets' `_process_line_based_plugins` on the flagged lines (0-based) of `lines`: the
    others hold nothing any plugin reports. Its filters run only on what a plugin reports (they
    only remove), so a line no plugin reports on costs one call per plugin."""
    from detect_secrets.core.scan import _is_filtered_out
    from detect_secrets.util.code_snippet import get_code_snippet

    found: list[Finding] = []
    for index in sorted(flagged):
        if index >= len(lines):
            continue
        number = index + 1
        line = lines[index].rstrip()
        snippet = get_code_snippet(lines=lines, line_number=number)
        line_passed: bool | None = None
        for plugin in plugins:
            secrets = plugin.analyze_line(filename=path, line=line, line_number=number, context=snippet)
            if not secrets:
                continue
            if line_passed is None:
                line_passed = not _is_filtered_out(
                    required_filter_parameters=["line"], filename=path, line=line, context=snippet
                )
            if not line_passed:
                break
            for secret in secrets:
                if _is_filtered_out(
                    required_filter_parameters=["secret"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                ) or _is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=snippet,
                ):
                    continue
                found.append(Finding(path=path, line=number, kind=secret.type))
    return found


def _ci(word: str) -> bytes:
    """An expression (`word`, lower case, regular-expression syntax kept) for lower-cased bytes:
    the letters Python's IGNORECASE also matches with a non-ASCII character (i: İ ı, k: K, s: ſ)
    and non-ASCII letters take any high byte (the screen sees each non-ASCII character as one
    byte, `_view`)."""
    out = []
    for ch in word:
        if ord(ch) > 127:
            out.append(rb"[\x80-\xff]")
        elif ch in "iks":
            out.append(b"[" + ch.encode() + rb"\x80-\xff]")
        else:
            out.append(ch.encode())
    return b"".join(out)


_NOT_URL = rb"[^:/?#\[\]@!$&'()*+,;=\t\n\x0b\x0c\r \x1c-\x1f]"  # BasicAuth's class: \s only ASCII (looser)
# Each detect-secrets 1.5.0 expression (plugin: expression) and the probe that every line it
# matches also matches: a part of it (a match of the whole holds a match of each part) with
# looser classes (\d, \w, \s also take any high byte; look-arounds and anchors dropped).
# Case-sensitive probes run on the bytes, case-insensitive ones on the lower-cased bytes.
PROBES: tuple[tuple[str, bytes], ...] = (
    # Artifactory: (?:\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\s|"|$) ; (...)AP[\dABCDEF][a-zA-Z0-9]{8,}(...)
    ("case", rb"AKC[a-zA-Z0-9]{10}"),
    ("case", rb"AP[0-9A-F\x80-\xff][a-zA-Z0-9]{8}"),
    # AWSKeyDetector: (?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}
    ("case", rb"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"),
    # AWSKeyDetector (ignore case): aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?['"]([0-9a-zA-Z/+]{40})['"]
    ("nocase", _ci("aws") + rb"[^\n]{0,20}(?:" + b"|".join(_ci(w) for w in ("key", "pw", "pass", "token")) + b")"),
    # AzureStorageKeyDetector: AccountKey=[a-zA-Z0-9+\/=]{88}
    ("case", rb"AccountKey=[a-zA-Z0-9+/=]{88}"),
    # BasicAuthDetector: ://[^:/\?\#\[\]@!\$\&'\(\)\*\+,;=\s]+:([^...\s]+)@ ; it also holds every match of
    # CloudantDetector's (?:https?\:\/\/)[\w\-]+\:([0-9a-f]{64}|[a-z]{24})\@[\w\-]+\.cloudant\.com
    ("case", b"://" + _NOT_URL + b"+:" + _NOT_URL + b"+@"),
    # GitHubTokenDetector: (ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}
    ("case", rb"gh[pousr]_[A-Za-z0-9_]{36}"),
    # GitLabTokenDetector: (glpat|gldt|glft|glsoat|glrt)-..., GR1348941..., glcbt-..., glimt-..., glptt-...,
    # glagent-..., gloas-...
    ("case", rb"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941"),
    # IbmCloudIamDetector, IbmCosHmacDetector, CloudantDetector, SoftlayerDetector (ignore case):
    # ...(?:key|pwd|password|pass|token)(?:"|\'|)(?:\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\'|)([<a run of 24 to 64>])
    (
        "nocase",
        b"(?:"
        + b"|".join(_ci(w) for w in ("key", "pwd", "pw", "password", "pass", "token"))
        + rb")[\"']?\]? *(?:=|:|:=|=>| +|::) *[\"']?[a-z0-9_\x80-\xff-]{24}",
    ),
    # JwtTokenDetector: eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?
    ("case", rb"eyJ"),
    # MailchimpDetector: [0-9a-z]{32}-us[0-9]{1,2}
    ("case", rb"-us[0-9]"),
    # NpmDetector: \/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*
    ("case", rb"/:_authToken="),
    # OpenAIDetector: sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}
    ("case", rb"T3BlbkFJ"),
    # PrivateKeyDetector: BEGIN (DSA |EC |OPENSSH |PGP |RSA |SSH2 ENCRYPTED |)PRIVATE KEY, PuTTY-User-Key-File-2
    ("case", rb"PRIVATE KEY|PuTTY-User-Key-File-2"),
    # PypiTokenDetector: pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,} ; pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}
    ("case", rb"pypi-AgE"),
    # SendGridDetector: SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}
    ("case", rb"SG\.[a-zA-Z0-9_-]{22}\."),
    # SlackDetector (ignore case): xox(?:a|b|p|o|s|r)-(?:\d+-)+[a-z0-9]+ ; https://hooks\.slack\.com/services/T...
    ("nocase", b"xox[abposr\\x80-\\xff]-|" + _ci("hooks") + rb"\." + _ci("slack") + rb"\.com/"),
    # SoftlayerDetector (ignore case): (?:http|https)://api.softlayer.com/soap/(?:v3|v3.1)/([a-z0-9]{64})
    ("nocase", rb"://api[^\n]" + _ci("softlayer")),
    # SquareOAuthDetector: sq0csp-[0-9A-Za-z\\\-_]{43}
    ("case", rb"sq0csp-"),
    # StripeDetector: (?:r|s)k_live_[0-9a-zA-Z]{24}
    ("case", rb"k_live_"),
    # TwilioKeyDetector: AC[a-z0-9]{32} ; SK[a-z0-9]{32}
    ("case", rb"(?:AC|SK)[a-z0-9]{32}"),
    # KeywordDetector: every expression holds (or, case-sensitive, holds in lower case) one of
    # (api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|private_?key|
    # client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|secret|contraseña|contrasena)
    (
        "nocase",
        b"(?:"
        + b"|".join(
            [
                _ci(w + "_?key")
                for w in ("api", "auth", "service", "account", "db", "database", "priv", "private", "client")
            ]
            + [_ci(w + "_?pass") for w in ("db", "database", "key")]
            + [_ci(w) for w in ("password", "passwd", "pwd", "secret", "contraseña", "contrasena")]
        )
        + b")",
    ),
)
# DiscordBotTokenDetector: [MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}
# TelegramBotTokenDetector: \d{8,10}:[0-9A-Za-z_-]{35}
PROBES += (
    ("case", rb"\.[A-Za-z0-9_\x80-\xff-]{6}\.[A-Za-z0-9_\x80-\xff-]{27}"),
    ("case", rb":[0-9A-Za-z_-]{35}"),
)
# The high-entropy plugins report a quoted run of their characters (([\'"])([charset]+)(\1)) with
# more than 2**limit distinct ones: looked for on a copy where base64 characters are "a", hex
# digits "h" and quotes "q" (QUOTED); the closing quote is checked after, unconsumed, since it
# may open the next string.
QUOTED = rb"q[ah]{%d,}|qh{%d,}" % (int(2**BASE64_LIMIT) + 1, int(2**HEX_LIMIT) + 1)
_compiled: dict[str, Any] = {}


def _view(text: str) -> bytes:
    """`text` as the screen reads it: one byte a character, any non-ASCII one a byte >= 0x80."""
    if text.isascii():
        return text.encode("ascii")

    try:
        codecs.lookup_error("ktrain-high-byte")
    except LookupError:
        codecs.register_error("ktrain-high-byte", lambda e: ("\x80" * (e.end - e.start), e.end))  # type: ignore[attr-defined]
    return text.encode("latin-1", "ktrain-high-byte")


def _probes() -> tuple[Any, Any, bytes]:
    if not _compiled:
        import re2

        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1
        options.never_capture = True
        case = [p for kind, p in PROBES if kind == "case"]
        nocase = [p for kind, p in PROBES if kind == "nocase"]
        table = bytearray(b" " * 256)
        for c in BASE64_CHARS:
            table[c] = ord("a")
        for c in HEX_CHARS:
            table[c] = ord("h")
        table[ord("'")] = table[ord('"')] = ord("q")
        _compiled["probes"] = (
            re2.compile(b"|".join([*case, b"(?i:" + b"|".join(nocase) + b")"]), options=options),
            re2.compile(QUOTED, options=options),
            bytes(table),
        )
    return _compiled["probes"]  # type: ignore[no-any-return]


def _screen(views: list[bytes]) -> list[set[int]]:
    """For each text (as `_view` gives it), the lines (0-based) where a plugin could report
    something: a superset of the lines detect-secrets' plugins report on (as scan_file reads them:
    split at "\\n", right-stripped), found in two passes of re2 over all the texts at once."""
    probes, quoted, table = _probes()
    data = b"\n".join(views)  # no probe matches across a line
    hits = [m.start() for m in probes.finditer(data)]
    copy = data.translate(table)
    base64_least, hex_least = 2**BASE64_LIMIT, 2**HEX_LIMIT
    for m in quoted.finditer(copy):
        start, end = m.start(), m.end()
        if copy[end : end + 1] != b"q":
            continue
        distinct = len(set(data[start + 1 : end]))
        if distinct > base64_least or (distinct > hex_least and b"a" not in copy[start + 1 : end]):
            hits.append(start)
    firsts = [0]  # each text's first line, counted over all of them
    for view in views:
        firsts.append(firsts[-1] + view.count(b"\n") + 1)
    out: list[set[int]] = [set() for _ in views]
    line, previous = 0, 0
    for at in sorted(hits):
        line += data.count(b"\n", previous, at)
        previous = at
        index = bisect_right(firsts, line) - 1
        out[index].add(line - firsts[index])
    return out


def _screened_version() -> str:
    """The installed detect-secrets' version, read without importing it ("" if unknown)."""
    source = _version_file()
    marker = source.find(b"VERSION")
    if marker < 0:
        return ""
    quoted = source[marker:].split(b"\n", 1)[0].split(b"=", 1)[-1].strip().strip(b"'\"")
    return quoted.decode("ascii", "replace")


def _import_detect_secrets() -> None:
    """Import detect-secrets without `requests`: it imports it to verify secrets over the network,
    which ktrain never asks for (it sets no verification policy) and must never do. A stand-in
    serves the import and raises if ever called; later imports of requests get the real one."""
    if "detect_secrets.core.scan" in sys.modules or "requests" in sys.modules:
        import detect_secrets.core.scan
        import detect_secrets.transformers

        return

    class _Absent(ModuleType):
        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return _Absent(f"{self.__name__}.{name}")

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("ktrain does not verify secrets over the network")

    sys.modules["requests"] = _Absent("requests")
    try:  # every module of detect-secrets that imports requests: its plugins and filters.common
        import detect_secrets.core.plugins.util
        import detect_secrets.core.scan
        import detect_secrets.filters.common
        import detect_secrets.transformers

        detect_secrets.core.plugins.util.get_mapping_from_secret_type_to_class()  # imports every plugin
    finally:
        del sys.modules["requests"]


def _version_file() -> bytes:
    """detect-secrets' __version__.py, found without importing it (b"" if unknown)."""
    try:
        spec = find_spec("detect_secrets")
    except (ImportError, ValueError):
        return b""
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        return b""
    try:
        with open(os.path.join(locations[0], "__version__.py"), "rb") as fh:
            return fh.read(4096)
    except OSError:
        return b""


def _cache_key() -> str:
    """detect-secrets' version file, these settings and ktrain's filters; "" if unknown."""
    version = _version_file()
    if not version:
        return ""
    try:  # ktrain's filters, by their source (read, not imported: a warm render needs none of this)
        with open(os.path.join(os.path.dirname(__file__), "secret_policy.py"), "rb") as fh:
            policy = fh.read()
    except OSError:
        return ""
    settings = repr((SCHEME, sorted(EXCLUDED_PLUGINS), FILTERS, OWN_FORMATS)).encode()
    return sha256(version + b"\0" + settings + b"\0" + policy).hexdigest()[:32]


def _entry() -> str:
    return os.path.join(cache_dir(), "code-secrets", "clean.json")


def _remembered(key: str) -> dict[str, list[tuple[int, str]]]:
    """What earlier scans found, by content hash (an empty list: nothing)."""
    if not key:
        return {}

    stored = read_json(_entry(), verified=True)
    if not isinstance(stored, dict) or stored.get("key") != key or not isinstance(stored.get("files"), dict):
        return {}
    known: dict[str, list[tuple[int, str]]] = {}
    for digest, found in stored["files"].items():
        if isinstance(found, list) and all(
            isinstance(f, list) and len(f) == 2 and isinstance(f[0], int) and isinstance(f[1], str) for f in found
        ):
            known[digest] = [(f[0], f[1]) for f in found]
    return known


def _remember(key: str, known: dict[str, list[tuple[int, str]]], fresh: dict[str, list[tuple[int, str]]]) -> None:
    merged = {**known, **fresh}  # insertion order: the oldest first
    kept = list(merged.items())[-MAX_REMEMBERED:]
    write_json(_entry(), {"key": key, "files": {d: [list(f) for f in found] for d, found in kept}}, verified=True)
