"""`--elastic MIN:MAX` and `--max-restarts N`: elastic torchrun, a ktrain extension.

Upstream Trainer v2 has no elastic policy (v1's PyTorchJob `elasticPolicy` has no v2 field). ktrain
renders what torchrun's elastic agent needs, on the objects it renders itself:
- the job runs MAX nodes (`spec.trainer.numNodes`): JobSet cannot add or remove pods of a running
  job, so every node is created up front;
- each trainer container gets `PET_NNODES=MIN:MAX`, a c10d rendezvous at the master's address
  (`PET_RDZV_BACKEND`, `PET_RDZV_ENDPOINT`) and `PET_MAX_RESTARTS`: torchrun starts training once
  MIN nodes have joined, and when a node fails it restarts the workers (up to N times) with the
  nodes that remain, as long as MIN remain;
- the JobSet's `failurePolicy.maxRestarts` becomes N (unless the runtime sets it), so a failed Job
  makes JobSet recreate the whole set, up to N times.
What it cannot do: grow a running job beyond the pods it has, or shrink it to save resources.
"""

from __future__ import annotations

from typing import Any

from ktrain.errors import UsageError
from ktrain.util.jsondata import Obj


def parse_elastic(text: str) -> tuple[int, int]:
    low, sep, high = text.partition(":")
    if not sep or not low.isdigit() or not high.isdigit():
        raise UsageError(f"--elastic: {text!r} is not MIN:MAX", hint="e.g. --elastic 2:4")
    lo, hi = int(low), int(high)
    if not 1 <= lo <= hi <= 2**31 - 1:
        raise UsageError(f"--elastic: need 1 <= MIN <= MAX, not {text!r}")
    return lo, hi


def _env_value(env: list[Any], name: str) -> str | None:
    for var in env:
        if isinstance(var, dict) and var.get("name") == name and isinstance(var.get("value"), str):
            return str(var["value"])
    return None


def _upsert(env: list[Any], name: str, value: str) -> None:
    for var in env:
        if isinstance(var, dict) and var.get("name") == name:
            var.clear()
            var.update({"name": name, "value": value})
            return
    env.append({"name": name, "value": value})


def apply(objects: list[Obj], *, min_nodes: int, max_nodes: int, max_restarts: int | None) -> None:
    """Rewrite the rendered JobSet's torchrun environment for elastic training, in place."""
    touched = False
    for obj in objects:
        if obj.get("kind") != "JobSet":
            continue
        for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
            pod = ((((rjob or {}).get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            for container in pod.get("containers") or []:
                env = (container or {}).get("env")
                if not isinstance(env, list) or _env_value(env, "PET_NNODES") is None:
                    continue
                addr, port = _env_value(env, "PET_MASTER_ADDR"), _env_value(env, "PET_MASTER_PORT")
                if addr is None or port is None:
                    raise UsageError("--elastic: the trainer has no torchrun master address (a torchtune job?)")
                _upsert(env, "PET_NNODES", f"{min_nodes}:{max_nodes}")
                _upsert(env, "PET_RDZV_BACKEND", "c10d")
                _upsert(env, "PET_RDZV_ENDPOINT", f"{addr}:{port}")
                if max_restarts is not None:
                    _upsert(env, "PET_MAX_RESTARTS", str(max_restarts))
                touched = True
        if max_restarts is not None:
            policy = obj.setdefault("spec", {}).setdefault("failurePolicy", {})
            policy.setdefault("maxRestarts", max_restarts)
    if not touched:
        raise UsageError(
            "--elastic needs a torch runtime: no trainer container runs torchrun here",
            hint="e.g. --runtime torch-distributed",
        )
