"""The shell completion scripts (`ktrain.completion.scripts`): where `install` puts them, and the
done-when check: TAB in a real interactive bash (driven through tmux) completes ktrain.

The tmux checks skip when tmux or bash is not installed. The bash script needs no bash-completion package.
zsh and fish are checked the same way when they are installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ktrain.completion import scripts
from ktrain.completion.tree import load_tree

REPO = Path(__file__).resolve().parents[3]
needs_tmux = pytest.mark.skipif(not (shutil.which("tmux") and shutil.which("bash")), reason="needs tmux and bash")


class Terminal:
    def __init__(self, tmp_path: Path, shell: str = "bash") -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "ktrain"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ktrain "$@"\n')
        shim.chmod(0o755)
        self.socket = f"ktrain-test-{uuid.uuid4().hex[:8]}"
        env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(tmp_path),
            "TERM": "xterm",
            "PYTHONPATH": str(REPO),
            "KTRAIN_CACHE_DIR": str(tmp_path / "cache"),
            "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
            "PS1": "$ ",
        }
        self.env = env
        if shell == "zsh":
            (tmp_path / ".zshrc").write_text(
                f"autoload -Uz compinit && compinit -u\nsource {REPO / 'completions' / '_ktrain'}\n"
            )
            argv = ["zsh", "-i"]
        elif shell == "fish":
            env["XDG_CONFIG_HOME"] = str(tmp_path / ".config")
            (tmp_path / ".config" / "fish").mkdir(parents=True)
            (tmp_path / ".config" / "fish" / "config.fish").write_text(
                f"source {REPO / 'completions' / 'ktrain.fish'}\n"
            )
            argv = ["fish", "-i"]
        else:
            argv = ["bash", "--norc", "--noprofile", "-i"]
        env["ZDOTDIR"] = str(tmp_path)
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "200",
                "-y",
                "50",
                "env",
                *[f"{k}={v}" for k, v in env.items()],
                *argv,
            ],
            check=True,
            env={**os.environ, **env},
        )
        time.sleep(0.5)
        if shell == "bash":
            self.type(f"source {REPO / 'completions' / 'ktrain.bash'}\n")
        self.type("clear\n")
        time.sleep(0.3)

    def type(self, keys: str) -> None:
        for part in keys.split("\n")[:-1] if keys.endswith("\n") else [keys]:
            subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "0", "-l", part], check=True)
            if keys.endswith("\n"):
                subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "0", "Enter"], check=True)

    def tab(self, times: int = 1) -> None:
        for _ in range(times):
            subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "0", "Tab"], check=True)
            time.sleep(0.15)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "0"], check=True, capture_output=True, text=True
        ).stdout

    def wait_for(self, predicate, timeout: float = 20.0) -> str:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text) or time.monotonic() > deadline:
                return text
            time.sleep(0.1)

    def clear_line(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "0", "C-c"], check=True)
        self.type("clear\n")
        time.sleep(0.3)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)


@pytest.fixture
def terminal(tmp_path: Path):  # type: ignore[no-untyped-def]
    term = Terminal(tmp_path)
    yield term
    term.close()


@needs_tmux
def test_tab_lists_bundled_runtimes_and_completes_a_unique_one(terminal: Terminal) -> None:
    terminal.type("ktrain job render --runtime ")
    terminal.tab(2)
    screen = terminal.wait_for(lambda s: "xgboost-distributed" in s)
    for name in ("deepspeed-distributed", "torch-distributed", "xgboost-distributed", "torchtune-llama3.2-1b"):
        assert name in screen, screen
    terminal.clear_line()
    terminal.type("true && ktrain job render --runtime deeps")
    terminal.tab()
    screen = terminal.wait_for(lambda s: "--runtime deepspeed-distributed" in s)
    assert "ktrain job render --runtime deepspeed-distributed" in screen, screen


@needs_tmux
def test_tab_completes_job_logs_steps(terminal: Terminal) -> None:
    if "logs" not in load_tree()["root"]["commands"]["job"].get("commands", {}):
        pytest.skip("`ktrain job logs` is not in the command tree yet")
    terminal.type("ktrain job logs some-job --step ")
    terminal.tab(2)
    screen = terminal.wait_for(lambda s: "model-initializer" in s)
    for step in ("dataset-initializer", "model-initializer", "launcher", "node"):
        assert step in screen, screen


@needs_tmux
@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_complete_runtime_names(tmp_path: Path, shell: str) -> None:
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed")
    term = Terminal(tmp_path, shell)
    try:
        term.type("true && ktrain job render --runtime=deeps")  # a second command on the same line
        term.tab()
        screen = term.wait_for(lambda s: "--runtime=deepspeed-distributed" in s)
        assert "ktrain job render --runtime=deepspeed-distributed" in screen, screen
    finally:
        term.close()


def test_each_shells_script_is_the_checked_in_copy_and_calls_the_completion_entry() -> None:
    files = scripts.generated_files()
    assert set(files) == {"ktrain.bash", "_ktrain", "ktrain.fish", "ktrain.ps1"}
    for name, text in files.items():
        assert (REPO / "completions" / name).read_text() == text, name
        assert "_KTRAIN_COMPLETE" in text, name  # the variable the launcher answers a TAB press on


@pytest.mark.parametrize(
    ("shell_path", "shell"),
    [("/bin/bash", "bash"), ("/usr/bin/zsh", "zsh"), ("/usr/local/bin/fish", "fish"), ("/usr/bin/pwsh", "powershell")],
)
def test_the_shell_is_told_by_shell(monkeypatch: pytest.MonkeyPatch, shell_path: str, shell: str) -> None:
    monkeypatch.setenv("SHELL", shell_path)
    assert scripts.detect_shell() == shell


def test_an_unknown_or_missing_shell_is_not_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/tcsh")
    assert scripts.detect_shell() is None
    monkeypatch.delenv("SHELL")
    assert scripts.detect_shell() is None


def test_install_targets_follow_xdg_and_quote_the_path_for_the_rc_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    target, rc, line = scripts.install_targets("bash")
    assert target == tmp_path / ".local/share/bash-completion/completions/ktrain"
    assert rc == tmp_path / ".bashrc"
    in_home = '"$HOME/.local/share/bash-completion/completions/ktrain"'
    assert line == f"[ -f {in_home} ] && . {in_home}"
    # outside $HOME, a path with a quote in it stays one shell word
    odd = tmp_path.parent / "it's data"
    monkeypatch.setenv("XDG_DATA_HOME", str(odd))
    _, _, line = scripts.install_targets("bash")
    quoted = "'" + str(odd).replace("'", "'\\''") + "/bash-completion/completions/ktrain'"
    assert line == f"[ -f {quoted} ] && . {quoted}"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert scripts.install_targets("fish") == (tmp_path / "cfg/fish/completions/ktrain.fish", None, None)


def test_install_keeps_the_rc_files_own_lines_and_adds_its_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".zshrc").write_text("export EDITOR=vi")  # no newline at the end
    first = scripts.install("zsh")
    assert first == [f"wrote {tmp_path / '.zfunc/_ktrain'}", f"added a line to {tmp_path / '.zshrc'}"]
    again = scripts.install("zsh")
    assert again == [f"{tmp_path / '.zfunc/_ktrain'} is up to date"]
    rc = (tmp_path / ".zshrc").read_text()
    assert rc.startswith("export EDITOR=vi\n" + scripts.RC_MARKER + "\n")
    assert rc.count(scripts.RC_MARKER) == 1
    assert (tmp_path / ".zfunc/_ktrain").read_text() == scripts.script("zsh")
