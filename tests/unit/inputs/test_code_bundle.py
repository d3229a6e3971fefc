"""`--code` packing: what is sent, what is left out or refused, and that the same tree always
gives the same ConfigMaps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.errors import CodeRefusedError, KtrainError
from ktrain.inputs import code_bundle
from ktrain.inputs.code_bundle import MAX_CONFIGMAP_BYTES, collect, config_maps, volume


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def _paths(root: Path, *given: str, include: list[str] | None = None) -> list[str]:
    return [f.path for f in collect(list(given) or ["."], include, cwd=str(root)).files]


@pytest.fixture
def chdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_gitignore_ktrainignore_nested_rules_and_vcs_dirs_are_honoured(chdir: Path) -> None:
    _tree(
        chdir,
        {
            "train.py": "print(1)\n",
            "debug.log": "x",
            "keep.log": "x",
            ".gitignore": "*.log\n!keep.log\ndata/\n",
            ".ktrainignore": "notebooks/\n",
            "data/big.csv": "1,2\n",
            "notebooks/a.ipynb": "{}",
            "src/pkg/mod.py": "x = 1\n",
            "src/pkg/.gitignore": "generated_*.py\n",
            "src/pkg/generated_a.py": "",
            ".git/config": "[core]\n",
            "src/__pycache__/m.cpython-311.pyc": b"\x00",
        },
    )
    assert _paths(chdir) == [
        ".gitignore",
        ".ktrainignore",
        "keep.log",
        "src/pkg/.gitignore",
        "src/pkg/mod.py",
        "train.py",
    ]


def test_a_directory_is_the_code_directory_and_a_file_lands_by_its_name(
    chdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue #24 item 3: beside `proj/`, `--code proj` sent `proj/train.py`."""
    _tree(chdir, {"proj/train.py": "", "proj/utils/io.py": "", "other/x.py": ""})
    outside = _tree(tmp_path_factory.mktemp("elsewhere"), {"lib/helpers.py": ""})
    assert _paths(chdir, "proj") == ["train.py", "utils/io.py"]
    assert _paths(chdir, "proj/train.py", str(outside / "lib")) == ["helpers.py", "train.py"]
    assert _paths(chdir / "proj", ".") == ["train.py", "utils/io.py"]


def test_two_different_files_at_one_path_are_refused(chdir: Path) -> None:
    _tree(chdir, {"a/train.py": "1", "b/train.py": "2", "c/train.py": "1"})
    assert _paths(chdir, "a", "c") == ["train.py"]  # the same bytes: one file
    with pytest.raises(CodeRefusedError, match=r"two different files land at 'train\.py'"):
        collect(["a", "b"], cwd=str(chdir))


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.production",
        "id_rsa",
        "id_ed25519.pub",
        "server.pem",
        "tls.key",
        ".netrc",
        ".aws/credentials",
        ".kube/config",
        "credentials.json",
    ],
)
def test_likely_secrets_are_refused_by_name(chdir: Path, name: str) -> None:
    _tree(chdir, {"train.py": "", name: "secret"})
    with pytest.raises(KtrainError) as err:
        collect(["."], cwd=str(chdir))
    assert "look like secrets" in err.value.message and name in err.value.message


def test_a_private_key_block_is_refused_whatever_the_file_is_called(chdir: Path) -> None:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    _tree(chdir, {"train.py": "", "notes.txt": f"x\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n"})
    with pytest.raises(KtrainError, match=r"notes\.txt"):
        collect(["."], cwd=str(chdir))


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [
                *code_bundle.SECRET_PATTERNS,
                *("src", "a.py", ".aws", ".kube", ".docker", "x.env", "key", "id_rsa.pub", "config", "credentials"),
                *("my.pem.bak", "service-account", "sa-key.json", "env", "*"),
            ]
        ).map(lambda p: p.replace("*", "x")),
        min_size=1,
        max_size=4,
    )
)
def test_credential_names_match_as_git_matches_them(parts: list[str]) -> None:
    """SECRET_PATTERNS is matched without pathspec (one expression): the same paths as pathspec's
    gitignore rules, patterns with a slash from the top, the others at any depth."""
    import pathspec

    path = "/".join(parts)
    expected = pathspec.GitIgnoreSpec.from_lines(list(code_bundle.SECRET_PATTERNS)).match_file(path)
    assert bool(code_bundle._secret_names().match(path)) == expected, path


def test_code_include_or_naming_the_file_sends_it_anyway(chdir: Path) -> None:
    _tree(chdir, {"train.py": "", "config/.env": "A=1"})
    assert _paths(chdir, ".", include=["config/.env"]) == ["config/.env", "train.py"]
    assert _paths(chdir, "config/.env") == [".env"]


