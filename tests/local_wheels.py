"""A local wheel and an offline pip for the `--pip` tests (tests/unit/local/test_venv.py, test_run.py)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest


def make_wheel(directory: Path, name: str = "ktrain_tinypkg", version: str = "0.1") -> Path:
    """A pure-Python wheel pip installs without reaching an index: `import <name>` gives VALUE = 42."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: ktrain-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
        zf.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return wheel


def offline_cache_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ktrain's cache in tmp_path, and pip kept off every index (for an `offline_cache` fixture)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(cache))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    return cache
