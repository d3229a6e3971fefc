"""`ktrain job run --local`: run the rendered pods on this machine, rank by rank.

The job is rendered exactly as `job render` renders it; `ktrain.local` then starts every pod of
the JobSet as local processes (see README, "Run a job locally").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ktrain.cli.common import note, parse_timeout, report_inputs
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import Option, command
from ktrain.errors import UsageError

if TYPE_CHECKING:
    from typing import Annotated


@command("job", "run", fast=True)
def run_job(
    job_input: JobInput,
    local: Annotated[bool, Option("--local", help="Run the job's pods as processes on this machine.")] = False,
    timeout: Annotated[
        str | None, Option("--timeout", help="Stop every pod after this long, e.g. 10m (exit 124).")
    ] = None,
    max_local_procs: Annotated[
        int, Option("--max-local-procs", help="Refuse a run that would start more local processes.", min=1)
    ] = 64,
    keep: Annotated[bool, Option("--keep", help="Keep the run's directory (volumes, emptyDirs) afterwards.")] = False,
    container: Annotated[
        str | None,
        Option("--container", help="Run each pod as a container of its image, with podman or docker."),
    ] = None,
) -> None:
    """Run a job here before it waits for GPUs: render it, then start each pod as local processes.

    Every replicated job x replicas x completions runs, in JobSet's start order, with the env,
    working directory, command and mounted ConfigMaps it has on the cluster; pod host names
    resolve to 127.0.0.1 and ports are chosen free. Output lines are prefixed by pod. The exit
    code follows the JobSet success policy: 0, or the failing pod's exit code (124 on --timeout,
    130 on Ctrl-C).

    With --container podman|docker each pod is a container of its real image instead, on a
    network of the run where the pods' host names resolve; volumes are bind-mounted at their
    mount paths. Resource limits and GPUs are not applied.
    """
    if container is not None and container not in ("podman", "docker"):
        raise UsageError(f"--container must be podman or docker, not {container!r}")
    if not local and container is None:
        raise UsageError(
            "job run runs a job on this machine only, for now: add --local",
            hint="to run it on a cluster use `ktrain job create --follow` (or `--wait`)",
        )
    seconds = parse_timeout(timeout)
    from ktrain.local.run import LocalRunOptions

    request = job_input.render_request()
    outcome, notes = job_input.resolve_and_render(request)
    report_inputs(request.notes, [*notes, *outcome.result.warnings])
    from ktrain.local.run import run_checked

    run_checked(
        outcome,
        request.overrides,
        LocalRunOptions(timeout=seconds, max_processes=max_local_procs, notify=note, keep=keep, container=container),
    )
