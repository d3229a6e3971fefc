"""Where and in which queue a job runs: `--node-selector`, `--toleration`, `--gpus`, `--gpu-type`,
`--kueue-queue`, `--kueue-priority-class`, `--priority-class`.

Pod placement travels as one runtimePatch (manager `ktrain.io/cli-flags`), the only way a TrainJob
carries it to the JobSet upstream (runtimePatches allow `nodeSelector` and `tolerations` in a
replicated job's pod spec), so `--target trainjob` keeps it too. `--gpus` is a per-node resource
(`spec.trainer.resourcesPerNode.limits`), as `--resource` is, so the torch and torchtune policies
size processes and recipes from it.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import UsageError
from ktrain.util.jsondata import Obj

TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
# NVIDIA GPU feature discovery labels each GPU node with its product name.
DEFAULT_GPU_TYPE_LABEL = "nvidia.com/gpu.product"
GPU_TYPE_LABEL_ENV = "KTRAIN_GPU_TYPE_LABEL"


def parse_node_selector(items: list[str]) -> dict[str, str]:
    selector: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--node-selector: {item!r} is not KEY=VALUE", hint="e.g. --node-selector pool=a100")
        _check_label_key("--node-selector", key)
        _check_label_value("--node-selector", value)
        selector[key] = value
    return selector


def parse_toleration(text: str) -> Obj:
    """kubectl taint syntax: `KEY[=VALUE]:EFFECT`, or `KEY[=VALUE]` for every effect."""
    body, colon, effect = text.rpartition(":") if ":" in text else (text, "", "")
    if colon and effect not in TOLERATION_EFFECTS:
        raise UsageError(
            f"--toleration: unknown effect {effect!r} in {text!r}",
            hint=f"KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(TOLERATION_EFFECTS)}",
        )
    key, eq, value = body.partition("=")
    if not key:
        raise UsageError(f"--toleration: {text!r} has no key", hint="e.g. --toleration nvidia.com/gpu:NoSchedule")
    _check_label_key("--toleration", key)
    if eq:
        _check_label_value("--toleration", value)
    toleration: Obj = {"key": key, "operator": "Equal" if eq else "Exists"}
    if eq:
        toleration["value"] = value
    if effect:
        toleration["effect"] = effect
    return toleration


def _check_label_key(flag: str, key: str) -> None:
    prefix, slash, name = key.rpartition("/")
    ok = 0 < len(name) <= 63 and name[0].isalnum() and name[-1].isalnum()
    ok = ok and all(ch.isalnum() or ch in "-_." for ch in name) and name.isascii()
    if slash:
        ok = ok and 0 < len(prefix) <= 253 and prefix.isascii()
        ok = ok and all(part and part[0].isalnum() and part[-1].isalnum() for part in prefix.split("."))
        ok = ok and all(ch.islower() or ch.isdigit() or ch in "-." for ch in prefix)
    if not ok:
        raise UsageError(
            f"{flag}: invalid key {key!r}: a valid label key is an optional DNS subdomain prefix and '/', "
            "then a name of at most 63 characters: alphanumerics, '-', '_' or '.', starting and ending "
            "with an alphanumeric character"
        )


def _check_label_value(flag: str, value: str) -> None:
    ok = len(value) <= 63 and value.isascii() and all(ch.isalnum() or ch in "-_." for ch in value)
    if value and ok:
        ok = value[0].isalnum() and value[-1].isalnum()
    if not ok:
        raise UsageError(
            f"{flag}: invalid value {value!r}: a valid label value must be an empty string or consist of "
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        )


def kueue_labels(*, queue: str | None, priority_class: str | None) -> dict[str, str]:
    """`--kueue-queue` and `--kueue-priority-class` as the labels Kueue reads from a job: the
    LocalQueue `kueue.x-k8s.io/queue-name` and the WorkloadPriorityClass
    `kueue.x-k8s.io/priority-class` (kubernetes-sigs/kueue `pkg/controller/constants`:
    `QueueLabel`, `WorkloadPriorityClassLabel`). Both name objects, so an empty value is refused
    too, and each must be a label value the API server takes."""
    labels: dict[str, str] = {}
    for flag, key, value in (
        ("--kueue-queue", c.KUEUE_QUEUE_LABEL, queue),
        ("--kueue-priority-class", c.KUEUE_PRIORITY_LABEL, priority_class),
    ):
        if value is None:
            continue
        if not value:
            raise UsageError(f"{flag}: a name is required", hint=f"e.g. {flag} NAME")
        _check_label_value(flag, value)
        labels[key] = value
    return labels


def trainer_job_names(runtime_template: Obj) -> list[str]:
    """The runtime's trainer replicated jobs (ancestor label `trainer`, else the one named `node`)."""
    rjobs = [r for r in (runtime_template.get("spec") or {}).get("replicatedJobs") or [] if isinstance(r, dict)]
    labelled = [
        r["name"]
        for r in rjobs
        if (((r.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(c.LABEL_ANCESTOR)
        == c.ANCESTOR_TRAINER
    ]
    return labelled or [r["name"] for r in rjobs if r.get("name") == c.NODE]


def gpu_resource(runtime_template: Obj) -> str:
    """The GPU resource the runtime's trainer asks for (`amd.com/gpu`, ...), else nvidia.com/gpu."""
    names = set(trainer_job_names(runtime_template))
    for rjob in (runtime_template.get("spec") or {}).get("replicatedJobs") or []:
        if not isinstance(rjob, dict) or rjob.get("name") not in names:
            continue
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod.get("containers") or []:
            resources = (container or {}).get("resources") or {}
            for kind in ("limits", "requests"):
                for name in resources.get(kind) or {}:
                    if isinstance(name, str) and name.endswith("/gpu"):
                        return name
    return DEFAULT_GPU_RESOURCE


def placement_patch(
    runtime_template: Obj,
    *,
    node_selector: dict[str, str],
    tolerations: list[Obj],
    gpu_type: str | None,
    gpu_type_label: str,
) -> list[Obj]:
    """The replicatedJobs entries of the flags' runtimePatch: node selector and tolerations for
    every step (initializers run on the same pool), the GPU type for the trainer only."""
    trainers = set(trainer_job_names(runtime_template))
    if gpu_type is not None:
        _check_label_value("--gpu-type", gpu_type)
        _check_label_key("--gpu-type label", gpu_type_label)
        if not trainers:
            raise UsageError("--gpu-type: the runtime has no trainer replicated job to place")
    out: list[Obj] = []
    for rjob in (runtime_template.get("spec") or {}).get("replicatedJobs") or []:
        if not isinstance(rjob, dict) or not isinstance(rjob.get("name"), str):
            continue
        name = rjob["name"]
        selector = dict(node_selector)
        if gpu_type is not None and name in trainers:
            selector[gpu_type_label] = gpu_type
        pod: Obj = {}
        if selector:
            pod["nodeSelector"] = selector
        if tolerations:
            # A pod's tolerations are one atomic list: a patch replaces it, so the runtime's own
            # tolerations are repeated before the new ones.
            spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            merged = [dict(t) for t in spec.get("tolerations") or [] if isinstance(t, dict)]
            merged += [dict(t) for t in tolerations if t not in merged]
            pod["tolerations"] = merged
        if pod:
            out.append({"name": name, "template": {"spec": {"template": {"spec": pod}}}})
    return out
