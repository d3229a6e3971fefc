"""`--code` from the command line: the note on stderr, and `--explain` naming the wrapper."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "train.py").write_text("print('hi')\n")
    with _in(tmp_path):
        yield tmp_path


@contextlib.contextmanager
def _in(directory: Path) -> Iterator[None]:
    """chdir for a test (not monkeypatch.chdir: the `cli` fixture undoes monkeypatches after each run)."""
    before = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def test_code_says_what_it_packed_in_one_note(cli: Any, project: Path) -> None:
    r = cli(
        "job",
        "render",
        "-r",
        "torch-distributed",
        "--name",
        "c",
        "--code",
        ".",
        "-o",
        "name",
        "--",
        "python",
        "train.py",
    )
    assert r.exit_code == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: --code:")]
    assert len(notes) == 1 and "1 files, 0.0 KiB in 1 ConfigMap (c-code-" in notes[0], r.stderr


def test_explain_names_the_wrapper_as_the_source_of_the_changed_command(cli: Any, project: Path) -> None:
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--explain", "--", "torchrun", "train.py")
    assert r.exit_code == 0, r.stderr
    assert "- sh  # --code/--pip wrapper" in r.stdout
    assert "- torchrun  # flag, run by the --code/--pip wrapper" in r.stdout
    assert [d["kind"] for d in yaml.safe_load_all(r.stdout)] == ["ConfigMap", "JobSet"]  # still valid YAML


def _items(stdout: str) -> list[str]:
    docs = list(yaml.safe_load_all(stdout))
    jobset = next(d for d in docs if d["kind"] == "JobSet")
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    volume = next(v for v in pod["volumes"] if v["name"] == "ktrain-code")
    return sorted(i["path"] for s in volume["projected"]["sources"] for i in s["configMap"]["items"])


def test_code_dir_sends_its_contents_and_a_missing_script_fails_at_render(cli: Any, tmp_path: Path) -> None:
    """Issue #24 item 3: beside proj/, `--code proj -- torchrun train.py` mounted proj/train.py and
    the pod failed with "can't open file" once scheduled."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.py").write_text("print(1)\n")
    (tmp_path / "proj" / "model.py").write_text("\n")
    with _in(tmp_path):
        _check_proj(cli)


def _check_proj(cli: Any) -> None:
    r = cli("job", "render", "-r", "torch-distributed", "--code", "proj", "--", "torchrun", "train.py")
    assert r.exit_code == 0, r.stderr
    assert _items(r.stdout) == ["model.py", "train.py"]
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--", "torchrun", "--nnodes=1", "train.py")
    assert r.exit_code == 2
    assert "the command runs train.py, which is not among the 2 files sent" in r.stderr
    assert "did you mean proj/train.py?" in r.stderr


def test_secrets_by_content_are_refused_by_file_line_and_kind_never_the_value(cli: Any, project: Path) -> None:
    """Issue #24 item 5: a creds.ini holding an AWS secret key and a file holding an `sk-...` key were sent."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    api_key = "sk-4f9Kd8sLm2Qw7Xz1Bv6NT3BlbkFJt3Hy5Jc0Rp8Ue2Ia9Og7Tk"
    (project / "creds.ini").write_text(f"[default]\naws_secret_access_key = {secret}\n")
    (project / "llm.py").write_text(f'import openai\nclient = openai.OpenAI(api_key="{api_key}")\n')
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--", "torchrun", "train.py")
    assert r.exit_code == 3, r.stderr
    assert "creds.ini:2: AWS Access Key" in r.stderr
    assert "llm.py:2: OpenAI Token" in r.stderr
    assert secret not in r.stderr and api_key not in r.stderr and "wJalr" not in r.stderr
    assert "--code-include" in r.stderr
    r = cli(
        "job", "render", "-r", "torch-distributed", "--code", ".", "--code-include", "*.ini",
        "--code-include", "llm.py", "-o", "name", "--", "torchrun", "train.py",
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr


def test_a_line_marked_for_detect_secrets_is_sent(cli: Any, project: Path) -> None:
    (project / "conf.py").write_text('password = "Tr0ub4dor&3-horse"  # pragma: allowlist secret\n')
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "-o", "name", "--", "torchrun", "train.py")
    assert r.exit_code == 0, r.stderr
    (project / "conf.py").write_text('password = "Tr0ub4dor&3-horse"\n')
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "-o", "name", "--", "torchrun", "train.py")
    assert r.exit_code == 3 and "conf.py:1: Secret Keyword" in r.stderr


def test_every_refusal_of_the_code_tree_exits_3(cli: Any, project: Path) -> None:
    (project / ".env").write_text("A=1\n")
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--", "torchrun", "train.py")
    assert (r.exit_code, ".env: a credential file" in r.stderr) == (3, True), r.stderr
    os.unlink(project / ".env")
    (project / "big.bin").write_bytes(b"\0" * 1_000_001)
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--", "torchrun", "train.py")
    assert (r.exit_code, "more than one ConfigMap holds" in r.stderr) == (3, True), r.stderr
    os.unlink(project / "big.bin")
    os.symlink("loop", project / "loop")
    r = cli("job", "render", "-r", "torch-distributed", "--code", ".", "--", "torchrun", "train.py")
    assert (r.exit_code, "loop is a symlink loop" in r.stderr) == (3, True), r.stderr


def _pip_words(stdout: str) -> list[str]:
    docs = list(yaml.safe_load_all(stdout))
    jobset = next(d for d in docs if d["kind"] == "JobSet")
    command = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["command"]
    # sh -c SCRIPT ktrain-launch SRC DIR N F, the F fan-out words (MPI), the N pip words
    start = 8 + int(command[7])
    return command[start : start + int(command[6])]


def test_requirements_files_are_installed_from_the_code_directory(cli: Any, tmp_path: Path) -> None:
    """Issue #24 item 6: `--pip -r requirements.txt` or `--requirements FILE`."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.py").write_text("print(1)\n")
    (tmp_path / "proj" / "requirements.txt").write_text("numpy==2.1\n")
    with _in(tmp_path):
        _check_requirements(cli, tmp_path)


def _check_requirements(cli: Any, tmp_path: Path) -> None:
    base = ["job", "render", "-r", "torch-distributed", "--code", "proj"]
    r = cli(*base, "--requirements", "proj/requirements.txt", "--pip", "rich", "--", "python", "train.py")
    assert r.exit_code == 0, r.stderr
    assert _pip_words(r.stdout) == ["-r", "requirements.txt", "rich"]
    os.chdir(tmp_path / "proj")  # _in restores
    r = cli(
        "job",
        "render",
        "-r",
        "torch-distributed",
        "--code",
        ".",
        "--pip=-r requirements.txt",
        "--",
        "python",
        "train.py",
    )
    assert r.exit_code == 0, r.stderr
    assert _pip_words(r.stdout) == ["-r", "requirements.txt"]
    r = cli(
        "job", "render", "-r", "torch-distributed", "--requirements", "requirements.txt", "--", "python", "train.py"
    )
    assert r.exit_code == 2 and "the file must be sent with the code" in r.stderr
    r = cli("job", "render", "-r", "torch-distributed", "--pip", "--index-url=x", "--", "python", "train.py")
    assert r.exit_code == 2 and "not a package (pip would read an option)" in r.stderr
