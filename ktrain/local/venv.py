"""`--pip` for a local run: a virtual environment made for the package set and kept for the next
run with the same set (as the Kubeflow SDK's local process backend does).

It is made from the `python3` the pods would run (else the interpreter running ktrain), with
that interpreter's own packages visible (`--system-site-packages`: what an image ships stays
there, the packages are added on top), under `$KTRAIN_CACHE_DIR/venvs/<digest>`, the digest
of the interpreter, the packages and the index URLs. A lock makes two runs that need the same
environment build it once; a marker file says it was finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

from ktrain.errors import KtrainError
from ktrain.inputs.parse_cache import cache_dir

if TYPE_CHECKING:
    from collections.abc import Callable

DONE = ".ktrain-complete"


def base_python(path: str | None) -> str:
    return shutil.which("python3", path=path) or sys.executable


def venv_dir(python: str, packages: list[str], index_urls: list[str]) -> str:
    real = os.path.realpath(python)
    key = json.dumps([real, packages, index_urls], separators=(",", ":"))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return os.path.join(cache_dir(), "venvs", digest)


def ensure_venv(packages: list[str], index_urls: list[str], *, path: str | None, notify: Callable[[str], None]) -> str:
    """The environment's bin directory, made (and the packages installed) if needed."""
    import fcntl

    python = base_python(path)
    target = venv_dir(python, packages, index_urls)
    bin_dir = os.path.join(target, "bin")
    if os.path.exists(os.path.join(target, DONE)):
        return bin_dir
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be making the same environment
        if os.path.exists(os.path.join(target, DONE)):
            return bin_dir
        shutil.rmtree(target, ignore_errors=True)  # an unfinished one (interrupted)
        notify(f"--pip: making a virtual environment for {' '.join(packages)} in {target} (kept for later runs)")
        _run([python, "-m", "venv", "--system-site-packages", target], "python -m venv")
        indexes: list[str] = []
        if index_urls:
            indexes = ["--index-url", index_urls[0]]
            for url in index_urls[1:]:
                indexes += ["--extra-index-url", url]
        pip = [os.path.join(bin_dir, "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        _run([*pip, *indexes, *packages], "pip install")
        with open(os.path.join(target, DONE), "w") as fh:
            fh.write(json.dumps({"packages": packages, "index_urls": index_urls}) + "\n")
    return bin_dir


def _run(argv: list[str], what: str) -> None:
    try:
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise KtrainError(f"--pip: {what} could not start: {exc.strerror}") from None
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-10:])
        raise KtrainError(f"--pip: {what} failed (exit {result.returncode})" + (f":\n{tail}" if tail else ""))
