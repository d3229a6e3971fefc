"""A job's name derived from its content: same input, same name (GitOps relies on it)."""

from __future__ import annotations

from ktrain.util.jsondata import dumps

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # the same interface; typeshed knows _sha2 and _sha256 for some Pythons only
    from hashlib import sha256
else:
    try:  # CPython's own SHA-256: hashlib would first load OpenSSL (4 ms of a cold render)
        from _sha2 import sha256  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256

if TYPE_CHECKING:
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.util.jsondata import Obj


def _max_name_length(runtime: TrainingRuntime, data: Obj) -> int:
    """Longest TrainJob name for which JobSet's job and pod names stay <= 63 chars (§11.4)."""
    trainer = (data.get("spec") or {}).get("trainer") or {}
    nodes = trainer.get("numNodes") if isinstance(trainer.get("numNodes"), int) else None
    worst = 0
    for rjob in runtime.spec.template.spec.get("replicatedJobs") or []:
        par = ((rjob.get("template") or {}).get("spec") or {}).get("parallelism") or 1
        count = max(nodes or 1, runtime.spec.ml_policy.num_nodes or 1 if runtime.spec.ml_policy else 1, par)
        replicas = rjob.get("replicas") or 1
        worst = max(worst, len(str(rjob.get("name"))) + len(str(replicas - 1)) + len(str(max(count - 1, 0))) + 9)
    return min(63, 63 - worst)


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def name_prefix(runtime_name: str) -> str:
    """The start of a derived job name: the runtime's name in lower case, each run of other
    characters than [a-z0-9-] made one `-`, trimmed of `-`, without a `-distributed` ending
    (`re.sub` spelled out: the render path does not compile regular expressions)."""
    out: list[str] = []
    in_run = False
    for ch in runtime_name.lower():
        if ch in _NAME_CHARS:
            out.append(ch)
            in_run = False
        elif not in_run:
            out.append("-")
            in_run = True
    prefix = "".join(out).strip("-")
    if prefix.endswith("-distributed"):
        prefix = prefix[: -len("-distributed")]
    return prefix or "job"


def derive_name(runtime: TrainingRuntime, data: Obj) -> str:
    """A stable name from the job's content: same input, same name (GitOps-friendly)."""
    digest = sha256(dumps(data.get("spec"), sort_keys=True).encode()).hexdigest()[:8]
    prefix = name_prefix(runtime.name)
    if not prefix[0].isalpha():
        prefix = "job-" + prefix
    limit = max(_max_name_length(runtime, data), 10)
    room = limit - len(digest) - 1
    prefix = prefix[:room].rstrip("-") if room > 0 else ""
    return f"{prefix}-{digest}" if prefix else f"j{digest}"
