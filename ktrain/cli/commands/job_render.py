"""`ktrain job render` (and its alias `ktrain render`): the objects a TrainJob becomes, without a cluster.

The typer app and the fast path (`ktrain.cli.fastpath`) both call `render_job`, so what a render
prints cannot depend on which of them parsed argv.
"""

from __future__ import annotations

import sys

from ktrain.cli.common import report_inputs, warn
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import Option, command

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated


@command("job", "render", fast=True, aliases={("render",): "Alias of `ktrain job render`."})
def render_job(
    job_input: JobInput,
    output: Annotated[str, Option("-o", "--output", help="yaml | json | name")] = "yaml",
    explain: Annotated[
        bool, Option("--explain", help="Comment each field with where it came from (YAML only).")
    ] = False,
) -> None:
    """Render the objects the Trainer controller would create, without a cluster."""
    from ktrain.output.manifests import check_output, format_objects

    check_output(output)  # before any work: a bad -o must not follow a render and its warnings
    if explain and output != "yaml":
        from ktrain.errors import UsageError

        raise UsageError("--explain writes YAML comments: use it with -o yaml")
    request = job_input.render_request()
    outcome, notes = job_input.resolve_and_render(request)
    report_inputs(request.notes, [*notes, *outcome.result.warnings])
    if outcome.secret_printed and output != "name":
        warn(
            "the output holds a freshly generated SSH private key (Secret "
            f"{outcome.job.name}-mpi-ssh-auth); do not commit it to a repository — "
            "use --ssh-secret NAME to mount an existing Secret instead"
        )
    if explain:
        from ktrain.output.yamltext import dump_all
        from ktrain.service.explain import explain_notes

        sys.stdout.write(dump_all(outcome.result.objects, explain_notes(request, outcome)))
        return
    sys.stdout.write(format_objects(outcome.result.objects, output))
