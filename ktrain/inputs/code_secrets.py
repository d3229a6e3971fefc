"""Secrets in the files `--code` sends, found by content with detect-secrets (Yelp's maintained
detector): its plugins for cloud keys (AWS, Azure, IBM, ...), tokens (GitHub, GitLab, OpenAI,
Slack, Stripe, PyPI, npm, JWT, ...), private keys, passwords in URLs and assignments, and
high-entropy strings; each file read as its `scan_file` reads one (config and YAML files through
its transformers). What ktrain changes: no public-IP plugin (an address is not a credential),
and not the `is_indirect_reference` filter, which drops every line shaped `x = f(...)`, so
`client = OpenAI(api_key="sk-...")`, the commonest way a key is written down, would pass. A line
detect-secrets should not flag takes its usual `# pragma: allowlist secret` comment.

A finding is reported as path, line and kind, never the value. detect-secrets runs every
plugin's expressions on every line, about ten seconds a megabyte; ktrain runs each plugin only on
the lines that could hold a match (`_Screen`: literals read off the plugin's own expressions),
which gives the same findings (tests/unit/test_code_secrets.py checks it against `scan_file`) at
about a quarter of a second a megabyte. And the content hashes of the files scanned are
remembered with what was found in ktrain's cache (`code-secrets/`, keyed by detect-secrets'
version and these settings): a tree sent again is scanned only where it changed, and
detect-secrets is not even imported when nothing changed.
"""

from __future__ import annotations

import os
from hashlib import sha256

from ktrain.util.structs import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEME = "1"  # part of the cache key: change it when the settings below change
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
)
MAX_REMEMBERED = 50_000  # content hashes kept in the cache


@struct(frozen=True)
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


def _detect(files: list[tuple[str, bytes]]) -> list[Finding]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import get_plugins, transient_settings

    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    plugins = [{"name": cls.__name__} for cls in classes if cls.__name__ not in EXCLUDED_PLUGINS]
    found: list[Finding] = []
    with transient_settings({"plugins_used": plugins, "filters_used": [{"path": p} for p in FILTERS]}) as settings:
        # The content is in memory, under its path in the code directory: not a file to check for.
        settings.disable_filters("detect_secrets.filters.common.is_invalid_file")
        screens = [_Screen(plugin) for plugin in get_plugins()]
        for path, data in files:
            found += _scan_file(path, data, screens)
    return found


def _scan_file(path: str, data: bytes, screens: list[_Screen]) -> list[Finding]:
    """detect-secrets' `scan_file`, on content in memory: lines as its transformers give them
    (config files, YAML), else as read; if that finds nothing, its eager transformers' lines.
    Each plugin runs only on the lines its screen lets through (`_Screen`)."""
    import io

    from detect_secrets.core.scan import _is_filtered_out
    from detect_secrets.transformers import get_transformed_file

    try:
        # text mode, as scan_file opens the file: universal newlines; a binary file is skipped
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
    except UnicodeDecodeError:
        return []
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
            handle.seek(0)
            lines = handle.readlines()  # as scan_file reads: split at "\n" only
        found = _scan_lines(path, lines, screens)
        if found:
            return found
    return []


def _scan_lines(path: str, lines: list[str], screens: list[_Screen]) -> list[Finding]:
    """detect-secrets' `_process_line_based_plugins`, each plugin on the lines its screen passes."""
    from detect_secrets.core.scan import _is_filtered_out, _scan_line
    from detect_secrets.util.code_snippet import get_code_snippet

    if not lines:
        return []
    stripped = [line.rstrip() for line in lines]
    text = "\n".join(stripped)
    starts = [0]
    for line in stripped[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    folded = _fold(text)
    folded_starts = starts
    if not text.isascii():  # folding may change a line's length (ß is ss)
        folded_lines = [_fold(line) for line in stripped]
        folded = "\n".join(folded_lines)
        folded_starts = [0]
        for line in folded_lines[:-1]:
            folded_starts.append(folded_starts[-1] + len(line) + 1)
    wanted: dict[int, list[Any]] = {}
    for screen in screens:
        for number in screen.lines(text, starts, folded, folded_starts):
            wanted.setdefault(number, []).append(screen.plugin)
    found: list[Finding] = []
    for number in sorted(wanted):
        line = stripped[number - 1]
        snippet = get_code_snippet(lines=lines, line_number=number)
        if _is_filtered_out(required_filter_parameters=["line"], filename=path, line=line, context=snippet):
            continue
        for plugin in wanted[number]:
            for secret in _scan_line(plugin=plugin, filename=path, line=line, line_number=number, context=snippet):
                if not _is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=snippet,
                ):
                    found.append(Finding(path=path, line=number, kind=secret.type))
    return found


