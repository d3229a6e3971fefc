"""`--pip` environments (ktrain.local.venv): their cache key, their reuse, and pip's failures,
offline (a local wheel; pip is kept off every index)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_wheels import make_wheel, offline_cache_at

from ktrain.errors import KtrainError
from ktrain.local.venv import DONE, base_python, ensure_venv, venv_dir

PYTHON_DIR = os.path.dirname(sys.executable)


@pytest.fixture
def offline_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return offline_cache_at(tmp_path, monkeypatch)


def test_the_key_is_the_interpreter_the_packages_and_the_indexes(offline_cache: Path) -> None:
    one = venv_dir(sys.executable, ["a==1"], [])
    assert os.path.dirname(one) == str(offline_cache / "venvs")
    assert venv_dir(sys.executable, ["a==1"], []) == one
    assert venv_dir(os.path.realpath(sys.executable), ["a==1"], []) == one  # the interpreter's real file
    others = {
        venv_dir(sys.executable, ["a==2"], []),
        venv_dir(sys.executable, ["a==1", "b"], []),
        venv_dir(sys.executable, ["a==1"], ["https://example.invalid/simple"]),
        venv_dir("/usr/bin/false", ["a==1"], []),
    }
    assert one not in others and len(others) == 4


def test_the_base_python_is_the_python3_on_the_path_else_this_one(tmp_path: Path) -> None:
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert base_python(str(tmp_path)) == str(fake)
    assert base_python(str(tmp_path / "empty")) == sys.executable


@pytest.mark.slow  # makes a virtual environment (python -m venv, ensurepip): ~10 s
def test_an_environment_is_made_once_and_reused(offline_cache: Path, tmp_path: Path) -> None:
    wheel = str(make_wheel(tmp_path))
    notes: list[str] = []
    bin_dir = ensure_venv([wheel], [], path=PYTHON_DIR, notify=notes.append)
    assert bin_dir == os.path.join(venv_dir(base_python(PYTHON_DIR), [wheel], []), "bin")
    assert len(notes) == 1 and "making a virtual environment" in notes[0] and "kept for later runs" in notes[0]
    ran = subprocess.run(
        [os.path.join(bin_dir, "python"), "-c", "import ktrain_tinypkg, pytest; print(ktrain_tinypkg.VALUE)"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (ran.returncode, ran.stdout) == (0, "42\n"), ran.stderr  # the wheel, and the base's packages seen
    assert (Path(bin_dir).parent / DONE).is_file()

    again = ensure_venv([wheel], [], path=PYTHON_DIR, notify=notes.append)
    assert again == bin_dir and len(notes) == 1  # reused: nothing made, nothing said


@pytest.mark.slow  # makes a virtual environment (python -m venv, ensurepip): ~10 s
def test_an_unfinished_environment_is_made_again(offline_cache: Path, tmp_path: Path) -> None:
    wheel = str(make_wheel(tmp_path))
    target = Path(venv_dir(base_python(PYTHON_DIR), [wheel], []))
    (target / "bin").mkdir(parents=True)
    (target / "leftover").write_text("interrupted\n")
    notes: list[str] = []
    ensure_venv([wheel], [], path=PYTHON_DIR, notify=notes.append)
    assert len(notes) == 1
    assert not (target / "leftover").exists()
    assert (target / DONE).is_file()


@pytest.mark.slow  # makes a virtual environment (python -m venv, ensurepip): ~10 s
def test_a_failing_pip_install_is_reported_and_nothing_is_marked_done(offline_cache: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "nothere-0.1-py3-none-any.whl")
    with pytest.raises(KtrainError) as err:
        ensure_venv([missing], [], path=PYTHON_DIR, notify=lambda _: None)
    message = str(err.value)
    assert message.startswith("--pip: pip install failed (exit 1):")
    assert "nothere" in message
    assert not (Path(venv_dir(base_python(PYTHON_DIR), [missing], [])) / DONE).exists()
