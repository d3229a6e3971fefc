"""Shared by the completion tests: a command tree with options other branches add, and the
values of an answer."""

from __future__ import annotations


def values_of(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [v for v, _ in result.items]


# A tree with the options and commands other branches add, to test the data-driven providers now.
FUTURE_TREE = {
    "format": 1,
    "root": {
        "options": [],
        "commands": {
            "job": {
                "options": [],
                "commands": {
                    "logs": {
                        "options": [
                            {"names": ["--step"], "takes_value": True, "help": ""},
                            {"names": ["--kubeconfig"], "takes_value": True, "help": ""},
                            {"names": ["--context"], "takes_value": True, "help": ""},
                            {"names": ["-n", "--namespace"], "takes_value": True, "help": ""},
                            {"names": ["-f", "--follow"], "takes_value": False, "help": ""},
                        ],
                        "arguments": [{"name": "name", "nargs": 1}],
                    },
                    "render": {
                        "options": [
                            {"names": ["--set"], "takes_value": True, "multiple": True, "help": ""},
                            {"names": ["--runtime"], "takes_value": True, "help": ""},
                            {"names": ["--kubeconfig"], "takes_value": True, "help": ""},
                        ]
                    },
                },
            },
        },
    },
}
