"""The mutation fuzzer (run_fuzzer.py) for about a minute, seeded: no mutated golden or conformance
input may crash, hang or run over budget. The shared conformance cases are used when ../shared is
present, and left out otherwise. A longer run: `python tests/fuzz/run_fuzzer.py --seconds 600`.

KTRAIN_FUZZ_SECONDS changes the budget (0 skips the test)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

SECONDS = float(os.environ.get("KTRAIN_FUZZ_SECONDS", "60"))
SEED = int(os.environ.get("KTRAIN_FUZZ_SEED", "12"))
# Mutation classes left to the input-reading half of issue #12: a 3 KB - 1 MB scalar is echoed
# whole as the source line under each error about it (its "long echoed lines" item); 1 MB takes
# seconds to read.
EXCLUDED: set[str] = set()  # every mutation class (both halves of #12 are in)


def _fuzzer():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("ktrain_fuzzer", Path(__file__).with_name("run_fuzzer.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["ktrain_fuzzer"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # a minute, by design
@pytest.mark.shared(optional=True)  # the conformance cases join the seeds when ../shared is there
@pytest.mark.skipif(SECONDS <= 0, reason="KTRAIN_FUZZ_SECONDS=0")
def test_mutated_inputs_never_crash_hang_or_run_over_budget() -> None:
    fuzzer = _fuzzer()
    summary = fuzzer.fuzz(SECONDS, SEED, EXCLUDED, include_shared=fuzzer.SHARED_CASES.is_dir())
    print(summary.report())  # noqa: T201 - the figures, shown with -s
    assert summary.runs > 0
    assert not summary.failures, summary.report()
