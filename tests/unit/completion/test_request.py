"""The pieces of one completion request (`ktrain.completion.request`)."""

from __future__ import annotations

from ktrain.completion.request import Answer, Request, canonical_name, find_option

NODE = {
    "options": [
        {"names": ["-n", "--namespace"], "takes_value": True},
        {"names": ["-f"], "takes_value": False},
        {"names": ["-o", "--output"], "takes_value": True},
    ]
}


def test_find_option_finds_an_option_by_any_of_its_names() -> None:
    assert find_option(NODE, "-n") is NODE["options"][0]
    assert find_option(NODE, "--namespace") is NODE["options"][0]
    assert find_option(NODE, "--name") is None  # no prefix matching: --name is not --namespace
    assert find_option({}, "-n") is None  # a node without options


def test_canonical_name_is_the_first_long_name_else_the_only_one() -> None:
    assert canonical_name({"names": ["-n", "--namespace"]}) == "--namespace"
    assert canonical_name({"names": ["--output", "--format"]}) == "--output"
    assert canonical_name({"names": ["-f"]}) == "-f"


def test_a_fresh_request_is_at_the_start_of_the_line_and_an_answer_offers_values() -> None:
    req = Request(NODE)
    assert (req.path, req.option, req.option_prefix, req.after_dashdash, req.positional, req.given) == (
        [],
        None,
        "",
        False,
        0,
        {},
    )
    assert Answer().directive == "values" and Answer().items == []
    # each answer has its own list
    a, b = Answer(), Answer()
    a.items.append(("x", ""))
    assert b.items == []
