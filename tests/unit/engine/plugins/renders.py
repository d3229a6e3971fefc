"""Small renders for the plugin tests (`from .renders import ...`): a TrainJob on a small runtime
with the policy under test, through `ktrain.engine.render` as `job render` calls it."""

from __future__ import annotations

from typing import Any

from ktrain import constants as c
from ktrain.api.records import validate
from ktrain.engine import RenderContext, SshKeyPair, render

KEY = SshKeyPair(private_key_pem=b"-----BEGIN TEST KEY-----\n", public_key_line=b"ecdsa-sha2-nistp521 AAAA test\n")


def step(name: str, ancestor: str | None, *, container_name: str = c.NODE, image: str = "img:1") -> dict[str, Any]:
    labels = {c.LABEL_ANCESTOR: ancestor} if ancestor else {}
    return {
        "name": name,
        "template": {
            "metadata": {"labels": labels},
            "spec": {"template": {"spec": {"containers": [{"name": container_name, "image": image}]}}},
        },
    }


def runtime(ml: dict[str, Any], *steps: dict[str, Any], num_nodes: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": c.TRAINER_API_VERSION,
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "rt"},
        "spec": {
            "mlPolicy": {"numNodes": num_nodes, **ml},
            "template": {"spec": {"replicatedJobs": list(steps) or [step(c.NODE, c.ANCESTOR_TRAINER)]}},
        },
    }


def job(**trainer: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"runtimeRef": {"name": "rt"}}
    if trainer:
        spec["trainer"] = trainer
    meta = {"name": "j", "namespace": "ns", "uid": "00000000-0000-0000-0000-000000000001"}
    return {"apiVersion": c.TRAINER_API_VERSION, "kind": "TrainJob", "metadata": meta, "spec": spec}


def objects(job_data: dict[str, Any], runtime_data: dict[str, Any], **ctx: Any) -> list[dict[str, Any]]:
    ctx.setdefault("ssh_key", KEY)
    result = render(validate("TrainJob", job_data), validate("TrainingRuntime", runtime_data), RenderContext(**ctx))
    return result.objects


def of_kind(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in found if o["kind"] == kind]


def container(found: list[dict[str, Any]], rjob: str = c.NODE, name: str = c.NODE) -> dict[str, Any]:
    (jobset,) = of_kind(found, "JobSet")
    for r in jobset["spec"]["replicatedJobs"]:
        if r["name"] == rjob:
            for ct in r["template"]["spec"]["template"]["spec"]["containers"]:
                if ct["name"] == name:
                    return dict(ct)
    raise AssertionError(f"no container {name} in replicated job {rjob}")


def env(ct: dict[str, Any]) -> dict[str, Any]:
    """name -> value (or the valueFrom mapping) of a container's env."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in ct.get("env") or []}


COMPLETION_INDEX = {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}}
MASTER = f"j-{c.NODE}-0-0.j"


def bundled(name: str) -> dict[str, Any]:
    """A bundled runtime's document, as its file reads (a copy to edit)."""
    from ktrain.inputs.registry import RuntimeRegistry
    from ktrain.util.jsondata import deep_copy

    document = RuntimeRegistry().get(name).document
    assert document is not None and isinstance(document.data, dict)
    return deep_copy(document.data)


def bundled_job(runtime_name: str, name: str = "j", **trainer: Any) -> dict[str, Any]:
    """A TrainJob on a bundled ClusterTrainingRuntime."""
    data = job(**trainer)
    data["metadata"]["name"] = name
    data["spec"]["runtimeRef"] = {"name": runtime_name}
    return data
