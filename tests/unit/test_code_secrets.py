"""Secrets by content (issue #24 item 5): ktrain's scan is detect-secrets' own `scan_file` with
its settings, only faster. Checked differentially: generated files mixing code, config, YAML and
secret-shaped values give the same findings (path, line, kind) as `scan_file` on the same files;
every match Hypothesis generates for a plugin's expression passes that plugin's screen; and a
file scanned once is not scanned again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ktrain.inputs import code_secrets
from ktrain.inputs.code_secrets import Finding, scan

LINES = [
    "import os",
    "def train(lr=0.1):",
    '    print("epoch", epoch)',
    "x = {'a': 1}",
    "[default]",
    "[server]",
    "model: bert-base-uncased",
    "  lr: 0.001",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    'token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"',
    'slack = "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"',
    "-----BEGIN RSA PRIVATE KEY-----",
    'jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"',
    "url = 'https://user:s3cretpass@example.com/db'",
    'password = "hunter2-is-long"',
    'password = "hunter2-is-long"  # pragma: allowlist secret',
    "api_key: abc123xyz789",
    'client = OpenAI(api_key="sk-4f9Kd8sLm2Qw7Xz1Bv6NT3BlbkFJt3Hy5Jc0Rp8Ue2Ia9Og7Tk")',
    'checksum = "d41d8cd98f00b204e9800998ecf8427e"',
    'SG = "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"',
    'stripe = "sk_live_abcdefghijklmnopqrstuvwx"',
    "secret: $SECRET_FROM_ENV",
    "key = 'ConfigMapVolumeSourceProjectionItems'",
    "",
    "    ",
]
NAMES = ["train.py", "config.yaml", "settings.ini", "notes.txt", "app.js", "data.json", "Makefile", "x.cfg"]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


@st.composite
def files(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    out = []
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)):
        lines = draw(
            st.lists(
                st.one_of(
                    st.sampled_from(LINES),
                    st.text(st.sampled_from(B64), min_size=8, max_size=48).map(lambda v: f'v = "{v}"'),
                    st.text(st.sampled_from("0123456789abcdef"), min_size=6, max_size=40).map(lambda v: f"h: '{v}'"),
                    st.text(max_size=30).filter(lambda v: "\x00" not in v),
                ),
                max_size=12,
            )
        )
        out.append((name, ("\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))).encode()))
    return out


def _reference(tmp: Path, given: list[tuple[str, bytes]]) -> list[Finding]:
    """detect-secrets' scan_file on the same files, with the same settings."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import transient_settings

    plugins = [
        {"name": cls.__name__}
        for cls in get_mapping_from_secret_type_to_class().values()
        if cls.__name__ not in code_secrets.EXCLUDED_PLUGINS
    ]
    found = []
    before = os.getcwd()
    os.chdir(tmp)
    try:
        with transient_settings({"plugins_used": plugins, "filters_used": [{"path": p} for p in code_secrets.FILTERS]}):
            for name, data in given:
                Path(name).write_bytes(data)
                found += [Finding(path=name, line=s.line_number, kind=s.type) for s in scan_file(name)]
    finally:
        os.chdir(before)
    return sorted(set(found), key=lambda f: (f.path, f.line, f.kind))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(given=files())
def test_the_scan_finds_what_detect_secrets_scan_file_finds(
    tmp_path_factory: pytest.TempPathFactory, given: list[tuple[str, bytes]]
) -> None:
    ours = sorted(set(code_secrets._detect(given)), key=lambda f: (f.path, f.line, f.kind))
    assert ours == _reference(tmp_path_factory.mktemp("ref"), given)


def _plugin_expressions() -> list[tuple[str, Any]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    out = []
    for cls in get_mapping_from_secret_type_to_class().values():
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in code_secrets.EXCLUDED_PLUGINS:
            out += [(cls.__name__, rx) for rx in cls.denylist]
    from detect_secrets.plugins import keyword

    out += [("KeywordDetector", rx) for rx in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP]
    for table in keyword.REGEX_BY_FILETYPE.values():
        out += [("KeywordDetector", rx) for rx in table]
    return list({(rx.pattern, rx.flags): (name, rx) for name, rx in out}.values())


EXPRESSIONS = _plugin_expressions()


@pytest.mark.parametrize("index", range(len(EXPRESSIONS)))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_plugin_s_expression_passes_its_screen(index: int, data: st.DataObject) -> None:
    """The screen's literals are read off the expression (`_required`): a line holding a match
    must pass, or the plugin would never see it."""
    name, rx = EXPRESSIONS[index]
    try:
        line = data.draw(st.from_regex(rx).filter(lambda v: "\n" not in v and v == v.rstrip()))
    except Exception:  # noqa: BLE001 - from_regex cannot build every expression (look-behind)
        pytest.skip(f"hypothesis cannot generate {rx.pattern!r}")
    assume(rx.search(line))
    folded, needs, _ = code_secrets._required(rx.pattern, rx.flags)
    body = code_secrets._fold(line) if folded else line
    for alternatives in needs:
        assert any(a in body for a in alternatives), (name, rx.pattern, line, alternatives)


def test_the_issue_s_files_are_found(tmp_path: Path) -> None:
    creds = b"[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    app = b'import openai\nclient = openai.OpenAI(api_key="sk-4f9Kd8sLm2Qw7Xz1Bv6NT3BlbkFJt3Hy5Jc0Rp8Ue2Ia9Og7Tk")\n'
    kinds = {(f.path, f.line, f.kind) for f in scan([("creds.ini", creds), ("app.py", app)])}
    assert ("creds.ini", 2, "AWS Access Key") in kinds
    assert ("app.py", 2, "OpenAI Token") in kinds  # detect-secrets' default filters would drop this line


def test_a_file_scanned_once_is_not_scanned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    clean = [("train.py", b"print('hello')\n" * 100)]
    flagged = [("keys.py", b'token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\n')]
    first = scan(clean + flagged)
    assert {f.path for f in first} == {"keys.py"} and "GitHub Token" in {f.kind for f in first}

    def no_scan(files: Any) -> Any:
        raise AssertionError(f"scanned again: {files}")

    monkeypatch.setattr(code_secrets, "_detect", no_scan)
    assert scan(clean + flagged) == first  # findings come back from the cache too
    assert scan([("renamed.py", clean[0][1])]) == []  # by content, whatever the name


def test_a_cached_clean_tree_does_not_import_detect_secrets(tmp_path: Path) -> None:
    script = (
        "import sys; from ktrain.inputs.code_secrets import scan; "
        "print(scan([('t.py', b'x = 1\\n')]), 'detect_secrets' in sys.modules)"
    )
    env = {**os.environ, "KTRAIN_CACHE_DIR": str(tmp_path)}
    run = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True) for _ in range(2)]
    assert [r.stdout.strip() for r in run] == ["[] True", "[] False"], [r.stderr for r in run]


def test_required_literals_of_simple_expressions() -> None:
    assert code_secrets._required(r"AKIA[0-9A-Z]{16}", 0)[1] == [frozenset({"AKIA"})]
    folded, needs, plain = code_secrets._required(r"(?:api|auth)_?key\s*=", re.IGNORECASE)
    assert folded and plain
    assert frozenset({"apikey", "api_key", "authkey", "auth_key"}) in needs
    assert code_secrets._required(r"[a-z]{40}", 0)[1] == []
    assert code_secrets._required(r"(?<=\W)x", 0)[2] is False  # a look-behind: not run over the whole text
