"""`ktrain job validate`: check a job offline, without a cluster."""

from __future__ import annotations

import sys

from ktrain.cli.common import report_inputs
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import command


@command("job", "validate", fast=True)
def validate_job(job_input: JobInput) -> None:
    """Check a job offline: the TrainJob schema, then every rule the CRDs, webhooks and plugins apply.

    Prints `trainjob.trainer.kubeflow.org/NAME valid` (exit 0), or every problem at once (exit 3).
    """
    from ktrain.service.validate import validate_request

    request = job_input.render_request()
    outcome, notes = job_input.resolve_and_render(request, run=validate_request)  # runtimes as for render
    report_inputs(request.notes, [*notes, *outcome.warnings])
    sys.stdout.write(f"trainjob.trainer.kubeflow.org/{outcome.job.name} valid\n")
