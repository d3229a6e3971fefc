"""Which files `--code DIR` sends (issue #24 item 4): what git would commit. Inside a work tree
ktrain asks git; outside one it asks git through an empty repository of its own, and reads the
.gitignore files with pathspec only where git is not installed. Each is checked here against git
itself (`git ls-files --others --exclude-standard` in a repository made on the same tree)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktrain.errors import CodeRefusedError
from ktrain.inputs.code_bundle import collect, tree_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(autouse=True)
def _plain_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """git without the developer's global or system config (core.excludesFile would change answers)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _sent(root: Path) -> list[str]:
    return sorted(rel for rel, _ in tree_files(str(root)))


def test_a_parent_gitignore_applies_from_a_subdirectory_of_a_work_tree(tmp_path: Path) -> None:
    """The issue's report: from a subdirectory, files the parent .gitignore ignores were sent."""
    _write(
        tmp_path,
        {
            ".gitignore": "*.log\ncheckpoints/\n",
            ".ktrainignore": "*.ipynb\n",
            "sub/train.py": "",
            "sub/run.log": "",
            "sub/checkpoints/c.pt": "",
            "sub/explore.ipynb": "",
            "sub/keep/.gitkeep": "",
        },
    )
    _git(tmp_path, "init", "-q")
    assert _git(tmp_path, "check-ignore", "sub/run.log", "sub/checkpoints/c.pt").split() == [
        "sub/run.log",
        "sub/checkpoints/c.pt",
    ]
    assert _sent(tmp_path / "sub") == ["keep/.gitkeep", "train.py"]


def test_tracked_files_are_sent_even_when_a_pattern_matches_them(tmp_path: Path) -> None:
    _write(tmp_path, {"train.py": "", "vendored.log": "x"})
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "vendored.log")
    (tmp_path / ".gitignore").write_text("*.log\nother.log\n")
    (tmp_path / "other.log").write_text("")
    assert _sent(tmp_path) == [".gitignore", "train.py", "vendored.log"]


def test_lines_git_skips_are_no_internal_error(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": "!\n\\\n[\n*.tmp\n", "a.tmp": "", "train.py": ""})
    assert _sent(tmp_path) == [".gitignore", "train.py"]


def test_a_symlink_loop_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    _write(tmp_path, {"train.py": "", "sub/x.py": ""})
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    with pytest.raises(CodeRefusedError, match=r"--code: a is a symlink loop"):
        collect(["."], cwd=str(tmp_path))
    os.unlink(tmp_path / "a")
    os.unlink(tmp_path / "b")
    os.symlink("..", tmp_path / "sub" / "up")
    with pytest.raises(CodeRefusedError, match=r"sub/up is a symlink loop"):
        collect(["."], cwd=str(tmp_path))
    _git(tmp_path, "init", "-q")  # git lists the link; ktrain follows it the same way
    with pytest.raises(CodeRefusedError, match=r"sub/up is a symlink loop"):
        collect(["."], cwd=str(tmp_path))


def test_a_link_to_a_directory_inside_is_followed(tmp_path: Path) -> None:
    _write(tmp_path, {"lib/util.py": "", "train.py": ""})
    os.symlink("lib", tmp_path / "alias")
    assert _sent(tmp_path) == ["alias/util.py", "lib/util.py", "train.py"]
    _git(tmp_path, "init", "-q")
    assert _sent(tmp_path) == ["alias/util.py", "lib/util.py", "train.py"]


DIRS = ["a", "b", "d1", "sub"]
FILES = ["x.log", "k.py", "a.txt", "d2", "B.md"]
SEGMENTS = [*DIRS, *FILES, "*", "?", "**", "*.log", "d[0-9]", "[ab]", "*.py", "\\!x"]


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))
    text = "/".join(parts)
    if draw(st.booleans()):
        text = "/" + text
    if draw(st.booleans()):
        text += "/"
    if draw(st.integers(0, 4)) == 0:
        text = "!" + text
    return text


@st.composite
def trees(draw: st.DrawFn) -> dict[str, str]:
    paths = draw(
        st.lists(
            st.tuples(st.lists(st.sampled_from(DIRS), max_size=2), st.sampled_from(FILES)).map(
                lambda t: "/".join([*t[0], t[1]])
            ),
            min_size=1,
            max_size=12,
            unique=True,
        )
    )
    files = dict.fromkeys(paths, "")
    files[".gitignore"] = "\n".join(draw(st.lists(patterns(), max_size=6))) + "\n"
    nested = draw(st.sampled_from(DIRS))
    if any(p.startswith(nested + "/") for p in paths) and draw(st.booleans()):
        files[f"{nested}/.gitignore"] = "\n".join(draw(st.lists(patterns(), min_size=1, max_size=3))) + "\n"
    return files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=trees())
def test_outside_a_work_tree_the_rules_are_git_s(tmp_path_factory: pytest.TempPathFactory, files: dict) -> None:  # type: ignore[type-arg]
    root = tmp_path_factory.mktemp("tree")
    _write(root, files)
    ours = _sent(root)  # not a work tree: git through ktrain's empty repository
    _git(root, "init", "-q")
    listed = _git(root, "ls-files", "-z", "--others", "--exclude-standard").split("\0")
    assert ours == sorted(p for p in listed if p), files
    assert _sent(root) == ours  # in the work tree


SIMPLE = ["*.log", "d1/", "/a", "sub/*.py", "!keep.log", "a.txt", "**/b/*.md", "d2", "x.log"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=trees(), lines=st.lists(st.sampled_from(SIMPLE), max_size=5))
def test_without_git_pathspec_agrees_with_git_on_everyday_rules(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    files: dict,  # type: ignore[type-arg]
    lines: list[str],
) -> None:
    """The fallback where git is not installed. Everyday rules only: the differential test above,
    run through pathspec, finds corner cases where it and git part (`b/a/**/` ignores b/a itself;
    `a` then `!/a` re-includes a/a too)."""
    import ktrain.inputs.code_bundle as code_bundle

    files = {k: v for k, v in files.items() if not k.endswith(".gitignore")}
    files[".gitignore"] = "\n".join(lines) + "\n"
    root = tmp_path_factory.mktemp("tree")
    _write(root, files)
    with monkeypatch.context() as m:
        m.setattr(code_bundle, "_git", lambda args, cwd: None)  # no git on PATH
        ours = _sent(root)
    _git(root, "init", "-q")
    listed = _git(root, "ls-files", "-z", "--others", "--exclude-standard").split("\0")
    assert ours == sorted(p for p in listed if p), files
