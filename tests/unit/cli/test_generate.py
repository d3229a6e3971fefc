"""ktrain.cli.generate (`python -m ktrain.cli.generate`): writes the command tree, the completion
scripts and docs/commands.md — each exactly the text the staleness checks compare with
(tests/architecture/test_completion_sync.py, tests/test_docs.py) — here into a tmp dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ktrain.cli import generate
from ktrain.cli.commands import command_functions
from ktrain.cli.spec import info_of
from ktrain.completion.scripts import generated_files
from ktrain.completion.tree import TREE_FILE


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """generate's targets moved into tmp_path: tree.json, completions/, docs/commands.md."""
    (tmp_path / "completions").mkdir()
    (tmp_path / "docs").mkdir()
    monkeypatch.setattr(generate, "TREE_FILE", str(tmp_path / "tree.json"))
    monkeypatch.setattr(generate, "COMPLETIONS_DIR", tmp_path / "completions")
    monkeypatch.setattr(generate, "COMMANDS_DOC", tmp_path / "docs" / "commands.md")
    monkeypatch.setattr(generate, "FAST_DIR", str(tmp_path / "fast_commands"))
    return tmp_path


def test_main_writes_every_generated_file_with_the_text_the_staleness_checks_expect(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generate.main() == 0
    tree = generate.build_tree()
    assert (out / "tree.json").read_text(encoding="utf-8") == generate.tree_text(tree)
    assert (out / "docs" / "commands.md").read_text(encoding="utf-8") == generate.commands_doc(tree)
    scripts = generated_files()
    assert sorted(p.name for p in (out / "completions").iterdir()) == sorted(scripts)
    for name, text in scripts.items():
        assert (out / "completions" / name).read_text(encoding="utf-8") == text
    fast = generate.fast_command_files(tree)
    assert fast and all(path.parent == out / "fast_commands" for path in fast)
    assert sorted(p.name for p in (out / "fast_commands").iterdir()) == sorted(p.name for p in fast)
    for path, text in fast.items():
        assert path.read_text(encoding="utf-8") == text
    written = capsys.readouterr().err.splitlines()
    assert len(written) == 2 + len(scripts) + len(fast)
    assert all(line.startswith("wrote ") for line in written)


def test_main_removes_the_file_of_a_command_that_is_no_longer_fast(out: Path) -> None:
    (out / "fast_commands").mkdir()
    gone = out / "fast_commands" / "job.frobnicate.json"
    gone.write_text("{}", encoding="utf-8")
    assert generate.main() == 0
    assert not gone.exists()
    assert (out / "fast_commands" / "job.get.json").is_file()


def test_what_it_writes_is_what_the_checkout_holds(out: Path) -> None:
    generate.main()
    assert (out / "tree.json").read_text(encoding="utf-8") == Path(TREE_FILE).read_text(encoding="utf-8")
    assert (out / "docs" / "commands.md").read_text(encoding="utf-8") == (
        generate.REPO / "docs" / "commands.md"
    ).read_text(encoding="utf-8")


def test_a_missing_folder_is_skipped_as_in_a_wheel(out: Path) -> None:
    (out / "docs").rmdir()
    assert generate.main() == 0
    assert not (out / "docs").exists()
    assert (out / "tree.json").is_file()


def test_the_tree_text_is_sorted_json_with_one_final_newline() -> None:
    text = generate.tree_text({"b": 1, "a": {"d": 2, "c": 3}})
    assert text == '{\n "a": {\n  "c": 3,\n  "d": 2\n },\n "b": 1\n}\n'
    assert json.loads(text) == {"a": {"c": 3, "d": 2}, "b": 1}


def test_the_tree_names_the_fast_handler_and_the_aliases_of_each_command() -> None:
    tree = generate.build_tree()
    assert tree["format"] == 1
    for func in command_functions():
        info = info_of(func)
        assert info is not None
        for path in (info.path, *info.aliases):
            node = tree["root"]
            for name in path:
                node = node["commands"][name]
            if info.fast:
                assert node["handler"] == f"{func.__module__}:{func.__name__}"
            else:
                assert "handler" not in node, path
        if info.aliases:
            node = tree["root"]
            for name in info.path:
                node = node["commands"][name]
            assert node["aliases"] == [" ".join(p) for p in info.aliases]


def test_the_command_reference_is_marked_generated_and_has_a_section_per_command() -> None:
    doc = generate.commands_doc()
    assert doc.startswith(generate.DOC_HEADER + "# ktrain command reference\n")
    assert doc.endswith("\n") and not doc.endswith("\n\n")
    for func in command_functions():
        info = info_of(func)
        assert info is not None
        assert f"`ktrain {' '.join(info.path)}`" in doc
    assert "**Aliases**: `ktrain render`" in doc
