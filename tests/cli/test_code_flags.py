"""`--code` from the command line: the note on stderr, and `--explain` naming the wrapper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text("print('hi')\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_code_says_what_it_packed_in_one_note(cli: Any, project: Path) -> None:
    r = cli("job", "render", "-r", "torch-distributed", "--name", "c", "--code", ".", "-o", "name", "--", "python", "train.py")
    assert r.exit_code == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: --code:")]
    assert len(notes) == 1 and "1 files, 0.0 KiB in 1 ConfigMap (c-code-" in notes[0], r.stderr


def test_explain_names_the_wrapper_as_the_source_of_the_changed_command(cli: Any, project: Path) -> None:
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--explain", "--", "torchrun", "train.py")
    assert r.exit_code == 0, r.stderr
    assert "- sh  # --code/--pip wrapper" in r.stdout
    assert "- torchrun  # flag, run by the --code/--pip wrapper" in r.stdout
    assert [d["kind"] for d in yaml.safe_load_all(r.stdout)] == ["ConfigMap", "JobSet"]  # still valid YAML
