"""`ktrain job create`: the typer declaration.

The body lives typer-free in `ktrain.cli.job_submit`, which the fast path
(`ktrain.cli.fastpath`) calls too.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ktrain.cli.job_submit import submit_job
from ktrain.cli.options import JobInput, RequestTimeoutOpt, job_input_options


@job_input_options
def create_command(
    job_input: JobInput,
    target: Annotated[
        str,
        typer.Option(
            "--target",
            help="jobset: submit the rendered objects (no Trainer controller needed); "
            "trainjob: submit the TrainJob to the Trainer controller.",
        ),
    ] = "jobset",
    dry_run: Annotated[
        str,
        typer.Option(
            "--dry-run",
            help="none | client (print what would be submitted) | server "
            "(the API server validates every object, nothing is stored).",
        ),
    ] = "none",
    output: Annotated[
        Optional[str], typer.Option("-o", "--output", help="name | yaml | json of what was created.")
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing job of the same name.")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the job completes or fails.")] = False,
    timeout: Annotated[
        Optional[str], typer.Option("--timeout", help="With --wait: give up after this long (e.g. 30m).")
    ] = None,
    follow: Annotated[bool, typer.Option("--follow", help="Stream the job's logs after creating it.")] = False,
    show_render: Annotated[
        bool,
        typer.Option(
            "--show-render",
            help="--target trainjob: also print the objects the controller "
            "would create (a preview; Secret data masked).",
        ),
    ] = False,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """Render a job and submit it to the cluster (server-side apply, field manager ktrain)."""
    submit_job(job_input, target, dry_run, output, overwrite, wait, timeout, follow, show_render, request_timeout)
