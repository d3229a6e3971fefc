"""`ktrain.render`, `ktrain.validate`, `ktrain.train`: the job commands as functions.

The job options are the command line's (`ktrain.python_api.arguments`: every `JobOverrides` field,
by the Kubeflow SDK's name where it has one). A function's source travels with its job as code, with
the call the SDK makes: `func(**func_args)` (`ktrain.python_api.request`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ktrain.errors import UsageError
from ktrain.python_api import arguments as a
from ktrain.python_api.request import function_request, prepare, unique_name
from ktrain.util.jsondata import Obj


def render(job: object = None, **options: Any) -> list[Obj]:
    """The objects `ktrain job render` prints, as plain dicts: from a TrainJob (a dict, YAML text
    or a path) and/or the job options (`runtime=`, `num_nodes=`, `image=`, `command=`, `env=`,
    `resources_per_node=`, `kueue_queue=`, `fine_tuning=`, `code=`, `runtime_files=`, ...:
    docs/python-api.md). Names come from the content, as the CLI's: the same input renders the
    same objects."""
    from ktrain.service.render import render_request

    request, registry = prepare(job, options, function="render")
    return list(render_request(request, registry).result.objects)


def validate(job: object = None, **options: Any) -> list[str]:
    """What `ktrain job validate` checks; returns its warnings, raises ValidationFailedError."""
    from ktrain.service.validate import validate_request

    request, registry = prepare(job, options, function="validate")
    return list(validate_request(request, registry).warnings)


def train_request(func: Callable[..., Any], *, runtime: object, func_args: object = None, **options: Any) -> Any:
    """The render request `ktrain.train` submits, to inspect with
    `ktrain.service.render.render_request` (its job named from its content, as `render` names jobs)."""
    request, _registry = function_request(
        func, func_args, function="train_request", options={"runtime": a.text(runtime, "runtime"), **options}
    )
    return request


def train(
    func: Callable[..., Any],
    *,
    runtime: object,
    func_args: object = None,
    kubeconfig: object = None,
    context: object = None,
    backend: object = "cluster",
    container: object = None,
    **options: Any,
) -> str:
    """Run `func(**func_args)` on the cluster (the SDK's CustomTrainer): its source travels as
    code and runs under the runtime's launcher (torchrun for torch runtimes, mpirun for MPI ones,
    python otherwise). Each call is a new job: unless `name=` is given, it gets a fresh name (a
    letter and 11 hex digits, as the SDK's). Submits the rendered objects (no Trainer controller
    needed), as `ktrain job create` does; returns the job's name.

    `backend="local"` runs the same pods on this machine instead (`ktrain job run --local`),
    printing their lines, and returns when the run ends; a failed run raises
    `ktrain.local.runner.LocalRunError` (its `exit_code` is the failing pod's). With
    `container="podman"` or `"docker"` the pods are containers of their images
    (`ktrain job run --local --container`)."""
    chosen = a.enum_value(backend, "backend", {"cluster": "cluster", "local": "local"}) or "cluster"
    engine = a.enum_value(container, "container", {"podman": "podman", "docker": "docker"})
    if engine is not None and chosen != "local":
        raise UsageError('container= runs the pods here: give backend="local" too')
    request, registry = function_request(
        func, func_args, function="train", options={"runtime": a.text(runtime, "runtime"), **options}
    )
    request.fallback_name = unique_name()
    if chosen == "local":
        from ktrain.local.run import LocalRunOptions, run_checked
        from ktrain.service.render import render_request

        return run_checked(render_request(request, registry), request.overrides, LocalRunOptions(container=engine))
    from ktrain.python_api.client import Client

    client = Client(kubeconfig=kubeconfig, context=context, namespace=options.get("namespace"))
    return client._submit(request, registry)
