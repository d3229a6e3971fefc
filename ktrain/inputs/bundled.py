"""Where the bundled runtimes and schemas are, from a wheel or from a source checkout."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from pathlib import Path

# os.path, not pathlib: shell completion reads these paths and pathlib costs it 4 ms to import.
# this file is ktrain/inputs/bundled.py: the package is two levels up
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def data_path(name: str) -> str:
    # In a wheel, hatch force-includes runtimes/ and schemas/ under ktrain/_bundled/.
    bundled = os.path.join(_PACKAGE, "_bundled", name)
    if os.path.isdir(bundled):
        return bundled
    # Editable install or source checkout: the top-level folders of the repository.
    return os.path.join(os.path.dirname(_PACKAGE), name)


def builtin_runtimes_dir() -> Path:
    from pathlib import Path

    return Path(data_path("runtimes"))


def schemas_dir() -> Path:
    from pathlib import Path

    return Path(data_path("schemas"))
