"""What the render path does without regular expressions or eager imports: apimachinery's name
formats (ktrain.engine.validation) give the answers of the patterns they stand for, read as Go's
regexp reads them (the whole text: a trailing newline is not part of a name); the derived name's
prefix is re.sub's; each engine plugin, imported on demand, is the one for its policy key."""

from __future__ import annotations

import random
import re

import pytest

from ktrain.engine import validation
from ktrain.service.naming import name_prefix

LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
PATTERNS = {
    validation.is_dns1123_label: re.compile(LABEL),
    validation.is_dns1035_label: re.compile("[a-z]([-a-z0-9]*[a-z0-9])?"),
    validation.is_dns1123_subdomain: re.compile(LABEL + r"(\." + LABEL + ")*"),
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


def test_a_trailing_newline_is_not_part_of_a_name() -> None:
    assert validation.dns1035_label_errors("abc\n") and validation.dns1123_subdomain_errors("abc\n")
    assert not validation.dns1035_label_errors("abc")


def test_derived_name_prefix_is_the_runtime_name_cleaned_up() -> None:
    def by_regex(name: str) -> str:
        prefix = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
        return re.sub(r"-(distributed)$", "", prefix) or "job"

    rng = random.Random(7)
    names = ["torch-distributed", "Torch_Distributed", "distributed", "-distributed", "a--distributed-", "x.y/z", "ǅ"]
    names += ["".join(rng.choice("aZ9-_.é distributed") for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    for name in names:
        assert name_prefix(name) == by_regex(name), repr(name)


def test_each_plugin_is_selected_by_its_own_policy_key() -> None:
    from ktrain.engine.plugins import GANG_POLICIES, ML_POLICIES, PLAIN_ML, builtin_plugins, plugin

    for key, module, name in (*ML_POLICIES, *GANG_POLICIES):
        assert plugin(module, name).policy_key == key
    assert plugin(*PLAIN_ML).policy_key is None
    assert len({p.name for p in builtin_plugins()}) == len(ML_POLICIES) + len(GANG_POLICIES) + 2
