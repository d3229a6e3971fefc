"""`ktrain job ...` commands (and the top-level `ktrain render` alias)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ktrain.cli import job_convert, job_create, job_delete, job_observe
from ktrain.cli.job_offline import init_job, validate_job
from ktrain.cli.options import JobInput, job_input_options
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
) -> None:
    """Print a commented starter TrainJob for a runtime: `ktrain job init -r torch-distributed > job.yaml`."""
    init_job(runtime, runtime_file, runtimes_dir, schema)


_HELP = {"help_option_names": ["-h", "--help"]}
app.command("create", context_settings=_HELP)(job_create.create_command)
app.command("list", context_settings=_HELP)(job_observe.list_command)
app.command("get", context_settings=_HELP)(job_observe.get_command)
app.command("logs", context_settings=_HELP)(job_observe.logs_command)
app.command("wait", context_settings=_HELP)(job_observe.wait_command)
app.command("delete", context_settings=_HELP)(job_delete.delete_command)
app.command("convert", context_settings=_HELP)(job_convert.convert_command)
