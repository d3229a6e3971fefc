"""What a local run's plan is made of (`ktrain.local.plan.plan_run` builds it; the runner runs it):
the pods of a JobSet as local containers, its steps in JobSet's order, the files and directories
the run's volumes become, and the options of the planner. Plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ktrain.local.netmap import NetMap


@dataclass
class Mount:
    """A volume of the pod, bind-mounted into a container (container mode)."""

    source: str  # the directory or file on this machine
    target: str  # the container's mountPath
    read_only: bool = False


@dataclass
class LocalContainer:
    name: str
    argv: list[str]
    env: dict[str, str]  # what the pod sets, over this machine's environment (processes) or the image's
    cwd: str | None  # None: the directory ktrain was started in (processes), the image's (containers)
    image: str = ""
    sidecar: bool = False  # an init container with restartPolicy Always: runs beside the others
    cwd_mapped: bool = False  # the working directory is a mount, mapped here
    # Container mode: the pod's command (the image's ENTRYPOINT when empty) and args, apart.
    command: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)
    pull_policy: str = ""  # imagePullPolicy as written (empty: not given)


@dataclass
class LocalPod:
    name: str  # `node-0-1`: rjob, job index, completion index (what output lines are prefixed with)
    hostname: str  # `<jobset>-node-0-1`
    rjob: str
    job_index: int
    index: int
    init: list[LocalContainer]
    containers: list[LocalContainer]
    processes: int
    aliases: list[str] = field(default_factory=list)  # container mode: the names other pods reach it by


@dataclass
class Step:
    """One replicated job."""

    name: str
    replicas: int
    completions: int
    parallelism: int
    depends_on: list[tuple[str, str]]  # (rjob, Ready | Complete)
    pods: list[LocalPod]
    skipped: str | None = None  # why its pods do not run here


@dataclass
class PlannedFile:
    path: str
    data: bytes
    mode: int


@dataclass
class RunPlan:
    jobset: str
    namespace: str
    steps: list[Step]
    in_order: bool  # startupPolicyOrder InOrder
    success_operator: str  # All | Any
    success_targets: list[str]
    dirs: list[str]
    files: list[PlannedFile]
    notes: list[str]
    processes: int
    netmap: NetMap
    images: list[str] = field(default_factory=list)
    container: bool = False  # pods are containers of their images (no rewriting)
    # The run's name (its directory's): the engine's network, and the prefix of its container names.
    run_name: str = ""

    def pods(self) -> list[LocalPod]:
        return [p for s in self.steps if s.skipped is None for p in s.pods]


@dataclass
class PlanOptions:
    run_dir: str
    alloc_port: Callable[[], int]
    python: str  # the interpreter that runs ktrain.local.shim
    ml_policy: str | None = None  # a key of ktrain.api.policies.ML_POLICIES, None for PlainML
    cpu_count: int = 1
    memory_bytes: int = 0
    as_root: bool = False
    max_processes: int = 64
    node_name: str = "localhost"
    container: bool = False  # container mode: names, ports and paths stay as on the cluster
    restart_attempt: int = 0  # the pods' jobset.sigs.k8s.io/restart-attempt (local/restarts.py)
