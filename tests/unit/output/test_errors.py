"""How an error is printed (ktrain/output/errors.py): the offending line echoed with a caret under the
column, cut around it when long; a long list of problems stops at a screenful (issue #12)."""

from __future__ import annotations

from pathlib import Path

from hostile_input import JOB, no_traceback

from ktrain.errors import ExitCode, InputError
from ktrain.output.errors import ECHO_WIDTH, format_error


def test_long_offending_line_is_cut_around_the_column(cli, tmp_path: Path) -> None:
    job = tmp_path / "long.yaml"
    job.write_text(JOB + '  trainer:\n    image: "' + "x" * 300_000 + '" ]\n')
    r = cli("job", "validate", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert len(r.stderr) < 2000, len(r.stderr)
    echoed, caret = [line for line in r.stderr.splitlines() if line.startswith("    ")][:2]
    assert len(echoed) <= 4 + ECHO_WIDTH + 2 and "\u2026" in echoed
    assert echoed[caret.index("^")] == "]"  # the caret is still under the character at fault


def test_echoed_line_keeps_the_caret_under_the_column() -> None:
    line = "a" * 1000 + "X" + "b" * 1000
    text = format_error(InputError("bad", file="f", line=1, column=1001, source_line=line))
    echoed, caret = text.splitlines()[1:3]
    assert echoed[caret.index("^")] == "X" and echoed.startswith("    \u2026") and echoed.endswith("\u2026")
    short = format_error(InputError("bad", file="f", line=1, column=3, source_line="ab\x1b[2Jc"))
    assert "\x1b" not in short and short.splitlines()[1:3] == ["    ab?[2Jc", "      ^"]


def test_a_hundred_long_duplicates_fill_a_screen_not_a_scrollback(cli, tmp_path: Path) -> None:
    """Found by the mutation fuzzer: 100 problems each quoting a 1,000-character value made 8 KiB of
    stderr. The list stops at a screenful and says how many were left out."""
    name = "a" * 2000
    jobs = "".join(f"      - &job{{name: {name}}}\n" if i == 0 else "      - *job\n" for i in range(101))
    runtime = tmp_path / "rt.yaml"
    runtime.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata:\n  name: rt\n"
        "spec:\n  mlPolicy:\n    numNodes: 1\n  template:\n    spec:\n      replicatedJobs:\n"
        + jobs.replace("      - ", "        - ")
    )
    result = cli("job", "render", "--runtime-file", str(runtime), "-r", "rt", "--image", "x")
    assert result.exit_code == int(ExitCode.INVALID), result.stderr
    no_traceback(result.stderr)
    assert len(result.stderr.encode()) < 8192
    first, *rest = result.stderr.splitlines()
    assert first.startswith("error: ClusterTrainingRuntime rt is invalid (") and "problems):" in first
    listed = sum(1 for line in rest if line.startswith("  - "))
    total = int(first.split("(")[1].split()[0])
    assert 1 <= listed < total and f"  ... and {total - listed} more problems" in rest
