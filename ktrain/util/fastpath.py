"""Which modules are on the fast path: the ones `ktrain job render`, completion, `--help`, the
local `runtime list|show`, `job init|validate`, `ktrain-krm` and the cluster commands
(`job list|get|why|logs|wait|create|delete`) load. Only they use the start-up idioms
(docs/architecture.md, "The fast path"); every other module is ordinary Python.

tests/architecture/test_fast_path.py holds this list to what those commands really load, and
the idioms to the modules listed here. Nothing imports this module at run time.
"""

from __future__ import annotations

# A package named here: the package and every module under it.
FAST_PACKAGES = (
    "ktrain.util",
    "ktrain.engine",  # every plugin: the runtime chooses which a render loads
    "ktrain.inputs",
    "ktrain.output",
    "ktrain.service",
    "ktrain.cluster",
    "ktrain.jobs",  # the job logic the cluster commands derive their answers with
    "ktrain.progress",  # `job list|get|wait` show progress
    "ktrain.completion",
)

# A module named here: that module only (a package's `__init__`, not what is under it).
FAST_MODULES = (
    "ktrain",
    "ktrain.launcher",
    "ktrain.errors",
    "ktrain.constants",
    "ktrain.api",
    "ktrain.api.base",
    "ktrain.api.policies",
    "ktrain.api.records",
    "ktrain.api.record_spec",
    "ktrain.authoring",
    "ktrain.authoring.json_schemas",
    "ktrain.authoring.set_paths",
    "ktrain.authoring.starter",
    "ktrain.authoring.templating",
    "ktrain.cli",
    "ktrain.cli.common",
    "ktrain.cli.fastpath",
    "ktrain.cli.guard",
    "ktrain.cli.helptext",
    "ktrain.cli.jobinput",
    "ktrain.cli.progress_display",
    "ktrain.cli.krm",
    "ktrain.cli.spec",
    "ktrain.cli.commands",
    "ktrain.cli.commands.job_create",
    "ktrain.cli.commands.job_delete",
    "ktrain.cli.commands.job_get",
    "ktrain.cli.commands.job_init",
    "ktrain.cli.commands.job_list",
    "ktrain.cli.commands.job_logs",
    "ktrain.cli.commands.job_render",
    "ktrain.cli.commands.job_validate",
    "ktrain.cli.commands.job_wait",
    "ktrain.cli.commands.job_why",
    "ktrain.cli.commands.runtime_list",
    "ktrain.cli.commands.runtime_show",
)

# Modules under a FAST_PACKAGES entry that no fast command loads: ordinary Python.
NOT_FAST = (
    "ktrain.inputs.code_bundle",  # `--code`: already imports typing, json and re for its files
    "ktrain.inputs.code_secrets",
    "ktrain.inputs.secret_policy",
    "ktrain.output.diffs",  # `job diff`
    "ktrain.service.convert",  # `job convert`
    "ktrain.service.explain",  # `--explain`
    "ktrain.cluster.kubernetes_transport",  # the kubernetes client: 0.3-0.5 s whatever we do
    "ktrain.completion.refresh",  # runs detached, after the TAB press was answered
    "ktrain.completion.scripts",
    "ktrain.util.fastpath",  # this list
)


def is_fast_path(module: str) -> bool:
    """Whether `module` (a dotted name) is declared on the fast path."""
    if module in NOT_FAST:
        return False
    if module in FAST_MODULES:
        return True
    return any(module == p or module.startswith(p + ".") for p in FAST_PACKAGES)
