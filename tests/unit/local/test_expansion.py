"""`$(VAR)` expansion, case for case as kubernetes/kubernetes
third_party/forked/golang/expansion/expand_test.go (TestMapReference/TestMapping), plus a
differential fuzz against a regular-expression statement of the same grammar."""

from __future__ import annotations

import re

import pytest

from ktrain.local.expansion import expand

ENV = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}

CASES = [
    ("$(VAR_A)", "A"),
    ("$(VAR_A)-$(VAR_A)", "A-A"),
    ("$(VAR_A)-$(VAR_B)-$(VAR_B)-$(VAR_B)-$(VAR_A)", "A-B-B-B-A"),
    ("$(VAR_A)-1", "A-1"),
    ("___$(VAR_B)___", "___B___"),
    ("___$(VAR_C)", "___C"),
    ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
    ("f000-$$VAR_A", "f000-$VAR_A"),
    ("foo\\$(VAR_C)bar", "foo\\Cbar"),
    ("foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
    ("$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
    ("$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
    ("$(VAR_REF)", "$(VAR_A)"),  # a value is not expanded again
    ("%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
    ("foo$(VAR_EMPTY)bar", "foobar"),
    ("foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
    ("f00__(VAR_A)__", "f00__(VAR_A)__"),
    ("$?_boo_$!", "$?_boo_$!"),
    ("$VAR_A", "$VAR_A"),
    ("$(VAR_DNE)", "$(VAR_DNE)"),
    ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("$$$$$$(VAR_A)", "$$$(VAR_A)"),
    ("$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
    ("$$$$$$$(VAR_A)", "$$$A"),
    ("$VAR_A)", "$VAR_A)"),
    ("${VAR_A}", "${VAR_A}"),
    ("$(VAR_B)_______$(A", "B_______$(A"),
    ("$(VAR_C)_______$(", "C_______$("),
    ("$(VAR_A)foobarzab$", "Afoobarzab$"),
    ("foo-\\$(VAR_A", "foo-\\$(VAR_A"),
    ("--$($($($($--", "--$($($($($--"),
    ("$($($($($--foo$(", "$($($($($--foo$("),
    ("foo0--$($($($(", "foo0--$($($($("),
    ("$(foo$$var)", "$(foo$$var)"),
    ("\n", "\n"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_kubernetes_cases(text: str, expected: str) -> None:
    assert expand(text, ENV) == expected


_GRAMMAR = re.compile(r"\$(?:(\$)|\(([^)]*)\)|(\()|(.))", re.DOTALL)


def _reference(text: str, env: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return "$"
        if m.group(2) is not None:
            return env.get(m.group(2), m.group(0))
        if m.group(3) is not None:
            return "$("
        return m.group(0)

    return _GRAMMAR.sub(sub, text)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="$()AB_x\\\n", max_size=40),
    st.dictionaries(st.sampled_from(["A", "B", "A_", ""]), st.text(alphabet="$()x", max_size=5)),
)
def test_matches_the_grammar(text: str, env: dict[str, str]) -> None:
    assert expand(text, env) == _reference(text, env)
