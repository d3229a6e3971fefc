"""`ktrain completion bash|zsh|fish|powershell` and `ktrain completion install`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_completion_script_commands_print_the_checked_in_scripts(cli) -> None:
    root = Path(__file__).resolve().parents[2] / "completions"
    for shell, name in (
        ("bash", "ktrain.bash"),
        ("zsh", "_ktrain"),
        ("fish", "ktrain.fish"),
        ("powershell", "ktrain.ps1"),
    ):
        r = cli("completion", shell)
        assert r.exit_code == 0
        assert r.stdout == (root / name).read_text()


def test_install_writes_standard_locations_once(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = str(tmp_path)

    def install(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ktrain", "completion", "install", *args], capture_output=True, text=True, env=env
        )

    for _ in range(2):
        r = install("--shell", "bash")
        assert r.returncode == 0, r.stderr
    script = tmp_path / ".local/share/bash-completion/completions/ktrain"
    assert "_ktrain_complete" in script.read_text()
    assert (tmp_path / ".bashrc").read_text().count("ktrain completion install") == 1
    assert install("--shell", "fish").returncode == 0
    assert (tmp_path / ".config/fish/completions/ktrain.fish").is_file()
    assert install("--shell", "zsh").returncode == 0
    assert (tmp_path / ".zfunc/_ktrain").is_file() and "fpath+=" in (tmp_path / ".zshrc").read_text()
    env["SHELL"] = "/bin/tcsh"
    r = install()
    assert r.returncode == 2 and "--shell" in r.stderr and "Traceback" not in r.stderr
