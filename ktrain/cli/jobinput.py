"""`JobInput`: the options that describe a job, shared by every command that builds one.

`job render`, `job validate` and `job create` take the same inputs: a job file and/or flags.
Rather than repeat thirty parameters per command, a command takes one `job_input: JobInput`
parameter; each field below is one option, declared as a command's own parameters are
(`ktrain.cli.spec`). The typer app (`ktrain.cli.typer_app`) expands the parameter into these options
(the trainer command first, then the command's own options, then the rest), and the fast path
(`ktrain.cli.fastpath`) builds the very same value; this module never imports typer.
"""

from __future__ import annotations

from ktrain.cli.common import connection, parse_pairs, registry_from
from ktrain.cli.spec import Argument, Option
from ktrain.util.structs import struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the fast path a few ms to import
    from typing import Annotated, Any


@struct
class JobInput:
    """What the user said about the job, as given on the command line (None: not given)."""

    command: Annotated[list[str] | None, Argument(help="Trainer command, after --.", show_default=False)] = None
    filename: Annotated[
        str | None,
        Option("-f", "--filename", help="TrainJob file, or a Training Operator v1 job (YAML; - for stdin)."),
    ] = None
    values: Annotated[
        list[str] | None, Option("--values", help="Values file for a job template (YAML; repeatable).")
    ] = None
    sets: Annotated[
        list[str] | None,
        Option(
            "--set",
            help="PATH=VALUE: set a job field (trainer.numNodes=4, trainer.env[name=LR].value=1e-4) "
            "or a template value (lr=3e-4). Repeatable.",
        ),
    ] = None
    runtime: Annotated[str | None, Option("--runtime", "-r", help="Runtime blueprint name.")] = None
    runtime_kind: Annotated[
        str | None,
        Option(
            "--runtime-kind",
            help="ClusterTrainingRuntime | TrainingRuntime: the kind of --runtime "
            "(default: whichever holds the name; a job file's runtimeRef.kind without --runtime).",
        ),
    ] = None
    runtime_file: Annotated[
        list[str] | None,
        Option("--runtime-file", help="A runtime YAML file (highest precedence; repeatable)."),
    ] = None
    runtimes_dir: Annotated[
        list[str] | None, Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
    ] = None
    name: Annotated[str | None, Option("--name", help="TrainJob name (default: derived from content).")] = None
    namespace: Annotated[str | None, Option("-n", "--namespace", help="Namespace.")] = None
    nodes: Annotated[int | None, Option("--nodes", help="Number of training nodes.")] = None
    nproc_per_node: Annotated[int | None, Option("--nproc-per-node", help="Processes per node.")] = None
    image: Annotated[str | None, Option("--image", help="Trainer image.")] = None
    env: Annotated[list[str] | None, Option("--env", "-e", help="Trainer env KEY=VALUE (repeatable).")] = None
    resource: Annotated[
        list[str] | None, Option("--resource", help="Per-node resource limit NAME=QTY (repeatable).")
    ] = None
    cpu: Annotated[str | None, Option("--cpu", help="Per-node CPU request.")] = None
    memory: Annotated[str | None, Option("--memory", help="Per-node memory request.")] = None
    label: Annotated[list[str] | None, Option("--label", "-l", help="JobSet label KEY=VALUE.")] = None
    annotation: Annotated[list[str] | None, Option("--annotation", help="JobSet annotation KEY=VALUE.")] = None
    dataset: Annotated[str | None, Option("--dataset", help="Dataset storage URI (hf://, s3://, ...).")] = None
    model: Annotated[str | None, Option("--model", help="Model storage URI.")] = None
    dataset_secret: Annotated[str | None, Option("--dataset-secret", help="Secret with dataset credentials.")] = None
    model_secret: Annotated[str | None, Option("--model-secret", help="Secret with model credentials.")] = None
    queue: Annotated[str | None, Option("--queue", help="Volcano queue (through a runtime patch).")] = None
    patch: Annotated[list[str] | None, Option("--patch", help="A runtimePatch YAML file (repeatable).")] = None
    suspend: Annotated[bool | None, Option("--suspend/--no-suspend", help="Create suspended.")] = None
    ssh_secret: Annotated[
        str | None, Option("--ssh-secret", help="MPI: mount this existing Secret instead of new keys.")
    ] = None
    allow_extensions: Annotated[
        bool, Option("--allow-extensions", help="Allow ktrain extensions (Intel MPI / MPICH hostfiles).")
    ] = False
    kubeconfig: Annotated[
        str | None,
        Option(
            "--kubeconfig",
            help="Kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config); "
            "render: also take --runtime from this cluster.",
        ),
    ] = None
    context: Annotated[str | None, Option("--context", help="The kubeconfig context to use.")] = None

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
            runtime_kind=self.runtime_kind,
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

        return RenderRequest(
            file=self.filename,
            overrides=self.overrides(),
            ssh_secret=self.ssh_secret,
            allow_extensions=self.allow_extensions,
        )

    def registry(self) -> Any:
        return registry_from(self.runtime_file, self.runtimes_dir)

    def connection(self, request_timeout: float = 30.0) -> Any:
        """The `ConnectionOptions` these inputs name (no cluster is contacted)."""
        return connection(self.kubeconfig, self.context, self.namespace, request_timeout)
