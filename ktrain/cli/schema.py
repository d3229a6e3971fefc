"""`ktrain schema export`: write the JSON Schemas (TrainJob file, runtime blueprint, values file)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

app = typer.Typer(help="JSON Schemas for editors (yaml-language-server) and CI.", no_args_is_help=True)


@app.command("export")
def export_command(
    directory: Annotated[str, typer.Option("--dir", help="Directory to write the schemas into.")] = "schemas",
) -> None:
    """(Re)generate trainjob.schema.json, runtime.schema.json and values.schema.json from the API models."""
    from ktrain.authoring.json_schemas import export

    for path in export(directory):
        sys.stderr.write(f"wrote {path}\n")
