"""apimachinery's name formats without regular expressions (`ktrain.util.dnsnames`): each check gives
the answer of the pattern it stands for, read as Go's regexp reads it (the whole text: a trailing
newline is not part of a name)."""

from __future__ import annotations

import random
import re

import pytest

from ktrain.util import dnsnames

LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
PATTERNS = {
    dnsnames.is_dns1123_label: re.compile(LABEL),
    dnsnames.is_dns1035_label: re.compile("[a-z]([-a-z0-9]*[a-z0-9])?"),
    dnsnames.is_dns1123_subdomain: re.compile(LABEL + r"(\." + LABEL + ")*"),
}
ALPHABET = "ab09-.zA_\n é"


def _samples(seed: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["", "a", "-", "a-", "-a", "a.b", "a..b", ".a", "a.", "0a", "a0", "abc\n", "a-b.c-d", "A", "é"]
    return fixed + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 7))) for _ in range(20_000)]


@pytest.mark.parametrize("check", list(PATTERNS), ids=lambda f: f.__name__)
def test_name_checks_answer_as_the_patterns(check) -> None:  # type: ignore[no-untyped-def]
    for value in _samples(len(check.__name__)):
        assert check(value) == bool(PATTERNS[check].fullmatch(value)), repr(value)
