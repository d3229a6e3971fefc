"""The string work the cluster commands do without `urllib.parse` or `re` (start-up, issue #17),
held to what those modules answer."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.cluster.client import _safe_path
from ktrain.cluster.http_transport import split_server
from ktrain.cluster.transport import percent_encode

SERVERS = [
    "https://10.0.0.1:6443",
    "https://API.Example.com",
    "https://api.example.com:443/",
    "https://rancher.example.com/k8s/clusters/c-m-abc12/",
    "http://127.0.0.1:8001",
    "https://[::1]:6443",
    "https://[fd00::1]/prefix",
    "https://user:pw@host:1234/p",
    "HTTPS://host",
]
BAD = ["ftp://host", "host:6443", "https://", "https://host:99999", "https://host:12a", "https://[::1", "https://h?x=1"]


@pytest.mark.parametrize("server", SERVERS)
def test_server_urls_are_read_as_urlsplit_reads_them(server: str) -> None:
    parts = urlsplit(server)
    assert split_server(server) == (
        parts.scheme,
        parts.hostname,
        parts.port,
        parts.path.rstrip("/"),
        parts.netloc.rpartition("@")[2],
    )


@pytest.mark.parametrize("server", BAD)
def test_what_is_not_an_http_server_url_is_refused(server: str) -> None:
    assert split_server(server) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_percent_encoding_is_urllib_quote_with_nothing_safe(text: str) -> None:
    try:
        expected = quote(text, safe="")
    except UnicodeEncodeError:
        return  # lone surrogates: neither is asked to encode them (names are checked first)
    assert percent_encode(text) == expected


SAFE_PATH = re.compile(r"^(/(?!\.\.?(/|$))[A-Za-z0-9._~-]+)+$")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="/.a~-%?#Z9 \n", max_size=20))
def test_the_safe_path_check_is_the_old_pattern_without_its_newline_gap(path: str) -> None:
    expected = SAFE_PATH.fullmatch(path) is not None  # fullmatch: `$` would let a trailing \n pass
    assert _safe_path(path) == expected