def test_same_tree_same_bytes_whatever_the_mtimes_order_or_umask(tmp_path: Path) -> None:
    files = {"b.py": "b\n", "a/x.py": "x\n", "run.sh": "#!/bin/sh\n", "blob.bin": bytes(range(256))}
    first = _tree(tmp_path / "one", files)
    os.chmod(first / "run.sh", 0o755)
    old = os.umask(0o077)
    try:
        second = _tree(tmp_path / "two", dict(reversed(list(files.items()))))
        os.chmod(second / "run.sh", 0o700)
    finally:
        os.umask(old)
    os.utime(second / "b.py", (1, 1))
    one = config_maps(collect(["."], cwd=str(first)), "job", "ns")
    two = config_maps(collect(["."], cwd=str(second)), "job", "ns")
    assert one == two
    assert one[0]["metadata"]["name"].startswith("job-code-")
    assert "blob.bin" in "".join(one[0]["binaryData"])  # not UTF-8 text: binaryData
    items = volume(collect(["."], cwd=str(first)), one)["projected"]["sources"][0]["configMap"]["items"]
    assert [i.get("mode") for i in items if i["path"] == "run.sh"] == [0o755]


def test_a_changed_file_changes_the_name(chdir: Path) -> None:
    _tree(chdir, {"train.py": "v1"})
    before = config_maps(collect(["."], cwd=str(chdir)), "job", "ns")[0]["metadata"]["name"]
    (chdir / "train.py").write_text("v2")
    assert config_maps(collect(["."], cwd=str(chdir)), "job", "ns")[0]["metadata"]["name"] != before


def test_a_large_tree_is_split_under_the_configmap_limit(chdir: Path) -> None:
    _tree(chdir, {f"part{i}.bin": os.urandom(400_000) for i in range(5)})
    bundle = collect(["."], cwd=str(chdir))
    maps = config_maps(bundle, "job", "ns")
    assert len(maps) == 3
    for cm in maps:
        import base64

        size = sum(len(base64.b64decode(v)) for v in cm["binaryData"].values())
        assert size <= MAX_CONFIGMAP_BYTES
    assert [m["metadata"]["name"][-2:] for m in maps] == ["-0", "-1", "-2"]
    sources = volume(bundle, maps)["projected"]["sources"]
    assert sorted(i["path"] for s in sources for i in s["configMap"]["items"]) == [f"part{i}.bin" for i in range(5)]


def test_over_the_cap_names_the_largest_files(chdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_bundle, "MAX_TOTAL_BYTES", 1000)
    _tree(chdir, {"small.py": "x" * 10, "weights.bin": b"\1" * 900, "data.csv": "y" * 500})
    with pytest.raises(KtrainError) as err:
        collect(["."], cwd=str(chdir))
    assert "weights.bin (900)" in err.value.message and "data.csv (500)" in err.value.message


def test_one_file_over_a_configmap_is_refused_with_advice(chdir: Path) -> None:
    _tree(chdir, {"model.pt": b"\0" * (MAX_CONFIGMAP_BYTES + 1)})
    with pytest.raises(KtrainError) as err:
        collect(["."], cwd=str(chdir))
    assert "model.pt" in err.value.message and "image" in (err.value.hint or "")


def test_symlinks_inside_are_followed_and_leaving_the_tree_is_refused(chdir: Path, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    _tree(chdir, {"train.py": "t", "lib/real.py": "r"})
    os.symlink("lib/real.py", chdir / "alias.py")
    assert _paths(chdir) == ["alias.py", "lib/real.py", "train.py"]
    outside = tmp_path_factory.mktemp("out") / "secret.py"
    outside.write_text("s")
    os.symlink(outside, chdir / "escape.py")
    with pytest.raises(KtrainError, match="leaves the tree"):
        collect(["."], cwd=str(chdir))


def test_special_files_and_non_utf8_names_are_refused(chdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(chdir, {"train.py": ""})
    os.mkfifo(chdir / "pipe")
    assert _paths(chdir) == ["train.py"]  # git lists no special file
    with pytest.raises(KtrainError, match="not a regular file"):
        collect(["pipe"], cwd=str(chdir))  # named
    monkeypatch.setattr(code_bundle, "_git", lambda args, cwd: None)  # without git
    with pytest.raises(KtrainError, match="not a regular file"):
        collect(["."], cwd=str(chdir))
    os.unlink(chdir / "pipe")
    (chdir / os.fsdecode(b"caf\xe9.py")).write_text("")
    with pytest.raises(KtrainError, match="not UTF-8"):
        collect(["."], cwd=str(chdir))


def test_everything_ignored_is_an_error(chdir: Path) -> None:
    _tree(chdir, {".ktrainignore": "*\n"})
    with pytest.raises(KtrainError, match="no files"):
        collect(["."], cwd=str(chdir))
