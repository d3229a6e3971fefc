"""Option parsing shared by the commands."""

from __future__ import annotations

import sys
from typing import Any

from ktrain.errors import UsageError


def parse_pairs(values: list[str] | None, flag: str) -> list[tuple[str, str]]:
    out = []
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} expects KEY=VALUE, got {item!r}")
        out.append((key, value))
    return out


def registry_from(runtime_files: list[str] | None, runtimes_dirs: list[str] | None) -> Any:
    import os

    from ktrain.registry import RuntimeRegistry

    return RuntimeRegistry(files=runtime_files, dirs=runtimes_dirs, env_path=os.environ.get("KTRAIN_RUNTIMES_PATH"))


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


OUTPUT_FORMATS = ("yaml", "json", "name")
