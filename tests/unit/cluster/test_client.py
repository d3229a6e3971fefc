"""`ktrain.cluster.client`: the path check every request goes through, without `re` (start-up,
issue #17), held to the pattern it replaced.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.cluster.client import _safe_path

SAFE_PATH = re.compile(r"^(/(?!\.\.?(/|$))[A-Za-z0-9._~-]+)+$")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="/.a~-%?#Z9 \n", max_size=20))
def test_the_safe_path_check_is_the_old_pattern_without_its_newline_gap(path: str) -> None:
    expected = SAFE_PATH.fullmatch(path) is not None  # fullmatch: `$` would let a trailing \n pass
    assert _safe_path(path) == expected
