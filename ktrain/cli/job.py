"""`ktrain job ...` commands (and the top-level `ktrain render` alias)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ktrain.cli import job_convert, job_create, job_delete, job_observe
from ktrain.cli.job_offline import init_job, validate_job
from ktrain.cli.options import (
    ContextOpt,
    JobInput,
    KubeconfigOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
    job_input_options,
)
from ktrain.cli.render import render_job

app = typer.Typer(help="Render and manage TrainJobs.", no_args_is_help=True)


@job_input_options
def render_command(
    job_input: JobInput,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml | json | name")] = "yaml",
    explain: Annotated[
        bool, typer.Option("--explain", help="Comment each field with where it came from (YAML only).")
    ] = False,
) -> None:
    """Render the objects the Trainer controller would create, without a cluster."""
    render_job(job_input, output, explain)


app.command("render", context_settings={"help_option_names": ["-h", "--help"]})(render_command)


@app.command("validate", context_settings={"help_option_names": ["-h", "--help"]})
@job_input_options
def validate_command(job_input: JobInput) -> None:
    """Check a job offline: the TrainJob schema, then every rule the CRDs, webhooks and plugins apply.

    Prints `trainjob.trainer.kubeflow.org/NAME valid` (exit 0), or every problem at once (exit 3).
    """
    validate_job(job_input)


@app.command("init", context_settings={"help_option_names": ["-h", "--help"]})
def init_command(
    runtime: Annotated[str, typer.Option("--runtime", "-r", help="Runtime blueprint name.")],
    runtime_file: Annotated[
        Optional[list[str]], typer.Option("--runtime-file", help="A runtime YAML file (repeatable).")
    ] = None,
    runtimes_dir: Annotated[
        Optional[list[str]], typer.Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
    ] = None,
    schema: Annotated[
        Optional[str],
        typer.Option("--schema", help="URL or path for the `$schema` line (default: the installed trainjob schema)."),
    ] = None,
    kubeconfig: Annotated[
        Optional[str],
        typer.Option(
            "--kubeconfig",
            help="Kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config): also take --runtime from this cluster.",
        ),
    ] = None,
    context: Annotated[Optional[str], typer.Option("--context", help="The kubeconfig context to use.")] = None,
) -> None:
    """Print a commented starter TrainJob for a runtime: `ktrain job init -r torch-distributed > job.yaml`."""
    init_job(runtime, runtime_file, runtimes_dir, schema, kubeconfig, context)


_HELP = {"help_option_names": ["-h", "--help"]}
app.command("create", context_settings=_HELP)(job_create.create_command)
app.command("list", context_settings=_HELP)(job_observe.list_command)
app.command("get", context_settings=_HELP)(job_observe.get_command)
app.command("logs", context_settings=_HELP)(job_observe.logs_command)
app.command("wait", context_settings=_HELP)(job_observe.wait_command)
app.command("delete", context_settings=_HELP)(job_delete.delete_command)
app.command("convert", context_settings=_HELP)(job_convert.convert_command)


@app.command("suspend", context_settings=_HELP)
def suspend_command(
    names: Annotated[list[str], typer.Argument(help="Job names.", show_default=False)],
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """Suspend jobs: their pods are deleted, the job stays (spec.suspend: true on the TrainJob, else the JobSet)."""
    from ktrain.cli.job_suspend import suspend_jobs

    suspend_jobs(names, True, kubeconfig, context, namespace, request_timeout)


@app.command("resume", context_settings=_HELP)
def resume_command(
    names: Annotated[list[str], typer.Argument(help="Job names.", show_default=False)],
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    request_timeout: RequestTimeoutOpt = 30.0,
) -> None:
    """Resume suspended jobs (spec.suspend: false on the TrainJob, else the JobSet; nothing else changes)."""
    from ktrain.cli.job_suspend import suspend_jobs

    suspend_jobs(names, False, kubeconfig, context, namespace, request_timeout)
