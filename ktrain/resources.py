"""Where the bundled runtimes and schemas are, from a wheel or from a source checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    # In a wheel, hatch force-includes runtimes/ and schemas/ under ktrain/_bundled/.
    bundled = _PACKAGE / "_bundled" / name
    if bundled.is_dir():
        return bundled
    # Editable install or source checkout: the top-level folders of the repository.
    return _PACKAGE.parent / name


def builtin_runtimes_dir() -> Path:
    return _data_dir("runtimes")


def schemas_dir() -> Path:
    return _data_dir("schemas")
