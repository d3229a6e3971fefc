"""What ktrain prints as YAML must read back as the same data under YAML 1.1 (kubectl's parser
follows it): checked with PyYAML over the strings that trip emitters, and random ones."""

from __future__ import annotations

import random

import pytest
import yaml

from ktrain.output.yamltext import dump

TRICKY = [
    "y",
    "Y",
    "no",
    "on",
    "OFF",
    "~",
    "null",
    "",
    " ",
    "1e-3",
    "1E3",
    "0777",
    "0o17",
    "0x1F",
    "0b101",
    "12:30",
    "190:20:30",
    ".inf",
    "-.Inf",
    ".nan",
    "2026-11-23",
    "2026-11-23T10:00:00Z",
    "<<",
    "=",
    "- a",
    "a: b",
    "a #b",
    "#c",
    "@x",
    "`x",
    "!tag",
    "&a",
    "*a",
    "|",
    ">",
    "%",
    "'q'",
    '"q"',
    "a\nb",
    "a\n",
    "\ttab",
    "trail ",
    "é",
    "日本",
    "\u2028",
    "\x7f",
    "\x85",
    "\ud7ff",
    "\ue000",
    "\ufffd",
    "\U0001f600",
    "-",
    "?",
    ":",
    "1_000",
    "+1",
    "-0",
    "3.",
    ".5",
    "1.2.3",
    "v1.2",
    "true",
    "TRUE",
    "True",
    "tRUE",
    "nvidia.com/gpu",
    "a,b",
    "[x]",
    "{x}",
]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_strings_round_trip_under_yaml_1_1(text: str) -> None:
    data = {"value": text, "list": [text], text or "k": "key"}
    assert yaml.safe_load(dump(data)) == data


def test_random_strings_round_trip_under_yaml_1_1() -> None:
    rng = random.Random(7)
    alphabet = "aZ09 .:-_+#'\"\\\n\t{}[],&*!|>%@`?~=eExXoObB" + "é日\u2028\u2029\x85\x7f\x00\x1b\ufeff\U0001f600"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 8)))
        data = {"v": text}
        assert yaml.safe_load(dump(data)) == data, repr(text)


def test_scalars_keep_their_types() -> None:
    data = {"i": 4, "f": 0.5, "b": True, "n": None, "s": "4", "nested": {"l": [1, "1", False, "false"]}}
    assert yaml.safe_load(dump(data)) == data


# `_implicit` answers the implicit-resolver pattern without compiling it for most strings: it must
# answer exactly as the pattern does, for every string a plain scalar can be.
_IMPLICIT_ALPHABET = "0123456789+-._:eExXoObBTtZ yYnNaAlLfFsSuUrRiI~<=\t" + "٣²"


@pytest.mark.parametrize("seed", range(4))
def test_implicit_answers_as_the_full_pattern(seed: int) -> None:
    import re

    from ktrain.output import yamltext

    pattern = re.compile(yamltext.IMPLICIT_PATTERN, re.VERBOSE)
    rng = random.Random(seed)
    samples = [*TRICKY, *(w for w in yamltext._WORDS), "08", "09", "0", "00", "0_7", "007", "1_000", "٣"]
    for _ in range(20_000):
        samples.append("".join(rng.choice(_IMPLICIT_ALPHABET) for _ in range(rng.randint(1, 8))))
    for s in samples:
        s = s.strip()
        if s:
            assert yamltext._implicit(s) == bool(pattern.match(s)), repr(s)
