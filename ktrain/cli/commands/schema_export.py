"""`ktrain schema export`: write the JSON Schemas (TrainJob file, runtime blueprint, values file)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ktrain.cli.spec import Option, command

if TYPE_CHECKING:
    from typing import Annotated


@command("schema", "export")
def export_schemas(
    directory: Annotated[str, Option("--dir", help="Directory to write the schemas into.")] = "schemas",
) -> None:
    """(Re)generate trainjob.schema.json, runtime.schema.json and values.schema.json from the API models."""
    from ktrain.authoring.json_schemas import export

    for path in export(directory):
        sys.stderr.write(f"wrote {path}\n")
