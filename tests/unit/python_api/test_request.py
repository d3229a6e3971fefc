"""`function_source` (ktrain/python_api/request.py): which functions and `func_args` can travel to the
pods, checked before anything is sent, with the messages users see."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain.errors import ArgumentTypeError, UsageError
from ktrain.python_api.request import function_source
from unit.python_api.functions_to_run import record, train_fn


def test_func_args_are_checked_before_anything_is_sent() -> None:
    with pytest.raises(UsageError, match=r"func_args do not fit train_fn\(lr, epochs=1, fail=False\).*'lr'"):
        function_source(train_fn, {"epochs": 2})
    with pytest.raises(UsageError, match="unexpected keyword argument 'momentum'"):
        function_source(train_fn, {"lr": 1, "momentum": 0.9})
    for bad in ({"lr": object()}, {"lr": float("nan")}, {"lr": float("inf")}, {"lr": 10**5000}):
        with pytest.raises(UsageError, match="only Python literals travel"):
            function_source(train_fn, bad)
    with pytest.raises(ArgumentTypeError, match="a key of func_args must be a string"):
        function_source(record, {1: 2})
    with pytest.raises(ArgumentTypeError, match="func_args must be a dict, not list"):
        function_source(train_fn, [1])  # type: ignore[arg-type]
    assert function_source(train_fn, None).rstrip().endswith("train_fn()")


def test_only_a_named_function_can_run() -> None:
    with pytest.raises(UsageError, match="lambda"):
        function_source(lambda: None, None)
    with pytest.raises(ArgumentTypeError, match="func must be a function defined with `def`, not method"):
        function_source(Path("x").exists, None)
    with pytest.raises(ArgumentTypeError, match="func must be a function, not int"):
        function_source(5, None)  # type: ignore[arg-type]
