"""`ktrain job ...` commands (and the top-level `ktrain render` alias)."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ktrain.cli.common import parse_pairs, registry_from, warn

app = typer.Typer(help="Render and manage TrainJobs.", no_args_is_help=True)

FileOpt = Annotated[Optional[str], typer.Option("-f", "--filename", help="TrainJob file (YAML; - for stdin).")]
RuntimeOpt = Annotated[Optional[str], typer.Option("--runtime", "-r", help="Runtime blueprint name.")]
RuntimeFileOpt = Annotated[
    Optional[list[str]], typer.Option("--runtime-file", help="A runtime YAML file (highest precedence; repeatable).")
]
RuntimesDirOpt = Annotated[
    Optional[list[str]], typer.Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
]


def render_command(
    command: Annotated[Optional[list[str]], typer.Argument(help="Trainer command, after --.", show_default=False)] = None,
    filename: FileOpt = None,
    runtime: RuntimeOpt = None,
    runtime_file: RuntimeFileOpt = None,
    runtimes_dir: RuntimesDirOpt = None,
    name: Annotated[Optional[str], typer.Option("--name", help="TrainJob name (default: derived from content).")] = None,
    namespace: Annotated[Optional[str], typer.Option("-n", "--namespace", help="Namespace.")] = None,
    nodes: Annotated[Optional[int], typer.Option("--nodes", help="Number of training nodes.")] = None,
    nproc_per_node: Annotated[Optional[int], typer.Option("--nproc-per-node", help="Processes per node.")] = None,
    image: Annotated[Optional[str], typer.Option("--image", help="Trainer image.")] = None,
    env: Annotated[Optional[list[str]], typer.Option("--env", "-e", help="Trainer env KEY=VALUE (repeatable).")] = None,
    resource: Annotated[
        Optional[list[str]], typer.Option("--resource", help="Per-node resource limit NAME=QTY (repeatable).")
    ] = None,
    cpu: Annotated[Optional[str], typer.Option("--cpu", help="Per-node CPU request.")] = None,
    memory: Annotated[Optional[str], typer.Option("--memory", help="Per-node memory request.")] = None,
    label: Annotated[Optional[list[str]], typer.Option("--label", "-l", help="JobSet label KEY=VALUE.")] = None,
    annotation: Annotated[Optional[list[str]], typer.Option("--annotation", help="JobSet annotation KEY=VALUE.")] = None,
    dataset: Annotated[Optional[str], typer.Option("--dataset", help="Dataset storage URI (hf://, s3://, ...).")] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Model storage URI.")] = None,
    dataset_secret: Annotated[Optional[str], typer.Option("--dataset-secret", help="Secret with dataset credentials.")] = None,
    model_secret: Annotated[Optional[str], typer.Option("--model-secret", help="Secret with model credentials.")] = None,
    queue: Annotated[Optional[str], typer.Option("--queue", help="Volcano queue (through a runtime patch).")] = None,
    patch: Annotated[Optional[list[str]], typer.Option("--patch", help="A runtimePatch YAML file (repeatable).")] = None,
    suspend: Annotated[Optional[bool], typer.Option("--suspend/--no-suspend", help="Create suspended.")] = None,
    ssh_secret: Annotated[
        Optional[str], typer.Option("--ssh-secret", help="MPI: mount this existing Secret instead of new keys.")
    ] = None,
    allow_extensions: Annotated[
        bool, typer.Option("--allow-extensions", help="Allow ktrain extensions (Intel MPI / MPICH hostfiles).")
    ] = False,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml | json | name")] = "yaml",
) -> None:
    """Render the objects the Trainer controller would create, without a cluster."""
    from ktrain.output.manifests import format_objects
    from ktrain.service import JobOverrides, RenderRequest, render_request

    limits = dict(parse_pairs(resource, "--resource"))
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    overrides = JobOverrides(
        runtime=runtime,
        name=name,
        namespace=namespace,
        nodes=nodes,
        nproc_per_node=nproc_per_node,
        image=image,
        command=list(command) if command else None,
        env=parse_pairs(env, "--env"),
        requests=requests,
        limits=limits,
        labels=dict(parse_pairs(label, "--label")),
        annotations=dict(parse_pairs(annotation, "--annotation")),
        dataset=dataset,
        model=model,
        dataset_secret=dataset_secret,
        model_secret=model_secret,
        queue=queue,
        suspend=suspend,
        patch_files=list(patch or []),
    )
    request = RenderRequest(file=filename, overrides=overrides, ssh_secret=ssh_secret,
                            allow_extensions=allow_extensions)
    outcome = render_request(request, registry_from(runtime_file, runtimes_dir))
    for message in outcome.result.warnings:
        warn(message)
    if outcome.secret_printed and output != "name":
        warn(
            "the output holds a freshly generated SSH private key (Secret "
            f"{outcome.job.name}-mpi-ssh-auth); do not commit it to a repository — "
            "use --ssh-secret NAME to mount an existing Secret instead"
        )
    sys.stdout.write(format_objects(outcome.result.objects, output))


app.command("render", context_settings={"help_option_names": ["-h", "--help"]})(render_command)