def _fold(text: str) -> str:
    """Text compared case-insensitively: casefolded, with the case variants Python's re
    matches that casefolding keeps apart (dotless i, the dot of a dotted capital I) folded too."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    return folded.translate({0x131: "i", 0x307: None})


class _Screen:
    """Which lines a plugin could report on, found without running it on every line (its
    expressions cost about a second a megabyte): a necessary condition read off its own
    expressions. Most expressions' matches always hold one of a few literals (`_required`):
    the lines holding none cannot match. An expression with no such literals, but no anchor,
    look-around or back-reference either, is run once over the whole text: a match on a line
    is also a match there, so the lines its matches touch are all that can match. A high-entropy
    string plugin reports a quoted run of its charset whose Shannon entropy is over its limit;
    a string of k distinct characters has at most log2(k) bits each, so only lines with a run
    of more than 2**limit distinct characters can hold one. Anything else gets every line."""

    def __init__(self, plugin: Any) -> None:
        import re

        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
        from detect_secrets.plugins.keyword import KeywordDetector

        self.plugin = plugin
        self.entropy: tuple[Any, float] | None = None
        # per expression: ("literals", folded?, [literals of one required set, then an alternation
        # per other required set]) or ("run", False, [the expression])
        self.tests: list[tuple[str, bool, list[Any]]] | None = None
        if isinstance(plugin, HighEntropyStringsPlugin):
            least = int(2**plugin.entropy_limit) + 1
            self.entropy = (re.compile(f"[{re.escape(plugin.charset)}]{{{least},}}"), 2**plugin.entropy_limit)
            return
        patterns: list[Any] = []
        if isinstance(plugin, RegexBasedDetector):
            patterns = list(plugin.denylist)
        elif isinstance(plugin, KeywordDetector):
            from detect_secrets.plugins import keyword

            tables = [keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, *keyword.REGEX_BY_FILETYPE.values()]
            patterns = list({rx.pattern: rx for table in tables for rx in table}.values())
        if not patterns:
            return
        tests: list[tuple[str, bool, list[Any]]] = []
        for rx in patterns:
            folded, needs, plain = _required(rx.pattern, rx.flags)
            if needs:
                # the set with the fewest literals is looked for with str.find (fast), the others
                # only on the lines that hold one of those
                ordered = sorted(needs, key=lambda a: (len(a), -min(map(len, a))))
                alternations = [
                    re.compile("|".join(re.escape(x) for x in sorted(alternatives, key=len, reverse=True)))
                    for alternatives in ordered[1:]
                ]
                tests.append(("literals", folded, [tuple(sorted(ordered[0])), *alternations]))
            elif plain:
                tests.append(("run", False, [rx]))
            else:
                return  # every line
        self.tests = tests

    def lines(self, text: str, starts: list[int], folded: str, folded_starts: list[int]) -> set[int]:
        """1-based numbers of the lines of `text` ("\n"-joined, right-stripped lines) to run on."""
        from bisect import bisect_right

        if self.entropy is not None:
            run, limit = self.entropy
            return {bisect_right(starts, m.start()) for m in run.finditer(text) if len(set(m.group())) > limit}
        if self.tests is None:
            return set(range(1, len(starts) + 1))
        out: set[int] = set()
        seen: dict[tuple[bool, tuple[str, ...]], set[int]] = {}
        for kind, fold, expressions in self.tests:
            if kind == "run":
                for m in expressions[0].finditer(text):
                    first = bisect_right(starts, m.start())
                    out.update(range(first, bisect_right(starts, max(m.end() - 1, m.start())) + 1))
                continue
            body, at = (folded, folded_starts) if fold else (text, starts)
            if (fold, expressions[0]) not in seen:
                holding: set[int] = set()
                for literal in expressions[0]:
                    found = body.find(literal)
                    while found != -1:
                        holding.add(bisect_right(at, found))
                        found = body.find(literal, found + 1)
                seen[fold, expressions[0]] = holding
            lines = set(seen[fold, expressions[0]])
            for alternation in expressions[1:]:
                if not lines:
                    break
                ends = [*at[1:], len(body) + 1]
                lines = {n for n in lines if alternation.search(body, at[n - 1], ends[n - 1] - 1)}
            out |= lines
        return out


MAX_LITERALS = 200  # alternatives kept for one requirement


def _required(pattern: str, flags: int) -> tuple[bool, list[frozenset[str]], bool]:
    """(folded, needs, plain) for an expression. `needs`: sets of literals such that every match
    holds one of each set ([] when none can be read off; literals of two characters or more),
    casefolded (`_fold`) when `folded`, i.e. when the expression ignores case anywhere. `plain`:
    no anchor, look-around or back-reference. Conservative: an unknown construct requires nothing."""
    import re

    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python >= 3.11
    except ImportError:  # Python 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - an expression we cannot read just requires nothing
        return False, [], False
    ops: list[tuple[Any, Any]] = []

    def visit(items: Any) -> None:
        for op, av in items:
            ops.append((op, av))
            if op is parser.SUBPATTERN:
                visit(av[-1])
            elif op is parser.BRANCH:
                for branch in av[1]:
                    visit(branch)
            elif op in (parser.MAX_REPEAT, parser.MIN_REPEAT, getattr(parser, "POSSESSIVE_REPEAT", None)):
                visit(av[2])
            elif op in (parser.ASSERT, parser.ASSERT_NOT):
                visit(av[1])

    visit(list(parsed))
    folded = bool(parsed.state.flags & re.IGNORECASE) or any(
        op is parser.SUBPATTERN and av[1] & re.IGNORECASE for op, av in ops
    )
    plain = not any(op in (parser.AT, parser.ASSERT, parser.ASSERT_NOT, parser.GROUPREF) for op, _ in ops)
    _, needs = _analyse(list(parsed), parser)
    if folded:
        needs = [frozenset(_fold(x) for x in a) for a in needs]
    return folded, [_few(a) for a in needs if a and "" not in a and min(map(len, a)) >= 2], plain


def _few(literals: frozenset[str], most: int = 8) -> frozenset[str]:
    """A smaller set any string holding one of `literals` still satisfies: no literal that holds
    another, and, when there are many, their common beginnings (at least 3 characters)."""
    kept = frozenset(x for x in literals if not any(y != x and y in x for y in literals))
    for length in range(min(map(len, kept)), 2, -1):
        if len(kept) <= most:
            break
        shorter = frozenset(x[:length] for x in kept)
        if len(shorter) <= most:
            return _few(shorter, most)
    return kept


def _product(left: frozenset[str], right: frozenset[str]) -> frozenset[str] | None:
    if len(left) * len(right) > MAX_LITERALS:
        return None
    return frozenset(a + b for a in left for b in right)


def _analyse(items: list[Any], parser: Any) -> tuple[frozenset[str] | None, list[frozenset[str]]]:
    """(every string the sequence can match, if few; what it requires) for a parsed sequence."""
    c = parser  # the parser module re-exports the opcode constants
    needs: list[frozenset[str]] = []
    run: frozenset[str] | None = frozenset([""])
    whole: frozenset[str] | None = frozenset([""])
    for op, av in items:
        exact, inner = _node(op, av, parser, c)
        needs += inner
        if exact is not None and run is not None:
            joined = _product(run, exact)
            if joined is None:
                needs.append(run)
                run = exact
            else:
                run = joined
        else:
            if run is not None:
                needs.append(run)
            run = exact
        whole = _product(whole, exact) if whole is not None and exact is not None else None
    if run is not None:
        needs.append(run)
    if whole is not None:
        needs.append(whole)
    return whole, [a for a in needs if a and "" not in a]


def _strongest(needs: list[frozenset[str]]) -> frozenset[str] | None:
    usable = [a for a in needs if a and "" not in a]
    return max(usable, key=lambda a: (min(map(len, a)), -len(a))) if usable else None


def _node(op: Any, av: Any, parser: Any, c: Any) -> tuple[frozenset[str] | None, list[frozenset[str]]]:
    if op is c.LITERAL:
        return frozenset([chr(av)]), []
    if op is c.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is c.LITERAL:
                chars.add(chr(value))
            elif kind is c.RANGE and value[1] - value[0] < 16:
                chars.update(chr(x) for x in range(value[0], value[1] + 1))
            else:  # NEGATE, a category, a wide range: too many
                return None, []
        return (frozenset(chars) if len(chars) <= 16 else None), []
    if op is c.SUBPATTERN:
        return _analyse(list(av[-1]), parser)
    if op is c.BRANCH:
        alternatives = [_analyse(list(branch), parser) for branch in av[1]]
        exact: frozenset[str] | None = frozenset()
        for alt_exact, _ in alternatives:
            exact = exact | alt_exact if exact is not None and alt_exact is not None else None
        if exact is not None and len(exact) > MAX_LITERALS:
            exact = None
        picks = [_strongest(needs) for _, needs in alternatives]
        union: frozenset[str] = frozenset()
        for pick in picks:
            if pick is None:
                return exact, []
            union |= pick
        return exact, ([union] if len(union) <= MAX_LITERALS else [])
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        low, high, item = av
        item_exact, item_needs = _analyse(list(item), parser)
        exact = None
        if item_exact is not None and high <= 3:
            exact = frozenset([""]) if low == 0 else None
            power: frozenset[str] | None = frozenset([""])
            for count in range(1, high + 1):
                power = _product(power, item_exact) if power is not None else None
                if power is None:
                    exact = None
                    break
                if count >= low:
                    exact = power if exact is None else exact | power
        return exact, (item_needs if low >= 1 else [])
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return frozenset([""]), []
    return None, []  # ANY, a category, a back-reference, ...


def _cache_key() -> str:
    """detect-secrets' version file (found without importing it) and these settings; "" if unknown."""
    from importlib.util import find_spec

    try:
        spec = find_spec("detect_secrets")
    except (ImportError, ValueError):
        return ""
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        return ""
    try:
        with open(os.path.join(locations[0], "__version__.py"), "rb") as fh:
            version = fh.read(4096)
    except OSError:
        return ""
    settings = repr((SCHEME, sorted(EXCLUDED_PLUGINS), FILTERS)).encode()
    return sha256(version + b"\0" + settings).hexdigest()[:32]


def _entry() -> str:
    from ktrain.inputs.parse_cache import cache_dir

    return os.path.join(cache_dir(), "code-secrets", "clean.json")


def _remembered(key: str) -> dict[str, list[tuple[int, str]]]:
    """What earlier scans found, by content hash (an empty list: nothing)."""
    if not key:
        return {}
    from ktrain.inputs.parse_cache import read_json

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
    from ktrain.inputs.parse_cache import write_json

    merged = {**known, **fresh}  # insertion order: the oldest first
    kept = list(merged.items())[-MAX_REMEMBERED:]
    write_json(_entry(), {"key": key, "files": {d: [list(f) for f in found] for d, found in kept}}, verified=True)
