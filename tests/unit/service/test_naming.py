"""Content-derived job names (`ktrain.service.naming`)."""

from __future__ import annotations

import random
import re

from ktrain.service.naming import name_prefix


def test_derived_name_prefix_is_the_runtime_name_cleaned_up() -> None:
    def by_regex(name: str) -> str:
        prefix = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
        return re.sub(r"-(distributed)$", "", prefix) or "job"

    rng = random.Random(7)
    names = ["torch-distributed", "Torch_Distributed", "distributed", "-distributed", "a--distributed-", "x.y/z", "ǅ"]
    names += ["".join(rng.choice("aZ9-_.é distributed") for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    for name in names:
        assert name_prefix(name) == by_regex(name), repr(name)
