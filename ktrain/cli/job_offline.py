"""The bodies of `ktrain job validate` and `ktrain job init`, typer-free.

Like `render_job` (`ktrain.cli.render`), each is called both by its typer command
(`ktrain.cli.job`) and by the fast path (`ktrain.cli.fastpath`), so what it prints cannot
depend on which of them parsed argv. Neither contacts a cluster.
"""

from __future__ import annotations

import sys

from ktrain.cli.common import note, warn
from ktrain.cli.jobinput import JobInput, connection


def validate_job(job_input: JobInput) -> None:
    """Check a job offline: the TrainJob schema, then every rule the CRDs, webhooks and plugins apply."""
    from ktrain.cluster.runtimes import render_resolving
    from ktrain.service import validate_request

    # Runtimes resolve as for `job render`: local first, a cluster's when --kubeconfig/--context
    # name one, and the current context's for a name found nowhere else.
    explicit_cluster = bool(job_input.kubeconfig or job_input.context)
    request = job_input.render_request()
    outcome, notes = render_resolving(
        request,
        job_input.registry(),
        job_input.connection(),
        prefer_cluster=explicit_cluster,
        run=validate_request,
    )
    for message in request.notes:
        note(message)
    for message in [*notes, *outcome.warnings]:
        warn(message)
    sys.stdout.write(f"trainjob.trainer.kubeflow.org/{outcome.job.name} valid\n")


def init_job(
    runtime: str,
    runtime_file: list[str] | None = None,
    runtimes_dir: list[str] | None = None,
    schema: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> None:
    """Print a commented starter TrainJob for a runtime."""
    from ktrain.cli.common import registry_from
    from ktrain.inputs.bundled import schemas_dir
    from ktrain.authoring.starter import render_starter
    from ktrain.cluster.runtimes import find_runtime

    registry = registry_from(runtime_file, runtimes_dir)
    entry, notes = find_runtime(registry, runtime, connection(kubeconfig, context, None))
    for message in notes:
        warn(message)
    url = schema or (schemas_dir() / "trainjob.schema.json").as_uri()
    sys.stdout.write(render_starter(entry, url))
