"""The values file of a job template (`--values values.yaml`): template variables by name."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, RootModel, StringConstraints

# A value's name is a jinja2 variable name, so `{{ name }}` can read it.
VALUE_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"

ValueName = Annotated[str, StringConstraints(pattern=VALUE_NAME_PATTERN)]


class TemplateValues(RootModel[dict[ValueName, Any]]):
    """Variables for a TrainJob template (`job.yaml.j2`): each top-level key is one variable;
    values may be any YAML (nested mappings are read as `{{ optim.lr }}`)."""

    model_config = ConfigDict(
        title="TemplateValues",
        json_schema_extra={"additionalProperties": False},
    )
