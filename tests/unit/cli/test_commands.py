"""ktrain.cli.commands (the package): the command groups and modules, in `--help` order."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

import ktrain.cli.commands as commands_package
from ktrain.cli.commands import GROUPS, MODULES, command_functions
from ktrain.cli.spec import info_of


def test_every_command_module_of_the_package_is_listed_once() -> None:
    on_disk = {m.name for m in pkgutil.iter_modules([str(Path(commands_package.__file__).parent)])}
    assert len(MODULES) == len(set(MODULES))
    assert set(MODULES) == on_disk


def test_command_functions_are_the_marked_functions_in_module_order() -> None:
    found = command_functions()
    modules = [f.__module__.rpartition(".")[2] for f in found]
    assert modules == sorted(modules, key=MODULES.index)  # the order of MODULES
    assert set(modules) == set(MODULES)  # each module declares a command
    for func in found:
        info = info_of(func)
        assert info is not None
        assert info.path[0] in GROUPS, func
        assert func.__doc__, f"{func.__module__}.{func.__name__} has no help"


def test_command_paths_are_unique_and_include_the_known_commands() -> None:
    paths = [info.path for f in command_functions() if (info := info_of(f)) is not None]
    assert len(paths) == len(set(paths))
    assert {("job", "render"), ("job", "create"), ("runtime", "list"), ("schema", "export")} <= set(paths)


def test_a_command_imported_into_another_module_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from ktrain.cli.commands import runtime_list, runtime_show

    before = command_functions()
    listed = [f for f in vars(runtime_list).values() if info_of(f) is not None]
    monkeypatch.setattr(runtime_show, "imported_command", listed[0], raising=False)
    assert command_functions() == before
