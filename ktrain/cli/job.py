"""`ktrain job ...` commands (and the top-level `ktrain render` alias)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ktrain.cli import job_create, job_delete
from ktrain.cli.common import warn
from ktrain.cli.options import JobInput, job_input_options

app = typer.Typer(help="Render and manage TrainJobs.", no_args_is_help=True)


@job_input_options
def render_command(
    job_input: JobInput,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml | json | name")] = "yaml",
) -> None:
    """Render the objects the Trainer controller would create, without a cluster."""
    from ktrain.cluster_runtimes import render_resolving
    from ktrain.output.manifests import format_objects

    explicit_cluster = bool(job_input.kubeconfig or job_input.context)
    outcome, notes = render_resolving(job_input.render_request(), job_input.registry(), job_input.connection(),
                                      prefer_cluster=explicit_cluster)
    for message in [*notes, *outcome.result.warnings]:
        warn(message)
    if outcome.secret_printed and output != "name":
        warn(
            "the output holds a freshly generated SSH private key (Secret "
            f"{outcome.job.name}-mpi-ssh-auth); do not commit it to a repository — "
            "use --ssh-secret NAME to mount an existing Secret instead"
        )
    sys.stdout.write(format_objects(outcome.result.objects, output))


app.command("render", context_settings={"help_option_names": ["-h", "--help"]})(render_command)
app.command("create", context_settings={"help_option_names": ["-h", "--help"]})(job_create.create_command)
app.command("delete", context_settings={"help_option_names": ["-h", "--help"]})(job_delete.delete_command)
