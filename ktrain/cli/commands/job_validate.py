"""`ktrain job validate`: check a job offline, without a cluster."""

from __future__ import annotations

import sys

from ktrain.cli.common import note, warn
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import command


@command("job", "validate", fast=True)
def validate_job(job_input: JobInput) -> None:
    """Check a job offline: the TrainJob schema, then every rule the CRDs, webhooks and plugins apply.

    Prints `trainjob.trainer.kubeflow.org/NAME valid` (exit 0), or every problem at once (exit 3).
    """
    from ktrain.service.render import render_resolving
    from ktrain.service.validate import validate_request

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
