"""The command line's flags on top of a TrainJob mapping: plain fields, runtime patches, and the
flags whose meaning depends on the runtime (fine-tuning, GPUs, placement).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import UsageError
from ktrain.inputs.documents import (
    Document,
    Path,
    load_documents,
    parse_model,
)
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry
from ktrain.service.job_file import read_text
from ktrain.service.requests import JobOverrides
from ktrain.service.runtimes import is_torchtune_runtime
from ktrain.util.jsondata import deep_copy

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.util.jsondata import Obj


def ensure(d: Obj, *keys: str) -> Obj:
    for k in keys:
        nxt = d.get(k)
        if not isinstance(nxt, dict):
            nxt = {}
            d[k] = nxt
        d = nxt
    return d


def _upsert_env(envs: list[Obj], name: str, value: str) -> None:
    for env in envs:
        if env.get("name") == name:
            env.clear()
            env.update({"name": name, "value": value})
            return
    envs.append({"name": name, "value": value})


def _patch_documents(paths: list[str]) -> list[tuple[Obj, Document, Path]]:
    """Each runtime patch of the --patch files, with its document and where the patch's
    `trainingRuntimeSpec` is in it (the root, for a bare trainingRuntimeSpec)."""
    patches: list[tuple[Obj, Document, Path]] = []
    used: set[str] = set()
    for i, path in enumerate(paths):
        docs = load_documents(read_text(path, "patch file"), path)
        for doc in docs:
            data = doc.data
            if not isinstance(data, dict):
                raise doc.error("a runtime patch must be a mapping")
            if "trainingRuntimeSpec" not in data and "manager" not in data:
                data = {"trainingRuntimeSpec": data}  # a bare trainingRuntimeSpec is fine too
            manager = data.get("manager")
            if not manager:
                manager = (
                    c.DEFAULT_PATCH_MANAGER
                    if c.DEFAULT_PATCH_MANAGER not in used
                    else f"{c.DEFAULT_PATCH_MANAGER}-{i + 1}"
                )
            used.add(str(manager))
            patch = {"manager": manager, **{k: v for k, v in data.items() if k != "manager"}}
            bare = data is not doc.data
            _check_patch(doc, patch, bare=bare)
            patches.append((patch, doc, () if bare else ("trainingRuntimeSpec",)))
    return patches


def _check_patch(doc: Document, patch: Obj, *, bare: bool) -> None:
    """A --patch file is checked against the RuntimePatch model with its own positions, so a
    typo is reported in the patch file, not somewhere in the job."""
    if bare:
        parse_model(doc, "TrainingRuntimeSpecPatch", what="runtime patch (trainingRuntimeSpec)")
    else:
        parse_model(
            Document(
                data=patch, file=doc.file, lines=doc.lines, positions=doc.positions, key_positions=doc.key_positions
            ),
            "RuntimePatch",
            what="runtime patch",
        )


def apply_overrides(
    data: Obj, ov: JobOverrides, runtime_kind: str | None, grafts: list[tuple[Path, Document, Path]] | None = None
) -> Obj:
    """Command-line flags on top of a TrainJob mapping (flags win over the file). Where each
    --patch file's patch lands is added to `grafts` (see Document.grafts).

    One function per group of flags, in this order; a new flag goes into its group's function
    (or a new one, called here)."""
    data = deep_copy(data)
    data.setdefault("apiVersion", c.TRAINER_API_VERSION)
    data.setdefault("kind", c.TRAINJOB_KIND)
    _set_identity(data, ov, runtime_kind)
    spec = ensure(data, "spec")
    _set_trainer(spec, ov)
    _set_initializers(spec, ov)
    patches = _patches_from_files(spec, ov, grafts)
    flag_patch = _flags_patch(data, ov)
    if flag_patch is not None:
        patches.append(flag_patch)
    if patches:
        spec.setdefault("runtimePatches", [])
        spec["runtimePatches"].extend(patches)
    return data


def _set_identity(data: Obj, ov: JobOverrides, runtime_kind: str | None) -> None:
    """--name, --namespace, --runtime (and its kind), --suspend/--no-suspend."""
    meta = ensure(data, "metadata")
    if ov.name:
        meta["name"] = ov.name
    if ov.namespace:
        current = meta.get("namespace")
        if current and current != ov.namespace:
            raise UsageError(
                f"the namespace from the provided object {current!r} does not match the namespace "
                f"{ov.namespace!r}. You must pass '--namespace={current}' to perform this operation."
            )
        meta["namespace"] = ov.namespace
    spec = ensure(data, "spec")
    if ov.runtime:
        ref = ensure(spec, "runtimeRef")
        ref["name"] = ov.runtime
        if runtime_kind:
            ref["kind"] = runtime_kind
    if ov.suspend is not None:
        spec["suspend"] = ov.suspend


def _set_trainer(spec: Obj, ov: JobOverrides) -> None:
    """--nodes (or --elastic's MAX), --nproc-per-node, --image, the command, --env, --requests/--limits."""
    nodes = ov.nodes
    if ov.elastic is not None:
        # JobSet cannot resize a running job: every node up to MAX is created (authoring/elastic.py).
        if nodes is not None and nodes != ov.elastic[1]:
            raise UsageError(f"--nodes {nodes} contradicts --elastic {ov.elastic[0]}:{ov.elastic[1]} (MAX nodes run)")
        nodes = ov.elastic[1]
    flags = (nodes is not None, ov.nproc_per_node is not None, ov.image, ov.command is not None, ov.env)
    if not any(flags) and not ov.requests and not ov.limits:
        return  # no `trainer` made where no flag sets one
    trainer = ensure(spec, "trainer")
    if nodes is not None:
        trainer["numNodes"] = nodes
    if ov.nproc_per_node is not None:
        trainer["numProcPerNode"] = ov.nproc_per_node
    if ov.image:
        trainer["image"] = ov.image
    if ov.command is not None:
        trainer["command"] = list(ov.command)
    if ov.env:
        envs = trainer.setdefault("env", [])
        for k, v in ov.env:
            _upsert_env(envs, k, v)
    if ov.requests or ov.limits:
        res = ensure(trainer, "resourcesPerNode")
        if ov.requests:
            ensure(res, "requests").update(ov.requests)
        if ov.limits:
            ensure(res, "limits").update(ov.limits)


def _set_initializers(spec: Obj, ov: JobOverrides) -> None:
    """--dataset/--dataset-secret, --model/--model-secret."""
    for kind, uri, secret in (("dataset", ov.dataset, ov.dataset_secret), ("model", ov.model, ov.model_secret)):
        if uri is not None or secret is not None:
            source = ensure(spec, "initializer", kind)
            if uri is not None:
                source["storageUri"] = uri
            if secret is not None:
                source["secretRef"] = {"name": secret}


def _patches_from_files(spec: Obj, ov: JobOverrides, grafts: list[tuple[Path, Document, Path]] | None) -> list[Obj]:
    """--patch: each file's runtime patch, after the job file's own; where each lands goes to `grafts`."""
    from_files = _patch_documents(ov.patch_files)
    first = len(spec.get("runtimePatches") or [])
    for offset, (_, doc, spec_path) in enumerate(from_files):
        if grafts is not None:
            here = ("spec", "runtimePatches", first + offset)
            grafts += [((*here, "trainingRuntimeSpec"), doc, spec_path), (here, doc, ())]
    return [patch for patch, _, _ in from_files]


def _flags_patch(data: Obj, ov: JobOverrides) -> Obj | None:
    """--label, --annotation and the queue flags (--kueue-queue, --kueue-priority-class, --queue):
    the runtime patch of manager `ktrain.io/cli-flags` that carries them to the JobSet, if any."""
    labels = dict(ov.labels)
    annotations = dict(ov.annotations)
    _kueue(data, ov, labels)
    if ov.queue is not None and ov.scheduler == "kai":
        from ktrain.authoring.scheduling import KAI_QUEUE_LABEL

        # KAI's pod-grouper reads the queue from the top owner's labels.
        labels[KAI_QUEUE_LABEL] = ov.queue
    elif ov.queue is not None:
        annotations[c.VOLCANO_QUEUE_ANNOTATION] = ov.queue
    flag_meta: Obj = {}
    if labels:
        flag_meta["labels"] = labels
    if annotations:
        flag_meta["annotations"] = annotations
    if not flag_meta:
        return None
    # Labels, annotations and the Volcano queue reach the JobSet only through a runtime
    # patch, as upstream expects (ENGINE.md §4.1, §7.2).
    return {"manager": f"{c.DEFAULT_PATCH_MANAGER}-flags", "trainingRuntimeSpec": {"template": {"metadata": flag_meta}}}


def _kueue(data: Obj, ov: JobOverrides, labels: dict[str, str]) -> None:
    """--kueue-queue / --kueue-priority-class: Kueue's labels on the TrainJob and (in `labels`) the
    JobSet; a queued job is created suspended."""
    if ov.kueue_queue is not None or ov.kueue_priority_class is not None:
        from ktrain.authoring.placement import kueue_labels

        # Kueue reads the queue and the WorkloadPriorityClass from the object it admits: the
        # TrainJob (--target trainjob) or the JobSet, which gets them through the flags' runtime
        # patch. Kueue skips a JobSet whose owner it already manages, so labelling both never
        # admits twice.
        kueue = kueue_labels(queue=ov.kueue_queue, priority_class=ov.kueue_priority_class)
        labels.update(kueue)
        ensure(data, "metadata").setdefault("labels", {}).update(kueue)
    if ov.kueue_queue is not None:
        if ov.suspend is False:
            raise UsageError(
                "--no-suspend with --kueue-queue: Kueue starts a queued job by resuming it once admitted "
                "(its webhook suspends it on create)",
                hint="drop --no-suspend; without Kueue, drop --kueue-queue",
            )
        # A queued job is created suspended, as Kueue's TrainJob guide and upstream's Kueue example
        # write it (examples/yaml/03-kueue-integration.yaml), and as Kueue's webhook would make it
        # anyway: the flag wins over a job file's `suspend: false`. The JobSet follows (ENGINE.md §9).
        ensure(data, "spec")["suspend"] = True


def apply_runtime_aware_flags(data: Obj, ov: JobOverrides, entry: RuntimeEntry, registry: RuntimeRegistry) -> Obj:
    """The flags whose meaning depends on the runtime: fine-tuning (torchtune runtimes only),
    the GPU resource `--gpus` sets, and which replicated jobs the placement flags reach."""
    from ktrain.authoring import placement

    runtime = entry.runtime
    template: Obj = {"spec": dict(runtime.spec.template.spec or {})}
    spec = data["spec"]
    if ov.fine_tuning is not None:  # empty too: the SDK's BuiltinTrainer(TorchTuneConfig()) is a fine-tuning job
        from ktrain.authoring import finetune

        if not is_torchtune_runtime(runtime):
            accepting = sorted(e.runtime.name for e in registry.entries() if is_torchtune_runtime(e.runtime))
            raise UsageError(
                f"fine-tuning flags need a torchtune runtime; {runtime.name!r} is not one "
                f"(label {c.LABEL_FRAMEWORK}: torchtune)",
                hint="runtimes that accept them: " + (", ".join(accepting) or "none known: see `ktrain runtime list`"),
            )
        trainer = ensure(spec, "trainer")
        command = trainer.get("command")
        if command is None:
            trainer["command"] = list(finetune.ENTRYPOINT)
        elif command != finetune.ENTRYPOINT:
            raise UsageError(
                f"fine-tuning flags configure `tune run`, but the trainer command is {command!r}",
                hint="leave out the command after `--` (or give exactly `-- tune run`)",
            )
        dataset_uri = ((spec.get("initializer") or {}).get("dataset") or {}).get("storageUri")
        args = finetune.torchtune_args(ov.fine_tuning, dataset_uri if isinstance(dataset_uri, str) else None)
        existing = trainer.get("args")
        trainer["args"] = finetune.merge_args(list(existing) if isinstance(existing, list) else [], args)
    if ov.gpus is not None:
        limits = ensure(ensure(spec, "trainer"), "resourcesPerNode", "limits")
        limits[placement.gpu_resource(template)] = str(ov.gpus)
    tolerations = [dict(t) for t in ov.tolerations]
    rjobs = placement.placement_patch(
        template,
        node_selector=ov.node_selector,
        tolerations=tolerations,
        gpu_type=ov.gpu_type,
        gpu_type_label=ov.gpu_type_label or placement.DEFAULT_GPU_TYPE_LABEL,
    )
    if rjobs:
        manager = f"{c.DEFAULT_PATCH_MANAGER}-flags"
        patches = spec.setdefault("runtimePatches", [])
        mine = next((p for p in patches if isinstance(p, dict) and p.get("manager") == manager), None)
        if mine is None:
            mine = {"manager": manager, "trainingRuntimeSpec": {}}
            patches.append(mine)
        mine.setdefault("trainingRuntimeSpec", {}).setdefault("template", {}).setdefault("spec", {})[
            "replicatedJobs"
        ] = rjobs
    return data
