"""Issue #37, items 7 and 10: inputs that used to end in an internal error or a wrong message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KTRAIN = [sys.executable, "-m", "ktrain"]


def run(*argv: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd, check=False)


def test_a_divisor_that_is_a_list_is_an_error_at_its_field(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: d}\nspec:\n"
        "  runtimeRef: {name: torch-distributed}\n  trainer:\n    command: [python, -c, '1']\n    env:\n"
        "    - name: MEM\n      valueFrom:\n        resourceFieldRef: {resource: limits.memory, divisor: [1Gi]}\n"
    )
    result = run(*KTRAIN, "job", "render", "-f", str(job))
    assert result.returncode not in (0, 1, 70), result.stderr
    assert "internal error" not in result.stderr
    assert "job.yaml:11" in result.stderr and "divisor in body must be of type integer or string" in result.stderr


def test_a_code_tree_with_a_non_utf8_name_and_an_ignore_file_is_refused_cleanly(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "ok.py").write_text("print(1)\n")
    (code / ".ktrainignore").write_text("*.log\n")
    os.close(os.open(os.path.join(os.fsencode(code), b"bad\xff.py"), os.O_CREAT | os.O_WRONLY, 0o600))
    result = run(
        *KTRAIN, "job", "render", "--runtime", "torch-distributed", "--code", str(code), "--", "python", "ok.py"
    )
    assert result.returncode == 3 and "file name is not UTF-8" in result.stderr, result.stderr
    (code / ".ktrainignore").write_text("bad*\n")  # ignored: then it is not sent, and not an error
    result = run(
        *KTRAIN, "job", "render", "--runtime", "torch-distributed", "--code", str(code), "--", "python", "ok.py"
    )
    assert result.returncode == 0, result.stderr


def test_krm_refuses_json_nested_100000_deep_without_an_internal_error() -> None:
    for text in ("{" * 100_000, "[" * 100_000, '{"a": ' * 50_000):
        result = run(sys.executable, "-c", "from ktrain.cli.krm import run; run()", stdin=text)
        assert result.returncode == 3, result.stderr
        assert "nested more than 100 levels deep" in result.stderr and "internal error" not in result.stderr


def test_job_run_local_with_zero_nodes_is_a_usage_error_in_plain_words(tmp_path: Path) -> None:
    result = run(
        *KTRAIN, "job", "run", "--local", "--runtime", "torch-distributed", "--nodes", "0", "--", "true", cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert "the job runs no pod" in result.stderr and "never" not in result.stderr
