"""Every shared conformance case, through the same CLI contract check.py uses
(`ktrain job render -f TRAINJOB --runtime-file RUNTIME`), compared with check.py's own rules.

Marked `shared`: skipped, with the reason, when ../shared is absent.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CASES, SHARED


def _case_dirs() -> list[Path]:
    if not CASES.is_dir():
        return []
    return sorted(p for p in CASES.iterdir() if (p / "case.yaml").is_file())


def _checker():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("conformance_check", SHARED / "conformance" / "check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance_check"] = module
    spec.loader.exec_module(module)
    return module


# Without ../shared there is no case: one placeholder, skipped by the `shared` marker (an empty
# parameter set would be skipped too, but with pytest's "got empty parameter set" for a reason).
@pytest.mark.shared
@pytest.mark.parametrize("case", _case_dirs() or [CASES / "<none>"], ids=lambda p: p.name)
def test_conformance_case(case: Path, cli) -> None:  # type: ignore[no-untyped-def]
    check = _checker()
    meta = yaml.safe_load((case / "case.yaml").read_text())
    result = cli("job", "render", "-f", str(case / "trainjob.yaml"), "--runtime-file", str(case / "runtime.yaml"))
    if meta["kind"] == "invalid":
        assert result.exit_code != 0, result.stdout
        assert meta["expect_error"] in result.stderr
        assert "Traceback" not in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    expected = check.load_docs((case / "expected.yaml").read_text(), "expected")
    actual = check.load_docs(result.stdout, "actual")
    ignores = check.parse_ignore(meta.get("ignore"))
    by_key = {check.doc_key(d): d for d in actual}
    assert sorted(map(str, by_key)) == sorted(str(check.doc_key(d)) for d in expected)
    diffs: list[str] = []
    for exp in expected:
        key = check.doc_key(exp)
        check.compare(check.normalize(exp), check.normalize(by_key[key]), [], ignores.get((key[1], key[2]), []), diffs)
    assert not diffs, "\n".join(diffs)


@pytest.mark.shared
def test_cases_are_present_when_shared_is() -> None:
    assert len(_case_dirs()) >= 51
