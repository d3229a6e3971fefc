"""The options that describe a job, shared by every command that builds one.

`job render`, `job create` (and later `job validate`) take the same inputs: a job file and/or
flags. Rather than repeat thirty typer parameters per command, `job_input_options` appends
them to a command's signature and hands the command one `JobInput` value.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, fields
from typing import Annotated, Any, Callable, Optional

import typer

from ktrain.cli.common import parse_pairs, registry_from


@dataclass
class JobInput:
    """What the user said about the job, as given on the command line."""

    command: Annotated[Optional[list[str]], typer.Argument(help="Trainer command, after --.", show_default=False)] = None
    filename: Annotated[Optional[str], typer.Option("-f", "--filename", help="TrainJob file (YAML; - for stdin).")] = None
    values: Annotated[
        Optional[list[str]], typer.Option("--values", help="Values file for a job template (YAML; repeatable).")
    ] = None
    sets: Annotated[
        Optional[list[str]],
        typer.Option("--set", help="PATH=VALUE: set a job field (trainer.numNodes=4, trainer.env[name=LR].value=1e-4) "
                     "or a template value (lr=3e-4). Repeatable."),
    ] = None
    runtime: Annotated[Optional[str], typer.Option("--runtime", "-r", help="Runtime blueprint name.")] = None
    runtime_file: Annotated[
        Optional[list[str]], typer.Option("--runtime-file", help="A runtime YAML file (highest precedence; repeatable).")
    ] = None
    runtimes_dir: Annotated[
        Optional[list[str]], typer.Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
    ] = None
    name: Annotated[Optional[str], typer.Option("--name", help="TrainJob name (default: derived from content).")] = None
    namespace: Annotated[Optional[str], typer.Option("-n", "--namespace", help="Namespace.")] = None
    nodes: Annotated[Optional[int], typer.Option("--nodes", help="Number of training nodes.")] = None
    nproc_per_node: Annotated[Optional[int], typer.Option("--nproc-per-node", help="Processes per node.")] = None
    image: Annotated[Optional[str], typer.Option("--image", help="Trainer image.")] = None
    env: Annotated[Optional[list[str]], typer.Option("--env", "-e", help="Trainer env KEY=VALUE (repeatable).")] = None
    resource: Annotated[
        Optional[list[str]], typer.Option("--resource", help="Per-node resource limit NAME=QTY (repeatable).")
    ] = None
    cpu: Annotated[Optional[str], typer.Option("--cpu", help="Per-node CPU request.")] = None
    memory: Annotated[Optional[str], typer.Option("--memory", help="Per-node memory request.")] = None
    label: Annotated[Optional[list[str]], typer.Option("--label", "-l", help="JobSet label KEY=VALUE.")] = None
    annotation: Annotated[Optional[list[str]], typer.Option("--annotation", help="JobSet annotation KEY=VALUE.")] = None
    dataset: Annotated[Optional[str], typer.Option("--dataset", help="Dataset storage URI (hf://, s3://, ...).")] = None
    model: Annotated[Optional[str], typer.Option("--model", help="Model storage URI.")] = None
    dataset_secret: Annotated[
        Optional[str], typer.Option("--dataset-secret", help="Secret with dataset credentials.")
    ] = None
    model_secret: Annotated[Optional[str], typer.Option("--model-secret", help="Secret with model credentials.")] = None
    queue: Annotated[Optional[str], typer.Option("--queue", help="Volcano queue (through a runtime patch).")] = None
    patch: Annotated[Optional[list[str]], typer.Option("--patch", help="A runtimePatch YAML file (repeatable).")] = None
    suspend: Annotated[Optional[bool], typer.Option("--suspend/--no-suspend", help="Create suspended.")] = None
    ssh_secret: Annotated[
        Optional[str], typer.Option("--ssh-secret", help="MPI: mount this existing Secret instead of new keys.")
    ] = None
    allow_extensions: Annotated[
        bool, typer.Option("--allow-extensions", help="Allow ktrain extensions (Intel MPI / MPICH hostfiles).")
    ] = False
    kubeconfig: Annotated[
        Optional[str],
        typer.Option("--kubeconfig", help="Kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config); "
                                          "render: also take --runtime from this cluster."),
    ] = None
    context: Annotated[Optional[str], typer.Option("--context", help="The kubeconfig context to use.")] = None

    def overrides(self) -> Any:
        """The flags as a `service.JobOverrides`."""
        from ktrain.service import JobOverrides

        requests: dict[str, str] = {}
        if self.cpu is not None:
            requests["cpu"] = self.cpu
        if self.memory is not None:
            requests["memory"] = self.memory
        return JobOverrides(
            runtime=self.runtime,
            name=self.name,
            namespace=self.namespace,
            nodes=self.nodes,
            nproc_per_node=self.nproc_per_node,
            image=self.image,
            command=list(self.command) if self.command else None,
            env=parse_pairs(self.env, "--env"),
            requests=requests,
            limits=dict(parse_pairs(self.resource, "--resource")),
            labels=dict(parse_pairs(self.label, "--label")),
            annotations=dict(parse_pairs(self.annotation, "--annotation")),
            dataset=self.dataset,
            model=self.model,
            dataset_secret=self.dataset_secret,
            model_secret=self.model_secret,
            queue=self.queue,
            suspend=self.suspend,
            patch_files=list(self.patch or []),
            values_files=list(self.values or []),
            sets=list(self.sets or []),
        )

    def render_request(self) -> Any:
        """A `service.RenderRequest` for these inputs."""
        from ktrain.service import RenderRequest

        return RenderRequest(file=self.filename, overrides=self.overrides(), ssh_secret=self.ssh_secret,
                             allow_extensions=self.allow_extensions)

    def registry(self) -> Any:
        return registry_from(self.runtime_file, self.runtimes_dir)

    def connection(self, request_timeout: float = 30.0) -> Any:
        """The `ConnectionOptions` these inputs name (no cluster is contacted)."""
        return connection(self.kubeconfig, self.context, self.namespace, request_timeout)


_INPUT_FIELDS = [f.name for f in fields(JobInput)]


def job_input_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command every JobInput option; it receives them as `job_input: JobInput`.

    The command's own parameters come first in `--help`, then the job options. Typer reads
    the parameters from `__signature__`, so the decorated function is an ordinary command.
    """
    own = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.name != "job_input"]
    hints = inspect.get_annotations(JobInput, eval_str=True)
    shared = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name])
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
    Optional[str], typer.Option("--kubeconfig", help="Path to the kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config).")
]
ContextOpt = Annotated[Optional[str], typer.Option("--context", help="The kubeconfig context to use.")]
NamespaceOpt = Annotated[
    Optional[str], typer.Option("-n", "--namespace", help="Namespace (default: the context's, else default).")
]
RequestTimeoutOpt = Annotated[
    float, typer.Option("--request-timeout", help="Seconds to wait for each API request.")
]


def connection(kubeconfig: str | None, context: str | None, namespace: str | None,
               request_timeout: float = 30.0) -> Any:
    """A `ConnectionOptions` from the kubectl-style flags (no cluster is contacted)."""
    from ktrain.cluster.connection import ConnectionOptions

    return ConnectionOptions(kubeconfig=kubeconfig, context=context, namespace=namespace,
                             request_timeout=request_timeout)
