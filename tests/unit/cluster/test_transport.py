"""`ktrain.cluster.transport`: what both transports share; percent-encoding without `urllib.parse`
(start-up, issue #17), held to what `urllib.parse.quote` answers.
"""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.cluster.transport import percent_encode


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_percent_encoding_is_urllib_quote_with_nothing_safe(text: str) -> None:
    try:
        expected = quote(text, safe="")
    except UnicodeEncodeError:
        return  # lone surrogates: neither is asked to encode them (names are checked first)
    assert percent_encode(text) == expected
