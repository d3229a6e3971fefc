"""`--code` figures (issue #24): a render sending a 4.6 MB tree (cold: nothing scanned yet; warm: a
tree sent before, whose secret scan the cache remembers), the plain render beside it (which
`--code` must not slow down), and listing a tree of 5,000 files under 1,000 .gitignore patterns
(through git in a work tree, through git outside one, and with pathspec where git is missing).

    .venv/bin/python benchmarks/code_tree.py            # about a minute on 2 cores
    .venv/bin/python benchmarks/code_tree.py --rounds 3

The tree is made of the Python sources of packages installed beside ktrain (rich, click, jinja2,
...: real code, which the secret scan must find clean) up to 3.6 MB, plus 1 MB of binary data.
Each figure is the median of fresh processes (`ktrain job render ... -o name`), or of in-process
calls for the listing; the CPU time (user + system) of the renders is shown beside their wall
time, as it moves less with the machine's load. As benchmarks/run.py does, PYTHONDONTWRITEBYTECODE
is dropped (a user's Python caches compiled modules). Targets (issue #24): the render with
--code, cold (nothing scanned yet: a first render, a CI machine) and warm, <= 0.25 s; the listing
<= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SOURCE_PACKAGES = ("rich", "click", "jinja2", "yaml", "pydantic", "typer", "markdown_it", "hypothesis")
TEXT_BYTES = 3_650_000  # a few files with example credentials are dropped (drop_flagged)
BINARY_BYTES = 1_000_000


def make_tree(root: Path) -> int:
    import importlib.util

    sources: list[Path] = []
    for name in SOURCE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            sources += sorted(Path(spec.submodule_search_locations[0]).rglob("*.py"))
    total = 0
    for path in sources:
        if total >= TEXT_BYTES:
            break
        data = path.read_bytes()
        if len(data) > 200_000:
            continue
        target = root / "src" / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            continue
        target.write_bytes(data)
        total += len(data)
    drop_flagged(root)
    rng = random.Random(24)
    for i in range(4):
        (root / "data").mkdir(exist_ok=True)
        (root / "data" / f"part{i}.bin").write_bytes(rng.randbytes(BINARY_BYTES // 4))
    (root / "train.py").write_text("print('train')\n")
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def drop_flagged(root: Path) -> None:
    """Libraries' docstrings hold example credentials (`https://user:pass@host`) a training project
    rarely does: the files the scan would refuse are left out, so the render succeeds."""
    from ktrain.inputs import code_secrets

    previous = os.environ.get("KTRAIN_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["KTRAIN_CACHE_DIR"] = cache
        try:
            files = [(str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*.py")]
            for finding in code_secrets.scan(files):
                (root / finding.path).unlink(missing_ok=True)
        finally:
            if previous is None:
                os.environ.pop("KTRAIN_CACHE_DIR", None)
            else:
                os.environ["KTRAIN_CACHE_DIR"] = previous


def ktrain() -> list[str]:
    script = Path(sys.executable).parent / "ktrain"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "ktrain"]


TARGET_SECONDS = 0.25  # a render with --code of this tree, cold or warm


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    return elapsed, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def renders(tree: Path, rounds: int) -> dict[str, float]:
    code = [
        *ktrain(),
        "job",
        "render",
        "-r",
        "torch-distributed",
        "--code",
        ".",
        "-o",
        "name",
        "--",
        "python",
        "train.py",
    ]
    plain = [*ktrain(), "job", "render", "-r", "torch-distributed", "--nodes", "4", "--", "torchrun", "train.py"]
    cold: list[tuple[float, float]] = []
    warm: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for _ in range(rounds):
        cache = tempfile.mkdtemp(prefix="ktrain-bench-cache-")
        env = {**base, "KTRAIN_CACHE_DIR": cache}
        timed(plain, tree, env)  # the runtime parse cache, as any render leaves it
        cold.append(timed(code, tree, env))
        warm.append(timed(code, tree, env))
        bare.append(timed(plain, tree, env))
        shutil.rmtree(cache, ignore_errors=True)
    out = {}
    for name, samples in (
        ("render --code 4.6 MB, cold", cold),
        ("render --code 4.6 MB, warm", warm),
        ("render without --code", bare),
    ):
        out[f"{name} (s)"] = statistics.median(wall for wall, _ in samples)
        out[f"{name}, CPU (s)"] = statistics.median(cpu for _, cpu in samples)
    return out


def ignore_tree(root: Path) -> None:
    rng = random.Random(1000)
    lines = []
    for i in range(1000):
        kind = rng.randrange(6)
        lines.append([f"*.ext{i}", f"dir{i}/", f"/top{i}", f"**/deep{i}/*.py", f"name{i}*", f"!keep{i}"][kind])
    (root / ".gitignore").write_text("\n".join(lines) + "\n")
    for j in range(5000):
        directory = root / f"d{j % 50}" / f"s{j % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{j}.{rng.choice(['py', 'txt', 'ext5', 'ext12'])}").write_text("x")


def listings(root: Path, rounds: int) -> dict[str, float]:
    import ktrain.inputs.code_bundle as code_bundle

    def best(fn: object) -> float:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    out = {
        "list 5,000 files x 1,000 patterns, git outside a work tree (s)": best(
            lambda: code_bundle.tree_files(str(root))
        )
    }
    real_git = code_bundle._git
    code_bundle._git = lambda args, cwd: None  # type: ignore[assignment]
    try:
        out["list 5,000 files x 1,000 patterns, pathspec (no git) (s)"] = best(
            lambda: code_bundle.tree_files(str(root))
        )
    finally:
        code_bundle._git = real_git  # type: ignore[assignment]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    out["list 5,000 files x 1,000 patterns, in a work tree (s)"] = best(lambda: code_bundle.tree_files(str(root)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ktrain-bench-") as work:
        tree = Path(work) / "tree"
        tree.mkdir()
        size = make_tree(tree)
        figures = {"tree bytes": float(size), **renders(tree, args.rounds)}
        ignored = Path(work) / "ignored"
        ignored.mkdir()
        ignore_tree(ignored)
        figures.update(listings(ignored, args.rounds))
    for name, value in figures.items():
        mark = ""
        if name.startswith("render --code") and "CPU" not in name:
            mark = "  ok" if value <= TARGET_SECONDS else f"  over the {TARGET_SECONDS} s target"
        print((f"{name:66} {value:12.3f}" if value < 1000 else f"{name:66} {value:12,.0f}") + mark)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{'load average (1 min) at the end':66} {load:12.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
