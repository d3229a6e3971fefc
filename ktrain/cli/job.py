"""`ktrain job ...` commands (and the top-level `ktrain render` alias)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ktrain.cli.common import warn
from ktrain.cli.options import JobInput, job_input_options

app = typer.Typer(help="Render and manage TrainJobs.", no_args_is_help=True)


@job_input_options
def render_command(
    job_input: JobInput,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml | json | name")] = "yaml",
) -> None:
    """Render the objects the Trainer controller would create, without a cluster."""
    from ktrain.output.manifests import format_objects
    from ktrain.service import render_request

    outcome = render_request(job_input.render_request(), job_input.registry())
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

# Looking at jobs on a cluster (ktrain/cli/job_observe.py).
from ktrain.cli import job_observe  # noqa: E402 - registration below the render command

app.command("list")(job_observe.list_command)
app.command("get")(job_observe.get_command)
app.command("logs")(job_observe.logs_command)
app.command("wait")(job_observe.wait_command)
