"""`ktrain job init`: a commented starter TrainJob for a runtime (no cluster)."""

from __future__ import annotations

import sys

from ktrain.cli.common import registry_from, warn
from ktrain.cli.spec import Option, command

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated


@command("job", "init", fast=True)
def init_job(
    runtime: Annotated[str, Option("--runtime", "-r", help="Runtime blueprint name.")],
    runtime_file: Annotated[
        list[str] | None, Option("--runtime-file", help="A runtime YAML file (repeatable).")
    ] = None,
    runtimes_dir: Annotated[
        list[str] | None, Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
    ] = None,
    schema: Annotated[
        str | None,
        Option("--schema", help="URL or path for the `$schema` line (default: the installed trainjob schema)."),
    ] = None,
    kubeconfig: Annotated[
        str | None,
        Option(
            "--kubeconfig",
            help="Kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config): also take --runtime from this cluster.",
        ),
    ] = None,
    context: Annotated[str | None, Option("--context", help="The kubeconfig context to use.")] = None,
) -> None:
    """Print a commented starter TrainJob for a runtime: `ktrain job init -r torch-distributed > job.yaml`."""
    from ktrain.authoring.starter import render_starter
    from ktrain.cli.common import connection
    from ktrain.inputs.bundled import schemas_dir
    from ktrain.service.cluster_runtimes import find_runtime

    registry = registry_from(runtime_file, runtimes_dir)
    entry, notes = find_runtime(registry, runtime, connection(kubeconfig, context, None))
    for message in notes:
        warn(message)
    url = schema or (schemas_dir() / "trainjob.schema.json").as_uri()
    sys.stdout.write(render_starter(entry, url))
