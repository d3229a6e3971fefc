"""is_fast_path's rules: a listed package covers itself and what is under it, a listed module only
itself, and NOT_FAST wins over both (tests/architecture/test_fast_path.py checks the lists
against what the fast commands really load)."""

from __future__ import annotations

import pytest

from ktrain.util.fastpath import FAST_MODULES, FAST_PACKAGES, NOT_FAST, is_fast_path


@pytest.mark.parametrize("module", ["ktrain.engine", "ktrain.engine.plugins", "ktrain.engine.plugins.torch"])
def test_a_fast_package_covers_itself_and_every_module_under_it(module: str) -> None:
    assert is_fast_path(module)


def test_a_package_prefix_is_matched_by_dotted_parts_not_by_text() -> None:
    # "ktrain.engine" is fast; a sibling whose name only starts with the same letters is not
    assert not is_fast_path("ktrain.engineering")
    assert not is_fast_path("ktrain.utility")


def test_a_fast_module_covers_only_itself() -> None:
    assert is_fast_path("ktrain.api")
    assert is_fast_path("ktrain.api.base")
    # ktrain.api is listed as a module, so its other submodules are ordinary Python
    assert not is_fast_path("ktrain.api.trainjob")
    assert not is_fast_path("ktrain.api.common")
    assert is_fast_path("ktrain.cli.commands.job_render")
    assert not is_fast_path("ktrain.cli.commands.job_convert")


@pytest.mark.parametrize("module", NOT_FAST)
def test_not_fast_wins_over_its_fast_package(module: str) -> None:
    assert any(module.startswith(p + ".") for p in FAST_PACKAGES), module  # each is an exception
    assert not is_fast_path(module)


def test_modules_outside_ktrain_and_unlisted_ones_are_ordinary() -> None:
    assert not is_fast_path("kubernetes")
    assert not is_fast_path("ktrain.local.run")
    assert not is_fast_path("ktrain.python_api")
    assert not is_fast_path("")


def test_the_lists_do_not_overlap() -> None:
    assert not set(FAST_MODULES) & set(NOT_FAST)
    assert not set(FAST_PACKAGES) & set(FAST_MODULES)
    assert len(set(FAST_MODULES)) == len(FAST_MODULES)
