"""The options that describe a job, shared by every command that builds one.

`job render`, `job create` (and later `job validate`) take the same inputs: a job file and/or
flags. Rather than repeat thirty typer parameters per command, `job_input_options` appends
them to a command's signature and hands the command one `JobInput` value.

`JobInput` itself is a plain `@struct` in `ktrain.cli.jobinput` (no typer: the fast path
builds it too); here is only its typer declaration, field by field.
"""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, Any, Callable, Optional

import typer

from ktrain.cli.jobinput import JobInput, connection
from ktrain.util.structs import fields

__all__ = ["JOB_INPUT_OPTIONS", "JobInput", "connection", "job_input_options"]

# The typer declaration of every JobInput field, keyed by field name (the dataclass itself is
# typer-free: ktrain.cli.jobinput). tests/cli/test_fastpath.py checks the two list the same fields.
JOB_INPUT_OPTIONS: dict[str, Any] = {
    "command": Annotated[Optional[list[str]], typer.Argument(help="Trainer command, after --.", show_default=False)],
    "filename": Annotated[Optional[str], typer.Option("-f", "--filename", help="TrainJob file, or a Training Operator v1 job (YAML; - for stdin).")],
    "values": Annotated[
        Optional[list[str]], typer.Option("--values", help="Values file for a job template (YAML; repeatable).")
    ],
    "sets": Annotated[
        Optional[list[str]],
        typer.Option(
            "--set",
            help="PATH=VALUE: set a job field (trainer.numNodes=4, trainer.env[name=LR].value=1e-4) "
            "or a template value (lr=3e-4). Repeatable.",
        ),
    ],
    "runtime": Annotated[Optional[str], typer.Option("--runtime", "-r", help="Runtime blueprint name.")],
    "runtime_kind": Annotated[
        Optional[str],
        typer.Option(
            "--runtime-kind",
            help="ClusterTrainingRuntime | TrainingRuntime: the kind of --runtime "
            "(default: whichever holds the name; a job file's runtimeRef.kind without --runtime).",
        ),
    ],
    "runtime_file": Annotated[
        Optional[list[str]],
        typer.Option("--runtime-file", help="A runtime YAML file (highest precedence; repeatable)."),
    ],
    "runtimes_dir": Annotated[
        Optional[list[str]], typer.Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
    ],
    "name": Annotated[Optional[str], typer.Option("--name", help="TrainJob name (default: derived from content).")],
    "namespace": Annotated[Optional[str], typer.Option("-n", "--namespace", help="Namespace.")],
    "nodes": Annotated[Optional[int], typer.Option("--nodes", help="Number of training nodes.")],
    "nproc_per_node": Annotated[Optional[int], typer.Option("--nproc-per-node", help="Processes per node.")],
    "image": Annotated[Optional[str], typer.Option("--image", help="Trainer image.")],
    "env": Annotated[Optional[list[str]], typer.Option("--env", "-e", help="Trainer env KEY=VALUE (repeatable).")],
    "resource": Annotated[
        Optional[list[str]], typer.Option("--resource", help="Per-node resource limit NAME=QTY (repeatable).")
    ],
    "cpu": Annotated[Optional[str], typer.Option("--cpu", help="Per-node CPU request.")],
    "memory": Annotated[Optional[str], typer.Option("--memory", help="Per-node memory request.")],
    "label": Annotated[Optional[list[str]], typer.Option("--label", "-l", help="JobSet label KEY=VALUE.")],
    "annotation": Annotated[Optional[list[str]], typer.Option("--annotation", help="JobSet annotation KEY=VALUE.")],
    "dataset": Annotated[Optional[str], typer.Option("--dataset", help="Dataset storage URI (hf://, s3://, ...).")],
    "model": Annotated[Optional[str], typer.Option("--model", help="Model storage URI.")],
    "dataset_secret": Annotated[
        Optional[str], typer.Option("--dataset-secret", help="Secret with dataset credentials.")
    ],
    "model_secret": Annotated[Optional[str], typer.Option("--model-secret", help="Secret with model credentials.")],
    "queue": Annotated[Optional[str], typer.Option("--queue", help="Volcano queue (through a runtime patch).")],
    "patch": Annotated[Optional[list[str]], typer.Option("--patch", help="A runtimePatch YAML file (repeatable).")],
    "suspend": Annotated[Optional[bool], typer.Option("--suspend/--no-suspend", help="Create suspended.")],
    "ssh_secret": Annotated[
        Optional[str], typer.Option("--ssh-secret", help="MPI: mount this existing Secret instead of new keys.")
    ],
    "allow_extensions": Annotated[
        bool, typer.Option("--allow-extensions", help="Allow ktrain extensions (Intel MPI / MPICH hostfiles).")
    ],
    "kubeconfig": Annotated[
        Optional[str],
        typer.Option(
            "--kubeconfig",
            help="Kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config); "
            "render: also take --runtime from this cluster.",
        ),
    ],
    "context": Annotated[Optional[str], typer.Option("--context", help="The kubeconfig context to use.")],
}


_INPUT_FIELDS = [f.name for f in fields(JobInput)]


def job_input_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command every JobInput option; it receives them as `job_input: JobInput`.

    The command's own parameters come first in `--help`, then the job options. Typer reads
    the parameters from `__signature__`, so the decorated function is an ordinary command.
    """
    own = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.name != "job_input"]
    shared = [
        inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=JOB_INPUT_OPTIONS[f.name]
        )
        for f in fields(JobInput)
    ]
    # The trainer command is a positional argument; keep it first so `-- torchrun ...` works.
    params = [shared[0], *[p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own], *shared[1:]]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        job_input = JobInput(**{name: kwargs.pop(name) for name in _INPUT_FIELDS})
        return func(job_input=job_input, **kwargs)

    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    # typer must see the new signature, with annotations already resolved, not the original one.
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__
    return wrapper


# --- connecting to a cluster (kubectl's flags) -------------------------------------------------
KubeconfigOpt = Annotated[
    Optional[str],
    typer.Option("--kubeconfig", help="Path to the kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config)."),
]
ContextOpt = Annotated[Optional[str], typer.Option("--context", help="The kubeconfig context to use.")]
NamespaceOpt = Annotated[
    Optional[str], typer.Option("-n", "--namespace", help="Namespace (default: the context's, else default).")
]
RequestTimeoutOpt = Annotated[float, typer.Option("--request-timeout", help="Seconds to wait for each API request.")]
