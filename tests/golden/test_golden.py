"""Golden render cases: one pytest id per directory under tests/golden/cases/<topic>/<scenario>/.

Each case has `trainjob.yaml` and `runtime.yaml`, and either `expected.yaml` (every object the
controller would create, multi-document) or `expected_error.txt` (a substring the error on stderr
must contain; the render must fail without a traceback). A valid case may add
`expected_warnings.txt`: substrings stderr must contain. An optional `args.txt` holds more
`job render` arguments, one a line (`--feature-gates` and `TrainJobStatus=true`: the controller's
feature gates). Expected files start with a
`# source: ENGINE.md §... | upstream <file>:<test>` comment saying where the expectation comes from.

Documents are matched by (apiVersion, kind, metadata.name); `null`s, empty maps and empty lists are
dropped before comparing (except `emptyDir: {}`), as the shared conformance checker does. An
optional `ignore.txt` lists `Kind/name/json/pointer` paths whose value must exist but is random
(the MPI SSH key pair).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

CASES = Path(__file__).parent / "cases"


def _case_dirs() -> list[Path]:
    return sorted(p.parent for p in CASES.glob("*/*/trainjob.yaml"))


def _normalize(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        out = {k: _normalize(v, k) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and (v not in ({}, []) or k == "emptyDir")}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


def _doc_key(doc: dict[str, Any]) -> tuple[str, str, str]:
    return doc.get("apiVersion", ""), doc.get("kind", ""), (doc.get("metadata") or {}).get("name", "")


def _drop_pointer(doc: dict[str, Any], pointer: list[str]) -> None:
    node: Any = doc
    for part in pointer[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    assert pointer[-1] in node, f"ignored path /{'/'.join(pointer)} is missing"
    del node[pointer[-1]]


@pytest.mark.parametrize("case", _case_dirs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_case(case: Path, cli) -> None:  # type: ignore[no-untyped-def]
    args_file = case / "args.txt"
    lines = args_file.read_text().splitlines() if args_file.is_file() else []
    extra = [a for a in lines if a and not a.startswith("#")]
    result = cli(
        "job", "render", "-f", str(case / "trainjob.yaml"), "--runtime-file", str(case / "runtime.yaml"), *extra
    )
    error_file = case / "expected_error.txt"
    if error_file.is_file():
        wanted = [line for line in error_file.read_text().splitlines() if line and not line.startswith("#")]
        assert result.exit_code != 0, result.stdout
        assert "Traceback" not in result.stderr
        for line in wanted:
            assert line in result.stderr, result.stderr
        return
    assert result.exit_code == 0, result.stderr
    warnings_file = case / "expected_warnings.txt"
    for line in warnings_file.read_text().splitlines() if warnings_file.is_file() else []:
        if line and not line.startswith("#"):
            assert line in result.stderr, result.stderr
    expected = [d for d in yaml.safe_load_all((case / "expected.yaml").read_text()) if d]
    actual = [d for d in yaml.safe_load_all(result.stdout) if d]
    ignore_file = case / "ignore.txt"
    for line in ignore_file.read_text().split() if ignore_file.is_file() else []:
        kind, name, *pointer = line.split("/")
        for doc in actual + expected:
            if doc.get("kind") == kind and doc["metadata"]["name"] == name:
                _drop_pointer(doc, [p.replace("~1", "/") for p in pointer])
    assert sorted(map(_doc_key, actual)) == sorted(map(_doc_key, expected))
    by_key = {_doc_key(d): _normalize(d) for d in actual}
    for doc in expected:
        assert by_key[_doc_key(doc)] == _normalize(doc), f"{_doc_key(doc)} differs"
