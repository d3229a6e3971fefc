"""Which file of the code directory a trainer command runs, so that `--code` can say at render
time that a script the command names was not sent (instead of the pod failing with "can't open
file" once the cluster has scheduled it), and what was meant.

Read conservatively: the launchers ktrain knows (python, torchrun and `python -m
torch.distributed.run`, deepspeed, `accelerate launch`, mpirun/mpiexec, bash/sh, `env`), the
options each takes and which of them take a value; any option not known, `-c`, stdin, an
absolute path, a path out of the directory or an executable looked up on PATH gives no
answer, and no error follows.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable

from ktrain.errors import UsageError

# python's options: those taking a value (also written attached, -Wignore), and flags.
_PY_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_PY_FLAGS = frozenset("bBdEhiIOPqsSuvVx") | {"-bb", "-OO", "-vv", "--help", "--version"}
_TORCHRUN_FLAGS = frozenset(
    {"--standalone", "--run-path", "--run_path", "--no-python", "--no_python", "--module", "-m", "--use-env"}
)
_TORCHRUN_VALUE = frozenset(
    {
        "--nnodes",
        "--nproc-per-node",
        "--nproc_per_node",
        "--rdzv-backend",
        "--rdzv_backend",
        "--rdzv-endpoint",
        "--rdzv_endpoint",
        "--rdzv-id",
        "--rdzv_id",
        "--rdzv-conf",
        "--rdzv_conf",
        "--max-restarts",
        "--max_restarts",
        "--monitor-interval",
        "--monitor_interval",
        "--start-method",
        "--start_method",
        "--role",
        "--node-rank",
        "--node_rank",
        "--master-addr",
        "--master_addr",
        "--master-port",
        "--master_port",
        "--local-addr",
        "--local_addr",
        "--log-dir",
        "--log_dir",
        "--redirects",
        "-r",
        "--tee",
        "-t",
        "--local-ranks-filter",
        "--local_ranks_filter",
    }
)
_DEEPSPEED_FLAGS = frozenset({"--module", "--no_python", "--no_local_rank", "--force_multi", "--autotuning"})
_DEEPSPEED_VALUE = frozenset(
    {
        "--num_gpus",
        "--num_nodes",
        "--hostfile",
        "-H",
        "--include",
        "-i",
        "--exclude",
        "-e",
        "--master_port",
        "--master_addr",
        "--node_rank",
        "--launcher",
        "--launcher_args",
        "--min_elastic_nodes",
        "--max_elastic_nodes",
    }
)
_ACCELERATE_FLAGS = frozenset(
    {"--multi_gpu", "--cpu", "--use_deepspeed", "--use_fsdp", "-m", "--module", "--no_python"}
)
_ACCELERATE_VALUE = frozenset(
    {
        "--config_file",
        "--num_processes",
        "--num_machines",
        "--machine_rank",
        "--main_process_ip",
        "--main_process_port",
        "--mixed_precision",
        "--gpu_ids",
        "--dynamo_backend",
    }
)
_MPI_FLAGS = frozenset(
    {"--allow-run-as-root", "--oversubscribe", "--tag-output", "--timestamp-output", "--report-bindings", "-v"}
)
_MPI_VALUE = frozenset(
    {"-np", "-n", "-c", "--np", "-N", "--npernode", "--hostfile", "-hostfile", "--machinefile", "-machinefile"}
    | {"-H", "--host", "-host", "-x", "--bind-to", "--map-by", "--rank-by", "-wdir", "--wdir", "-ppn", "-f"}
)
_SHELL_FLAGS = frozenset({"-e", "-x", "-u", "-v", "-eu", "-ex", "-eux", "-xe", "-euo", "--login", "-l"})


def _options(words: list[str], flags: frozenset[str], valued: frozenset[str]) -> int | None:
    """The index of the first word after the options, or None at an option not known."""
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word == "-":
            return i
        if word == "--":
            return i + 1
        name = word.split("=", 1)[0]
        if word in flags:
            i += 1
        elif name in valued:
            i += 1 if "=" in word else 2
        else:
            return None
    return None


def _python(words: list[str]) -> tuple[str, str] | None:
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-m":
            return ("module", words[i + 1]) if i + 1 < len(words) else None
        if word.startswith("-m") and len(word) > 2:
            return "module", word[2:]
        if word in ("-c", "-") or word.startswith("-c"):
            return None
        if not word.startswith("-"):
            return "file", word
        if word in _PY_VALUE:
            i += 2
        elif word[:2] in ("-W", "-X") or word in _PY_FLAGS or all(ch in _PY_FLAGS for ch in word[1:]):
            i += 1  # -Wignore, or flags (-u, -uB)
        else:
            return None
    return None


def _is_python(word: str) -> bool:
    name = posixpath.basename(word)
    return name == "python" or (name.startswith("python3") and name[7:].replace(".", "").isdigit()) or name == "python3"


def script_of(command: list[str]) -> tuple[str, str] | None:
    """("file", path) or ("module", dotted name) that `command` runs, or None when not sure."""
    words = list(command)
    while words and posixpath.basename(words[0]) == "env":
        words = words[1:]
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]
    if not words:
        return None
    head, rest = posixpath.basename(words[0]), words[1:]
    if _is_python(words[0]):
        if rest[:2] in (["-m", "torch.distributed.run"], ["-m", "torch.distributed.launch"]):
            return _torchrun(rest[2:])
        return _python(rest)
    if head == "torchrun":
        return _torchrun(rest)
    if head == "deepspeed":
        return _launched(rest, _DEEPSPEED_FLAGS, _DEEPSPEED_VALUE)
    if head == "accelerate" and rest[:1] == ["launch"]:
        return _launched(rest[1:], _ACCELERATE_FLAGS, _ACCELERATE_VALUE)
    if head in ("mpirun", "mpiexec", "orterun"):
        start = _mpi_options(rest)
        return script_of(rest[start:]) if start is not None else None
    if head in ("bash", "sh", "dash", "zsh"):
        start = _options(rest, _SHELL_FLAGS, frozenset({"-o"}))
        return ("file", rest[start]) if start is not None and start < len(rest) else None
    if "/" in words[0] and not words[0].startswith("/"):
        return "file", words[0]  # ./run.sh: a path, not a name looked up on PATH
    return None


def _mpi_options(words: list[str]) -> int | None:
    """The index of the program mpirun starts, or None at an option not known."""
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            return i
        if word in ("--mca", "-mca"):
            i += 3  # --mca KEY VALUE
        elif word in _MPI_FLAGS:
            i += 1
        elif word.split("=", 1)[0] in _MPI_VALUE:
            i += 1 if "=" in word else 2
        else:
            return None
    return None


def _torchrun(words: list[str]) -> tuple[str, str] | None:
    start = _options(words, _TORCHRUN_FLAGS, _TORCHRUN_VALUE)
    if start is None or start >= len(words):
        return None
    given = set(words[:start])
    if given & {"--no-python", "--no_python"}:
        return None
    return ("module" if given & {"-m", "--module"} else "file"), words[start]


def _launched(words: list[str], flags: frozenset[str], valued: frozenset[str]) -> tuple[str, str] | None:
    start = _options(words, flags, valued)
    if start is None or start >= len(words):
        return None
    given = set(words[:start])
    if given & {"--no_python", "--no-python"}:
        return None
    return ("module" if given & {"-m", "--module"} else "file"), words[start]


def check_script(command: list[str], sent: Iterable[str], code_dir: str) -> None:
    """A UsageError when `command` runs a script of the code directory that is not among the
    files `sent` (paths in the code directory, which is `code_dir` in the pod)."""
    found = script_of(command)
    if found is None:
        return
    kind, name = found
    paths = set(sent)
    if kind == "module":
        parts = name.split(".")
        if not all(p.isidentifier() for p in parts):
            return
        top = parts[0]
        if f"{top}.py" not in paths and not any(p.startswith(f"{top}/") for p in paths):
            return  # not a module of the code directory: the image may have it
        base = "/".join(parts)
        if {f"{base}.py", f"{base}/__main__.py", f"{base}/__init__.py"} & paths:
            return
        missing, wanted = f"module {name}", f"{base}.py"
    else:
        if name.startswith(code_dir.rstrip("/") + "/"):
            name = name[len(code_dir.rstrip("/")) + 1 :]
        if posixpath.isabs(name) or "$" in name:
            return
        path = posixpath.normpath(name)
        if path.startswith("../") or path == ".." or path in paths:
            return
        if any(p.startswith(path.rstrip("/") + "/") for p in paths):
            return  # a directory (python runs its __main__.py)
        missing, wanted = name, path
    raise UsageError(
        f"--code: the command runs {missing}, which is not among the {len(paths)} file"
        f"{'s' if len(paths) != 1 else ''} sent",
        hint=_did_you_mean(wanted, paths),
    )


def _did_you_mean(wanted: str, paths: set[str]) -> str:
    name = posixpath.basename(wanted)
    same_name = sorted(p for p in paths if posixpath.basename(p) == name)
    close = same_name[:3] or difflib.get_close_matches(wanted, sorted(paths), n=3, cutoff=0.6)
    advice = (
        "a directory given to --code is the code directory itself (its files at the top), "
        "and the command runs from there"
    )
    if close:
        return "did you mean " + " or ".join(close) + f"? ({advice})"
    return advice
