"""Mutation fuzzer: hostile variants of the golden and conformance inputs through the real CLI.

Each run takes a seed case (a `trainjob.yaml` and its `runtime.yaml` from tests/golden/cases or
../shared/conformance/cases), mutates the job file or the runtime file (type swaps, huge and
negative integers, deep nesting, long strings, unicode, deleted/duplicated keys, raw YAML text
edits), adds random flags, and runs `python -m ktrain job render|validate` in a subprocess. A run
passes when:

- the exit code is 0, 2, 3 or 4, and stderr holds no "internal error" and no traceback;
- stderr is under 8 KiB;
- it ends within the wall-time budget (5 s) and its peak RSS stays under 300 MiB.

    python tests/fuzz/run_fuzzer.py --seconds 600 [--seed N] [--exclude CLASS] [--save DIR]

prints a summary (runs, crashes, hangs, over-budget, by class) and exits 1 when anything failed.
`--exclude CLASS` leaves out a mutation class (`--list-classes` names them). tests/fuzz/test_fuzz.py
runs it for about a minute in CI.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
SHARED_CASES = REPO.parent / "shared" / "conformance" / "cases"
GOLDEN_CASES = REPO / "tests" / "golden" / "cases"

OK_CODES = (0, 2, 3, 4)
STDERR_LIMIT = 8 * 1024
WALL_LIMIT = 5.0
RSS_LIMIT = 300 * 1024 * 1024
HARD_KILL = 15.0  # a run still going after this is killed (and counted as a hang)
ADDRESS_SPACE = 2 * 1024 * 1024 * 1024  # RLIMIT_AS: a runaway run fails instead of swamping the host

# Mutation classes. The input-reading half of issue #12 (non-UTF-8 bytes, nesting while reading,
# YAML aliases, templates, long echoed lines) is covered by its own tests; "deep" here stays
# within 200 levels. "huge_string" (3 KB - 1 MB scalars) reaches the echo of the source line
# under an error (once per problem on that line), which that half bounds.
CLASSES = (
    "type_swap",
    "huge_int",
    "negative_int",
    "deep_nesting",
    "long_string",
    "huge_string",
    "unicode",
    "delete_key",
    "duplicate_key",
    "rename_key",
    "list_edit",
    "text_edit",
    "flags_only",
)


@dataclass(frozen=True)
class Case:
    name: str
    trainjob: Path
    runtime: Path | None


@dataclass
class Outcome:
    case: str
    classes: list[str]
    argv: list[str]
    code: int
    wall: float
    cpu: float
    rss: int
    stderr: str
    problems: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    slow_host: bool = False

    @property
    def signature(self) -> str:
        """What kind of failure this is (for grouping)."""
        for line in self.stderr.splitlines():
            if line.startswith("internal error:"):
                return line.split(":", 2)[1].strip() + ": " + line.split(":", 2)[2].strip()[:60]
        lines = [x for x in self.stderr.splitlines() if x.strip()]
        if "Traceback" in self.stderr and lines:
            return "traceback: " + lines[-1][:80]
        return ", ".join(p.split(" ")[0] for p in self.problems)


def seed_cases(include_shared: bool = True) -> list[Case]:
    cases = []
    roots = [GOLDEN_CASES] + ([SHARED_CASES] if include_shared and SHARED_CASES.is_dir() else [])
    for root in roots:
        for job in sorted(root.rglob("trainjob.yaml")):
            runtime = job.with_name("runtime.yaml")
            cases.append(Case(str(job.parent.relative_to(root.parent)), job, runtime if runtime.is_file() else None))
    return cases


# --- structural mutations --------------------------------------------------------------------


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*path, i))
    return out


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


HUGE = [2**31, 2**31 - 1, 2**32, 2**53 + 1, 2**63, 2**64, 10**30, 10**100, 10**400, 18446744073709551616]
NEGATIVE = [-1, -(2**31), -(2**31) - 1, -(2**63) - 1, -(10**30), 0]
UNICODE = [
    "ümlaut",
    "名前",
    "\u202eevil",
    "a\u200bb",
    "😀",
    "Ω" * 50,
    "\t",
    "x\\y",
    "'\"",
    "$(rm -rf /)",
    "${HOME}",
    "-",
    "..",
    ".",
    "a" * 64,
    "UPPER",
    "-lead",
    "trail-",
    "a.b",
    "a/b",
    "%",
    "\u00a0",
]


def _random_scalar(rng: random.Random) -> Any:
    return rng.choice(
        [
            "abc",
            "",
            0,
            1,
            -1,
            1.5,
            True,
            False,
            None,
            "1Gi",
            "nvidia.com/gpu",
            rng.choice(HUGE),
            rng.choice(UNICODE),
            "null",
            "~",
            "yes",
            "0x1F",
            "1e400",
        ]
    )


def _random_value(rng: random.Random) -> Any:
    kind = rng.randrange(4)
    if kind == 0:
        return _random_scalar(rng)
    if kind == 1:
        return {rng.choice(["a", "name", "spec", "template", "env", "value", "$patch"]): _random_scalar(rng)}
    if kind == 2:
        return [_random_scalar(rng) for _ in range(rng.randrange(3))]
    return rng.choice(
        [{}, [], {"name": "node"}, [{"name": "node"}], {"$patch": rng.choice(["delete", "replace", "x"])}]
    )


def _nest(value: Any, depth: int, rng: random.Random) -> Any:
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def mutate_data(data: Any, cls: str, rng: random.Random) -> Any:
    paths = _paths(data)
    path = rng.choice(paths)
    target = _get(data, path)
    if cls == "type_swap":
        return _set(data, path, _random_value(rng))
    if cls == "huge_int":
        ints = [p for p in paths if isinstance(_get(data, p), int) and not isinstance(_get(data, p), bool)]
        return _set(data, rng.choice(ints) if ints and rng.random() < 0.7 else path, rng.choice(HUGE))
    if cls == "negative_int":
        ints = [p for p in paths if isinstance(_get(data, p), int) and not isinstance(_get(data, p), bool)]
        return _set(data, rng.choice(ints) if ints and rng.random() < 0.7 else path, rng.choice(NEGATIVE))
    if cls == "deep_nesting":
        return _set(data, path, _nest(target, rng.choice([5, 20, 60, 120, 200]), rng))
    if cls in ("long_string", "huge_string"):
        strings = [p for p in paths if isinstance(_get(data, p), str)]
        size = rng.choice([300, 1000] if cls == "long_string" else [3000, 100_000, 1_000_000])
        return _set(data, rng.choice(strings) if strings else path, rng.choice("ab-.z9") * size)
    if cls == "unicode":
        strings = [p for p in paths if isinstance(_get(data, p), str)]
        if not strings:
            return data
        where = rng.choice(strings)
        value = _get(data, where)
        new = rng.choice([rng.choice(UNICODE), value + rng.choice(UNICODE), rng.choice(UNICODE) + value])
        return _set(data, where, new)
    if cls in ("delete_key", "rename_key", "duplicate_key"):
        maps = [p for p in paths if isinstance(_get(data, p), dict) and _get(data, p)]
        if not maps:
            return data
        holder = _get(data, rng.choice(maps))
        key = rng.choice(list(holder))
        if cls == "delete_key":
            del holder[key]
        elif cls == "rename_key":
            holder[rng.choice([key.upper(), key + "s", key[:-1] or "x", "$patch", "$retainKeys", "x"])] = holder.pop(
                key
            )
        else:  # duplicate_key is done on the text; here: copy a sibling's value over
            other = rng.choice(list(holder))
            holder[key] = copy.deepcopy(holder[other])
        return data
    if cls == "list_edit":
        lists = [p for p in paths if isinstance(_get(data, p), list)]
        if not lists:
            return data
        items = _get(data, rng.choice(lists))
        action = rng.randrange(4)
        if action == 0 and items:
            items.append(copy.deepcopy(rng.choice(items)))  # a duplicate (same merge key)
        elif action == 1 and items:
            items.pop(rng.randrange(len(items)))
        elif action == 2:
            items.append(_random_value(rng))
        else:
            items.extend(copy.deepcopy(items) * rng.choice([1, 10, 100]))
        return data
    return data


# --- text mutations --------------------------------------------------------------------------


# Scalars written as YAML text (some cannot be built as the type YAML resolves them to).
RAW_SCALARS = [
    "9" * 5000,
    "-" + "9" * 4400,
    "2020-02-30",
    "2020-13-01 25:61:00",
    "0x" + "f" * 60,
    "1e999",
    ".nan",
    "0o8",
]


def mutate_text(text: str, cls: str, rng: random.Random) -> str:
    lines = text.splitlines()
    if not lines:
        return text
    if cls == "duplicate_key":
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines) + "\n"
    action = rng.randrange(7)
    if action == 0:  # delete a character
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1 :]
    if action == 1:  # insert a YAML-significant character
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(list(":-[]{},#'\"|>?% \t\n")) + text[i:]
    if action == 2:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif action == 3:  # drop a line
        lines.pop(rng.randrange(len(lines)))
    elif action == 4:  # re-indent a line
        i = rng.randrange(len(lines))
        lines[i] = rng.choice(["", " ", "  ", "    "]) + lines[i].lstrip()
    elif action == 5:  # truncate
        return text[: rng.randrange(len(text))]
    else:  # replace a scalar after a colon
        i = rng.randrange(len(lines))
        head, sep, _ = lines[i].partition(": ")
        if sep:
            raw = rng.choice(RAW_SCALARS) if rng.random() < 0.3 else None
            lines[i] = head + sep + (raw or json.dumps(_random_scalar(rng), ensure_ascii=False))
    return "\n".join(lines) + "\n"


# --- flags -----------------------------------------------------------------------------------


def random_flags(rng: random.Random) -> tuple[list[str], list[str]]:
    """(options, the training command after --)."""
    pool: list[list[str]] = [
        ["--nodes", str(rng.choice([1, 2, 3, 100, 0, -1, 2**31 - 1, 2**31, 2**64]))],
        ["--nproc-per-node", str(rng.choice([1, 8, 0, -3, 2**31, 2**64]))],
        ["-n", rng.choice(["default", "team-a", "ümlaut", "../../etc", "A", "x" * 64, "-a", ""])],
        ["--name", rng.choice(["job", "j1", "Job", "x" * 70, "1abc", "a_b", "ümlaut", "-x"])],
        ["--image", rng.choice(["img", "", "x" * 600, "ümlaut:1"])],
        ["-e", rng.choice(["A=1", "B=", "=x", "noequals", "PET_NNODES=2", "OMPI_MCA_x=1", "ü=1"])],
        ["--resource", rng.choice(["nvidia.com/gpu=2", "cpu=abc", "memory=1e400", "x=-1", "nvidia.com/gpu=1.5"])],
        ["--cpu", rng.choice(["2", "500m", "abc", "-1", "1e18", "0.0000001"])],
        ["--memory", rng.choice(["1Gi", "1Zi", "", "1e400", "9" * 40])],
        ["-l", rng.choice(["a=b", "a=", "bad key=v", "x/y/z=1", "k=" + "v" * 70])],
        ["--annotation", rng.choice(["a=b", "x=" + "y" * 5000])],
        ["--dataset", rng.choice(["hf://x", "not-a-uri", "s3://b/k", ""])],
        ["--dataset-secret", rng.choice(["sec", "bad-", "..", "UPPER", "a" * 300])],
        ["--model", rng.choice(["hf://m", "x"])],
        ["--model-secret", rng.choice(["ms", "-bad"])],
        ["--ssh-secret", rng.choice(["ssh", "..", "", "Bad"])],
        ["--queue", rng.choice(["q", "", "ü"])],
        ["-o", rng.choice(["yaml", "json", "name", "bogus"])],
        ["--suspend"],
        ["--allow-extensions"],
        ["--explain"],
        ["--set", rng.choice(["trainer.numNodes=4", "trainer.numNodes=99999999999999999999", "trainer=abc", "spec=1"])],
        ["--debug"],
    ]
    options = [arg for group in rng.sample(pool, rng.randrange(0, 5)) for arg in group]
    command = rng.choice([[], ["python", "train.py"], ["python", "train.py", "--debug"], ["torchrun", "-x"]])
    return options, command


# --- running ---------------------------------------------------------------------------------


def _limits() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_cli(argv: list[str], workdir: Path, env: dict[str, str]) -> tuple[int, float, float, int, str]:
    """(exit code, wall s, cpu s, peak RSS bytes, stderr) of `python -m ktrain ARGV`."""
    import subprocess

    err_path = workdir / "stderr"
    with open(os.devnull, "wb") as out, open(err_path, "wb") as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ktrain", *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=workdir,
            env=env,
            preexec_fn=_limits,
        )
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > HARD_KILL:
                os.kill(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
    stderr = err_path.read_bytes().decode("utf-8", "replace")
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, stderr


def check(outcome: Outcome) -> None:
    if outcome.code not in OK_CODES:
        outcome.problems.append(f"exit-{outcome.code}")
    if "internal error" in outcome.stderr:
        outcome.problems.append("internal-error")
    if "Traceback (most recent call last)" in outcome.stderr:
        outcome.problems.append("traceback")
    if len(outcome.stderr.encode()) > STDERR_LIMIT:
        outcome.problems.append(f"stderr-{len(outcome.stderr.encode())}B")
    if outcome.wall > WALL_LIMIT:
        outcome.problems.append(f"hang-{outcome.wall:.1f}s")
    if outcome.rss > RSS_LIMIT:
        outcome.problems.append(f"rss-{outcome.rss // 2**20}MiB")


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=4096)


def one_run(case: Case, rng: random.Random, workdir: Path, env: dict[str, str], excluded: set[str]) -> Outcome:
    classes = [c for c in CLASSES if c not in excluded]
    chosen = rng.sample(classes, min(len(classes), rng.choice([1, 1, 2, 3])))
    files = {
        "trainjob.yaml": case.trainjob.read_text(),
        "runtime.yaml": case.runtime.read_text() if case.runtime else "",
    }
    target = "runtime.yaml" if case.runtime is not None and rng.random() < 0.35 else "trainjob.yaml"
    for cls in chosen:
        if cls == "flags_only":
            continue
        text = files[target]
        if cls in ("text_edit", "duplicate_key") and (cls == "text_edit" or rng.random() < 0.5):
            files[target] = mutate_text(text, cls, rng)
            continue
        try:
            files[target] = _dump(mutate_data(yaml.safe_load(text), cls, rng))
        except (yaml.YAMLError, ValueError, RecursionError):  # an earlier mutation broke the YAML
            files[target] = mutate_text(text, "text_edit", rng)
    for name, text in files.items():
        (workdir / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    options, command = random_flags(rng) if ("flags_only" in chosen or rng.random() < 0.5) else ([], [])
    verb = rng.choice(["render", "render", "validate"])
    argv = ["job", verb, "-f", "trainjob.yaml"]
    if case.runtime is not None:
        argv += ["--runtime-file", "runtime.yaml"]
    argv += options
    if command:
        argv += ["--", *command]
    code, wall, cpu, rss, stderr = run_cli(argv, workdir, env)
    outcome = Outcome(case.name, chosen, argv, code, wall, cpu, rss, stderr, files=files)
    check(outcome)
    for _ in range(2):
        if not any(p.startswith("hang") for p in outcome.problems) or cpu > WALL_LIMIT:
            break
        # Maybe a busy host (CI, a shared VM) rather than a slow run: measure again before calling
        # it a hang. A run that used more CPU than the budget is a hang however busy the host is.
        _, wall, cpu, *_ = run_cli(argv, workdir, env)
        if wall <= WALL_LIMIT:
            outcome.problems = [p for p in outcome.problems if not p.startswith("hang")]
    if any(p.startswith("hang") for p in outcome.problems) and cpu < WALL_LIMIT / 4 and overloaded():
        # Still over the wall budget with little CPU used while the host runs more processes than
        # it has cores: the host is slow, not the run. Counted apart, not as a failure.
        outcome.problems = [p for p in outcome.problems if not p.startswith("hang")]
        outcome.slow_host = True
    return outcome


def overloaded() -> bool:
    return os.getloadavg()[0] > (os.cpu_count() or 1)


@dataclass
class Summary:
    runs: int = 0
    crashes: int = 0
    hangs: int = 0
    over_budget: int = 0
    failures: list[Outcome] = field(default_factory=list)
    codes: dict[int, int] = field(default_factory=dict)
    slow_host: int = 0

    def add(self, outcome: Outcome) -> None:
        self.runs += 1
        self.codes[outcome.code] = self.codes.get(outcome.code, 0) + 1
        self.slow_host += outcome.slow_host
        problems = outcome.problems
        if any(p.startswith(("exit-", "internal", "traceback")) for p in problems):
            self.crashes += 1
        if any(p.startswith("hang") for p in problems):
            self.hangs += 1
        if any(p.startswith(("rss", "stderr")) for p in problems):
            self.over_budget += 1
        if problems:
            self.failures.append(outcome)

    def classes(self) -> dict[str, list[Outcome]]:
        by: dict[str, list[Outcome]] = {}
        for failure in self.failures:
            by.setdefault(failure.signature, []).append(failure)
        return by

    def report(self) -> str:
        lines = [
            f"runs: {self.runs}  crashes: {self.crashes}  hangs: {self.hangs}  over-budget: {self.over_budget}",
            "exit codes: "
            + ", ".join(f"{code}: {n}" for code, n in sorted(self.codes.items()))
            + f"  (over the wall budget on an overloaded host, with little CPU used: {self.slow_host})",
        ]
        for signature, outcomes in sorted(self.classes().items(), key=lambda kv: -len(kv[1])):
            first = outcomes[0]
            mutation_classes = sorted({c for o in outcomes for c in o.classes})
            lines.append(f"  [{len(outcomes)}x] {signature}  (mutations: {', '.join(mutation_classes)})")
            lines.append(f"      e.g. {first.case}: ktrain {' '.join(first.argv)[:300]}")
            lines.append(f"      wall {first.wall:.1f} s, cpu {first.cpu:.1f} s, rss {first.rss // 2**20} MiB")
        return "\n".join(lines)


def fuzz(
    seconds: float,
    seed: int = 0,
    excluded: set[str] | None = None,
    include_shared: bool = True,
    save: Path | None = None,
    max_runs: int | None = None,
) -> Summary:
    rng = random.Random(seed)
    cases = seed_cases(include_shared)
    summary = Summary()
    base = Path(tempfile.mkdtemp(prefix="ktrain-fuzz-"))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["KTRAIN_CACHE_DIR"] = str(base / "cache")
    env.pop("KUBECONFIG", None)
    env["KUBECONFIG"] = str(base / "no-kubeconfig")  # never a real cluster
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and (max_runs is None or summary.runs < max_runs):
            case = rng.choice(cases)
            workdir = base / f"run{summary.runs}"
            workdir.mkdir()
            outcome = one_run(case, random.Random(rng.getrandbits(64)), workdir, env, excluded or set())
            summary.add(outcome)
            if outcome.problems and save is not None:
                keep = save / f"failure-{len(summary.failures):04d}"
                shutil.copytree(workdir, keep, dirs_exist_ok=True)
                (keep / "argv.json").write_text(json.dumps(outcome.argv))
                (keep / "problems.txt").write_text("\n".join(outcome.problems) + "\n\n" + outcome.stderr)
            shutil.rmtree(workdir, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exclude", action="append", default=[], choices=CLASSES, metavar="CLASS")
    parser.add_argument("--no-shared", action="store_true", help="golden cases only")
    parser.add_argument("--save", type=Path, help="copy each failing run's files here")
    parser.add_argument("--list-classes", action="store_true")
    args = parser.parse_args(argv)
    if args.list_classes:
        print("\n".join(CLASSES))  # noqa: T201 - a script's output
        return 0
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    summary = fuzz(args.seconds, args.seed, set(args.exclude), not args.no_shared, args.save)
    print(summary.report())  # noqa: T201 - a script's output
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
