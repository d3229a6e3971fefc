"""Every `ktrain` command, one module each (or one per small group), typer-free.

A module holds a command's whole declaration: its options (the function's parameters, see
`ktrain.cli.spec`), its help (the docstring) and its body. `ktrain.cli.typer_app` builds the typer app
from the modules listed here, in this order (the order of `--help`); `python -m ktrain.cli.generate`
derives the command tree (completion, fast parser) and docs/commands.md from that app.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

# The command groups: name -> help, in `ktrain --help` order.
GROUPS = {
    "job": "Render and manage TrainJobs.",
    "runtime": "Runtime blueprints (ClusterTrainingRuntime / TrainingRuntime).",
    "schema": "JSON Schemas for editors (yaml-language-server) and CI.",
    "completion": "Shell completion scripts.",
}

# The command modules of this package, in `--help` order within each group.
MODULES = (
    "job_render",
    "job_validate",
    "job_init",
    "job_create",
    "job_run",
    "job_list",
    "job_get",
    "job_why",
    "job_logs",
    "job_wait",
    "job_watch",
    "job_delete",
    "job_prune",
    "job_suspend",
    "job_diff",
    "job_convert",
    "runtime_list",
    "runtime_show",
    "schema_export",
    "completion",
)


def command_functions() -> list[Any]:
    """Every `@command` function of the modules above, in order (imports them all)."""
    import importlib

    from ktrain.cli.spec import info_of

    found = []
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        found += [f for f in vars(module).values() if info_of(f) is not None and f.__module__ == module.__name__]
    return found
