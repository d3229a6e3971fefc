"""`kubectl ktrain ...`: the kubectl plugin and its completion through kubectl's plugin completion
(`kubectl_complete-ktrain`), run by the real kubectl. Skipped where kubectl is not installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ktrain.completion.kubectl import cobra_answer
from ktrain.completion.request import Answer

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@pytest.fixture
def plugin_path(tmp_path: Path) -> dict[str, str]:
    """PATH with `kubectl-ktrain` and `kubectl_complete-ktrain` as the console scripts run them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in (
        ("kubectl-ktrain", "ktrain.launcher"),
        ("kubectl_complete-ktrain", "ktrain.completion.kubectl"),
    ):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'from {target} import run; run()' \"$@\"\n")
        script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def kubectl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60, check=False)


def candidates(output: str) -> tuple[list[str], str]:
    """(the values, the directive line) of a cobra `__complete` answer."""
    lines = output.splitlines()
    directive = next(line for line in reversed(lines) if line.startswith(":"))
    return [line.split("\t")[0] for line in lines[: lines.index(directive)] if line], directive


@needs_kubectl
def test_kubectl_runs_ktrain_as_a_plugin(plugin_path: dict[str, str]) -> None:
    helped = kubectl(plugin_path, "ktrain", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "job" in helped.stdout and "Usage:" in helped.stdout
    rendered = kubectl(
        plugin_path, "ktrain", "job", "render", "--runtime", "torch-distributed", "--name", "x", "-o", "name"
    )
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout == "jobset.jobset.x-k8s.io/x\n"
    failed = kubectl(plugin_path, "ktrain", "job", "render", "--runtime", "no-such-runtime")
    assert failed.returncode == 4 and "no-such-runtime" in failed.stderr  # ktrain's exit code passes through


@needs_kubectl
def test_kubectl_completes_ktrain_commands_through_the_plugin_completion(plugin_path: dict[str, str]) -> None:
    done = kubectl(plugin_path, "__complete", "ktrain", "job", "")
    assert done.returncode == 0, done.stderr
    values, directive = candidates(done.stdout)
    assert {"render", "create", "list", "delete"} <= set(values)
    assert directive == ":4"  # ShellCompDirectiveNoFileComp
    assert "render\tRender the objects" in done.stdout  # descriptions, cobra's way


@needs_kubectl
def test_kubectl_completes_option_values_and_leaves_file_names_to_the_shell(plugin_path: dict[str, str]) -> None:
    values, directive = candidates(
        kubectl(plugin_path, "__complete", "ktrain", "job", "render", "--runtime", "").stdout
    )
    assert "torch-distributed" in values and directive == ":4"
    # --flag=value: cobra's scripts complete the part after `=`
    values, _ = candidates(kubectl(plugin_path, "__complete", "ktrain", "job", "render", "--runtime=torch").stdout)
    assert "torch-distributed" in values and not any(v.startswith("--runtime=") for v in values)
    _, directive = candidates(kubectl(plugin_path, "__complete", "ktrain", "job", "render", "-f", "").stdout)
    assert directive == ":0"  # ShellCompDirectiveDefault: the shell completes file names


def test_the_cobra_directives() -> None:
    assert cobra_answer(Answer("dirs")) == ":16\n"  # ShellCompDirectiveFilterDirs
    assert cobra_answer(Answer("nospace", [("a=", "")])) == "a=\n:6\n"  # NoSpace | NoFileComp
    assert cobra_answer(Answer("values", [("x", "tab\there")])) == "x\ttab here\n:4\n"
