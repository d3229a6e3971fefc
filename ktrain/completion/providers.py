"""Value providers: what to offer for an option's value or a positional argument.

Data-driven on purpose: an option gets values by its name, wherever it appears in the tree,
so a command or option added on another branch completes as soon as the tree is regenerated.
"""

from __future__ import annotations

from ktrain.completion.request import Answer, Request, canonical_name

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable

STEPS = ("dataset-initializer", "model-initializer", "launcher", "node")
RESOURCES = (
    ("nvidia.com/gpu", "NVIDIA GPU"),
    ("amd.com/gpu", "AMD GPU"),
    ("intel.com/gpu", "Intel GPU"),
    ("habana.ai/gaudi", "Intel Gaudi"),
    ("google.com/tpu", "Google TPU"),
    ("aws.amazon.com/neuron", "AWS Trainium / Inferentia"),
    ("cpu", "CPU"),
    ("memory", "memory"),
    ("ephemeral-storage", "local ephemeral storage"),
    ("hugepages-2Mi", "2 MiB huge pages"),
    ("hugepages-1Gi", "1 GiB huge pages"),
)
SHELL_NAMES = ("bash", "zsh", "fish", "powershell")
# Fixed vocabularies of options other branches add (kubectl spelling); harmless until they exist.
FIXED = {
    "--step": [(s, "") for s in STEPS],
    "--for": [("complete", ""), ("failed", ""), ("running", "")],
    "--cascade": [("foreground", ""), ("background", ""), ("orphan", "")],
    "--dry-run": [("client", "render only"), ("server", "server-side validation, nothing stored"), ("none", "")],
    "--target": [("jobset", "submit the rendered objects"), ("trainjob", "submit the TrainJob")],
    "--container": [("podman", ""), ("docker", "")],
    "--source": [("all", ""), ("cluster", ""), ("local", "")],
    "--runtime-kind": [("ClusterTrainingRuntime", "cluster-scoped"), ("TrainingRuntime", "in the job's namespace")],
    "--shell": [(s, "") for s in SHELL_NAMES],
    # Fine-tuning and placement (the values the SDK's TorchTuneConfig and kubectl accept).
    "--dtype": [("bf16", "bfloat16"), ("fp32", "float32")],
    "--loss": [("CEWithChunkedOutputLoss", "torchtune.modules.loss.CEWithChunkedOutputLoss")],
    "--dataset-source": [(f, "") for f in ("json", "csv", "parquet", "arrow", "text", "xml")],
    "--scheduler": [("default", "the cluster's default scheduler"), ("kai", "NVIDIA KAI Scheduler (extension)")],
    "--lora": [("default", "the SDK's LoraConfig defaults"), ("rank=", ""), ("alpha=", ""), ("modules=", "")],
    "--qlora": [("default", "the SDK's LoraConfig defaults"), ("rank=", ""), ("alpha=", "")],
    "--dora": [("default", "the SDK's LoraConfig defaults"), ("rank=", ""), ("alpha=", "")],
    "--toleration": [(f"nvidia.com/gpu:{e}", "") for e in ("NoSchedule", "PreferNoSchedule", "NoExecute")],
    # Only when the option lists no formats of its own (help text "a | b | c" or a Choice).
    "--output": [("yaml", ""), ("json", ""), ("name", "")],
}
FILE_OPTIONS = {
    "--filename",
    "--runtime-file",
    "--patch",
    "--values",
    "--kubeconfig",
    "--ssh-key",
    "--code",
    "--requirements",
}
DIR_OPTIONS = {"--runtimes-dir"}


def _runtime_names(req: Request) -> list[tuple[str, str]]:
    from ktrain.completion import values

    local = values.local_runtimes(req.given.get("--runtime-file", []), req.given.get("--runtimes-dir", []))
    out = dict(local)
    for name in values.cluster_values("runtimes", req.given):
        out.setdefault(name, "cluster")
    return sorted(out.items())


def _job_names(req: Request) -> list[tuple[str, str]]:
    from ktrain.completion import values

    return [(name, "") for name in values.cluster_values("jobs", req.given)]


def _contexts(req: Request) -> list[tuple[str, str]]:
    from ktrain.completion import values

    return [(name, ns) for name, ns in values.kubeconfig_contexts(req.given)]


def _namespaces(req: Request) -> list[tuple[str, str]]:
    from ktrain.completion import values

    names = {ns for _, ns in values.kubeconfig_contexts(req.given) if ns}
    names.add("default")
    # and the cluster's own (cached, refreshed in the background like job names; issue #19)
    given = {flag: v for flag, v in req.given.items() if flag != "--namespace"}
    names.update(values.cluster_values("namespaces", given))
    return [(n, "") for n in sorted(names)]


def _set_keys(req: Request) -> list[tuple[str, str]]:
    from ktrain.completion import values

    return [(key + "=", kind) for key, kind in values.set_keys()]


VALUE_PROVIDERS: dict[str, Callable[[Request], list[tuple[str, str]]]] = {
    "--runtime": _runtime_names,
    "--context": _contexts,
    "--namespace": _namespaces,
    "--set": _set_keys,
}
# Positional arguments: (top-level command, argument name) -> provider.
ARGUMENT_PROVIDERS: dict[tuple[str, str], Callable[[Request], list[tuple[str, str]]]] = {
    **{("runtime", arg): _runtime_names for arg in ("name", "names", "runtime")},
    **{("job", arg): _job_names for arg in ("name", "names", "job", "jobs", "job_name", "job_names")},
}


def option_values(req: Request, incomplete: str) -> Answer:
    opt = req.option or {}
    name = canonical_name(opt)
    if opt.get("choices"):
        return Answer(items=[(c, "") for c in opt["choices"]])
    if name in FIXED:
        return Answer(items=list(FIXED[name]))
    if name in FILE_OPTIONS:
        return Answer(directive="files")
    if name in DIR_OPTIONS:
        return Answer(directive="dirs")
    if name == "--resource":
        return Answer(directive="nospace", items=[(r + "=", d) for r, d in RESOURCES])
    if name == "--set":
        return Answer(directive="nospace", items=_set_keys(req))
    provider = VALUE_PROVIDERS.get(name)
    if provider is not None:
        return Answer(items=provider(req))
    return Answer()


def argument_values(req: Request, incomplete: str) -> Answer:
    arguments = req.node.get("arguments") or []
    if not arguments:
        return Answer()
    index = min(req.positional, len(arguments) - 1)
    argument = arguments[index]
    if index < req.positional and argument["nargs"] != -1:
        return Answer()
    group = req.path[0] if req.path else ""
    provider = ARGUMENT_PROVIDERS.get((group, argument["name"]))
    if provider is not None:
        return Answer(items=provider(req))
    return Answer(directive="files")
