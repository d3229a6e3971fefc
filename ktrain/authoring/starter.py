"""`ktrain job init`: a commented starter TrainJob for one runtime.

What the runtime would give the job (image, command, node count, processes per node,
initializer sources) is read from the blueprint and shown as comments, so the file states
only what the data scientist chooses. The text comes from `ktrain/authoring/templates/trainjob.yaml.j2`.
"""

from __future__ import annotations

from typing import Any

from ktrain import constants as c
from ktrain.api.policies import policy_named
from ktrain.inputs.registry import RuntimeEntry

TEMPLATE_NAME = "trainjob.yaml.j2"


def _containers(rjob: dict[str, Any]) -> list[dict[str, Any]]:
    pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    return [ct for ct in pod.get("containers") or [] if isinstance(ct, dict)]


def _ancestor(rjob: dict[str, Any]) -> str | None:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(c.LABEL_ANCESTOR)


def _storage_uri(container: dict[str, Any]) -> str | None:
    for env in container.get("env") or []:
        if env.get("name") == c.INITIALIZER_ENV_STORAGE_URI:
            return str(env.get("value"))
    return None


def starter_context(entry: RuntimeEntry, schema_url: str) -> dict[str, Any]:
    """Everything the starter template needs to know about the runtime."""
    from ktrain.engine.plugins.torchtune import ENTRYPOINT as TORCHTUNE_ENTRYPOINT

    runtime = entry.runtime
    ml = runtime.spec.ml_policy
    policy = policy_named(ml.policy_keys[0] if ml is not None and ml.policy_keys else None).key
    trainer: dict[str, Any] = {}
    initializers: dict[str, str | None] = {}
    launcher = False
    for rjob in runtime.spec.template.spec.get("replicatedJobs") or []:
        ancestor = _ancestor(rjob)
        for ct in _containers(rjob):
            if ancestor == c.ANCESTOR_TRAINER and ct.get("name") == c.NODE:
                trainer = ct
                launcher = rjob.get("name") == c.LAUNCHER
            elif ancestor == c.ANCESTOR_DATASET_INITIALIZER and ct.get("name") == c.DATASET_INITIALIZER:
                initializers["dataset"] = _storage_uri(ct)
            elif ancestor == c.ANCESTOR_MODEL_INITIALIZER and ct.get("name") == c.MODEL_INITIALIZER:
                initializers["model"] = _storage_uri(ct)
    nproc = None
    if ml is not None and ml.mpi is not None:
        nproc = f"{ml.mpi.num_proc_per_node} (mlPolicy.mpi.numProcPerNode; the GPU count when that is 1)"
    elif ml is not None and ml.flux is not None:
        nproc = f"{ml.flux.num_proc_per_node} (mlPolicy.flux.numProcPerNode)"
    elif policy == "torch":
        nproc = "auto with GPUs, else the CPU count"
    torchtune = runtime.framework == "torchtune"
    gang = runtime.spec.pod_group_policy
    return {
        "schema_url": schema_url,
        "name": runtime.name,
        "kind": runtime.kind,
        "framework": runtime.framework or policy,
        "policy": policy,
        "gang": ("coscheduling" if gang.coscheduling else "volcano") if gang is not None else None,
        "num_nodes": ml.num_nodes if ml is not None and ml.num_nodes is not None else 1,
        "nproc": nproc,
        "image": trainer.get("image"),
        "command": trainer.get("command"),
        "args": trainer.get("args"),
        "env": [e for e in trainer.get("env") or [] if "value" in e],
        "resources": trainer.get("resources") or {},
        "launcher": launcher,
        "torchtune": torchtune,
        "example_command": TORCHTUNE_ENTRYPOINT if torchtune else list(policy_named(policy).example_command),
        "initializers": initializers,
    }


def render_starter(entry: RuntimeEntry, schema_url: str) -> str:
    """The starter TrainJob YAML for `entry`."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from ktrain.output.yamltext import quote

    def flow(items: list[Any]) -> str:
        return "[" + ", ".join(quote(str(x)) for x in items) + "]"

    # The sandbox too: a user's runtime (image names, env values) flows into this template.
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.PackageLoader("ktrain.authoring", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["q"] = lambda value: quote(str(value))
    env.filters["flow"] = flow
    return env.get_template(TEMPLATE_NAME).render(**starter_context(entry, schema_url))
