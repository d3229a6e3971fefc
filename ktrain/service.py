"""Use cases: turn a job file and/or flags into a TrainJob, resolve its runtime, render.

Composes the loader, the registry and the engine; never prints.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine import RenderContext, RenderResult, render
from ktrain.engine.validation import runtime_not_found, validate_runtime_ref
from ktrain.errors import (
    InputError,
    RuntimeNotFoundError,
    UsageError,
    ValidationFailedError,
)
from ktrain.inputs.documents import (
    Document,
    Path,
    check_types,
    load_documents,
    locate_field_errors,
    parse_model,
)
from ktrain.inputs.registry import RuntimeEntry, RuntimeRegistry
from ktrain.util.jsondata import deep_copy, dumps
from ktrain.util.structs import field, struct

TYPE_CHECKING = False

if TYPE_CHECKING:  # the same interface; typeshed knows _sha2 and _sha256 for some Pythons only
    from hashlib import sha256
else:
    try:  # CPython's own SHA-256: hashlib would first load OpenSSL (4 ms of a cold render)
        from _sha2 import sha256  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256

if TYPE_CHECKING:
    from typing import Any

    from ktrain.api.runtime import TrainingRuntime
    from ktrain.api.trainjob import TrainJob
    from ktrain.authoring.finetune import FineTuning
    from ktrain.authoring.set_paths import Assignment
    from ktrain.convert import Conversion
    from ktrain.inputs.code_bundle import CodeBundle

    Obj = dict[str, Any]


@struct
class JobOverrides:
    """What the command line says about the job (every field optional)."""

    runtime: str | None = None
    runtime_kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    nodes: int | None = None
    nproc_per_node: int | None = None
    image: str | None = None
    command: list[str] | None = None
    env: list[tuple[str, str]] = field(default_factory=list)
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    dataset: str | None = None
    model: str | None = None
    dataset_secret: str | None = None
    model_secret: str | None = None
    queue: str | None = None
    suspend: bool | None = None
    patch_files: list[str] = field(default_factory=list)
    # `--values FILE` (template variables) and `--set PATH=VALUE` (job fields or template variables).
    values_files: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    # Fine-tuning (torchtune runtimes), as the Kubeflow SDK's TorchTuneConfig: authoring/finetune.py.
    fine_tuning: FineTuning | None = None
    # Placement and queues: authoring/placement.py.
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)
    gpus: int | None = None
    gpu_type: str | None = None
    gpu_type_label: str | None = None
    kueue_queue: str | None = None
    # Not expressible in a TrainJob: set on the rendered objects (authoring/scheduling.py).
    priority_class: str | None = None
    scheduler: str | None = None
    # Elastic torchrun (ktrain extension): authoring/elastic.py.
    elastic: tuple[int, int] | None = None
    max_restarts: int | None = None
    # `--code PATH`, `--code-include PATTERN`, `--pip PKG`, `--pip-index-url URL`: local code and
    # packages without building an image (inputs/code_bundle.py, authoring/code_launch.py).
    code: list[str] = field(default_factory=list)
    code_include: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    pip_index_urls: list[str] = field(default_factory=list)


@struct
class RenderRequest:
    file: str | None = None
    overrides: JobOverrides = field(default_factory=JobOverrides)
    ssh_secret: str | None = None
    allow_extensions: bool = False
    runtime_snapshot: bool = False
    # When neither -n nor the file names one: the kubeconfig context's namespace for `job create`.
    default_namespace: str = "default"
    # The files of overrides.code, once read (job_document reads them on first use); the Python
    # API passes its own (ktrain.train's function).
    code_bundle: CodeBundle | None = None
    # The job file's text when it does not come from a file (the Python API); `file` labels it.
    text: str | None = None
    # Warnings about the inputs found while reading them (e.g. a template value no variable uses):
    # they join the render's warnings.
    input_warnings: list[str] = field(default_factory=list)
    # Notes for stderr the render adds (a Training Operator v1 file converted in memory).
    notes: list[str] = field(default_factory=list)
    # --explain labels for the layers a converted v1 job supplied (see Conversion.source_labels).
    source_labels: dict[str, str] = field(default_factory=dict)


@struct
class RenderOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    result: RenderResult
    document: Document | None = None
    secret_printed: bool = False
    ctx: RenderContext | None = None  # what the engine was given (--explain renders again with it)


def read_text(path: str, what: str = "file") -> str:
    """An input file's text (`-`: stdin), bounded and checked: see ktrain.inputs.reading."""
    from ktrain.inputs.reading import read_input

    return read_input(path, what=what)


def load_job_document(
    path: str,
    values_files: list[str] | None = None,
    template_sets: list[Assignment] | None = None,
    warnings: list[str] | None = None,
    text: str | None = None,
) -> Document:
    """The TrainJob document of a file (or of `text`, labelled `path`); a template is rendered
    first with the given values."""
    return load_job_input(path, values_files, template_sets, warnings=warnings, text=text)[0]


def same_file_runtimes(doc: Document) -> list[RuntimeEntry]:
    """(Cluster)TrainingRuntime documents that came in the job's own file (what `ktrain job
    convert` prints with a TrainJob): they win over every other source for this job."""
    from ktrain.inputs.registry import load_runtime_documents

    return load_runtime_documents(doc.siblings, "file", doc.file)


def load_job_input(
    path: str,
    values_files: list[str] | None = None,
    template_sets: list[Assignment] | None = None,
    runtime: str | None = None,
    *,
    warnings: list[str] | None = None,
    text: str | None = None,
) -> tuple[Document, Conversion | None]:
    """The TrainJob document of a file (or of `text`, labelled `path`), and the conversion that
    made it when the file holds a Training Operator v1 job instead (converted in memory, its
    positions kept for errors)."""
    from ktrain.authoring.templating import is_template

    label = "<stdin>" if path == "-" else path
    if text is None:
        text = read_text(path, "job file")
    if is_template(path, text):
        from ktrain.authoring.set_paths import nest, template_value
        from ktrain.authoring.templating import load_values, render_template, rendered_label

        values = load_values([(f, read_text(f, "values file")) for f in values_files or []])
        for assignment in template_sets or []:
            nest(values, *template_value(assignment))
        rendered = render_template(text, label, values)
        if template_sets and warnings is not None:
            from ktrain.authoring.templating import unused_values

            warnings += unused_values(text, label, [str(a.parts[0]) for a in template_sets])
        docs = load_documents(rendered, rendered_label(label, text, rendered))
    else:
        _reject_template_inputs(label, values_files, template_sets)
        docs = load_documents(text, label)
    jobs = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == c.TRAINJOB_KIND]
    if not jobs:
        from ktrain.convert import convert_documents, job_paths

        if any(job_paths(d) for d in docs):
            conversions = convert_documents(docs, runtime=runtime)
            if len(conversions) > 1:
                second = conversions[1]
                raise second.document.error(
                    f"more than one job in this file ({len(conversions)}); ktrain renders one job at a time",
                    second.base,
                    hint="split the file, or see them all with `ktrain job convert -f FILE`",
                )
            return converted_document(conversions[0]), conversions[0]
        if docs:
            raise docs[0].error(
                "no TrainJob in this file (kind: TrainJob, apiVersion: trainer.kubeflow.org/v1alpha1)", ("kind",)
            )
        raise InputError("the file is empty", file=path)
    if len(jobs) > 1:
        raise jobs[1].error("more than one TrainJob in this file; ktrain renders one job at a time")
    jobs[0].siblings = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") in c.RUNTIME_KINDS]
    return jobs[0], None


def converted_document(conv: Conversion) -> Document:
    """A converted job as a Document whose positions point at the v1 fields it came from."""
    src = conv.document
    positions: dict[Path, tuple[int, int]] = {}
    key_positions: dict[Path, tuple[int, int]] = {}
    for here, there in conv.sources.items():
        full = (*conv.base, *there)
        if full in src.positions:
            positions[here] = src.positions[full]
        if full in src.key_positions:
            key_positions[here] = src.key_positions[full]
    start = src.positions.get(conv.base) or src.key_positions.get(conv.base)
    if start is not None:
        positions.setdefault((), start)
    return Document(
        data=deep_copy(conv.trainjob),
        file=src.file,
        lines=src.lines,
        positions=positions,
        key_positions=key_positions,
    )


def converted_runtime_entry(conv: Conversion) -> RuntimeEntry | None:
    """The TrainingRuntime generated for a converted job, as a registry entry."""
    if conv.runtime is None:
        return None
    src = conv.document
    positions: dict[Path, tuple[int, int]] = {}
    key_positions: dict[Path, tuple[int, int]] = {}
    for here, there in conv.runtime_sources:
        full = (*conv.base, *there)
        for table, out in ((src.positions, positions), (src.key_positions, key_positions)):
            for path, where in table.items():
                if path[: len(full)] == full:
                    key = (*here, *path[len(full) :])  # (not out[(*a, *b)]: Python 3.11 syntax)
                    out[key] = where
    # Errors in the generated runtime point at the v1 pod template they came from.
    doc = Document(data=conv.runtime, file=src.file, lines=src.lines, positions=positions, key_positions=key_positions)
    runtime = parse_model(doc, "TrainingRuntime", what=c.TRAINING_RUNTIME_KIND)
    return RuntimeEntry(runtime=runtime, source="converted", path=conv.document.file, document=doc)


def conversion_note(conv: Conversion) -> str:
    how = (
        f"a TrainingRuntime {conv.runtime_name} generated from its pod templates"
        if conv.runtime is not None
        else f"runtime {conv.runtime_name}"
    )
    return (
        f"converted {conv.kind} {conv.name} to a TrainJob on {how} "
        f"(see `ktrain job convert -f {conv.document.file}` for what changed)"
    )


def _reject_template_inputs(
    file: str | None, values_files: list[str] | None, template_sets: list[Assignment] | None
) -> None:
    """--values and non-job --set keys only mean something for a template."""
    what = f"{file} is not a template" if file else "there is no job template (-f)"
    if values_files:
        raise UsageError(
            f"--values needs a job template: {what}", hint="a template is a *.j2 file or one that uses {{ ... }}"
        )
    for assignment in template_sets or []:
        from ktrain.authoring.set_paths import closest_field

        head = str(assignment.parts[0])
        close = closest_field(head)
        raise InputError(
            f"{head!r} is not a TrainJob field, and {what} that could use it as a value",
            file="--set",
            column=1,
            source_line=assignment.text,
            hint=f"did you mean {close!r}?"
            if close
            else "job fields: trainer.numNodes, trainer.env[name=X].value, runtimeRef.name, ...",
        )


def _ensure(d: Obj, *keys: str) -> Obj:
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
    --patch file's patch lands is added to `grafts` (see Document.grafts)."""
    data = deep_copy(data)
    data.setdefault("apiVersion", c.TRAINER_API_VERSION)
    data.setdefault("kind", c.TRAINJOB_KIND)
    meta = _ensure(data, "metadata")
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
    spec = _ensure(data, "spec")
    if ov.runtime:
        ref = _ensure(spec, "runtimeRef")
        ref["name"] = ov.runtime
        if runtime_kind:
            ref["kind"] = runtime_kind
    if ov.suspend is not None:
        spec["suspend"] = ov.suspend
    nodes = ov.nodes
    if ov.elastic is not None:
        # JobSet cannot resize a running job: every node up to MAX is created (authoring/elastic.py).
        if nodes is not None and nodes != ov.elastic[1]:
            raise UsageError(f"--nodes {nodes} contradicts --elastic {ov.elastic[0]}:{ov.elastic[1]} (MAX nodes run)")
        nodes = ov.elastic[1]
    trainer_set = any(
        [
            nodes is not None,
            ov.nproc_per_node is not None,
            ov.image,
            ov.command is not None,
            ov.env,
            ov.requests,
            ov.limits,
        ]
    )
    if trainer_set:
        trainer = _ensure(spec, "trainer")
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
            res = _ensure(trainer, "resourcesPerNode")
            if ov.requests:
                _ensure(res, "requests").update(ov.requests)
            if ov.limits:
                _ensure(res, "limits").update(ov.limits)
    for kind, uri, secret in (("dataset", ov.dataset, ov.dataset_secret), ("model", ov.model, ov.model_secret)):
        if uri is not None or secret is not None:
            source = _ensure(spec, "initializer", kind)
            if uri is not None:
                source["storageUri"] = uri
            if secret is not None:
                source["secretRef"] = {"name": secret}
    from_files = _patch_documents(ov.patch_files)
    patches = [patch for patch, _, _ in from_files]
    first = len(spec.get("runtimePatches") or [])
    for offset, (_, doc, spec_path) in enumerate(from_files):
        if grafts is not None:
            here = ("spec", "runtimePatches", first + offset)
            grafts += [((*here, "trainingRuntimeSpec"), doc, spec_path), (here, doc, ())]
    flag_meta: Obj = {}
    labels = dict(ov.labels)
    if ov.kueue_queue is not None:
        # Kueue reads the queue from the object it admits: the TrainJob (--target trainjob) or
        # the JobSet, which gets it through the flags' runtime patch. Kueue skips a JobSet whose
        # owner it already manages, so labelling both never admits twice.
        labels[c.KUEUE_QUEUE_LABEL] = ov.kueue_queue
        meta.setdefault("labels", {})[c.KUEUE_QUEUE_LABEL] = ov.kueue_queue
    annotations = dict(ov.annotations)
    if ov.queue is not None and ov.scheduler == "kai":
        from ktrain.authoring.scheduling import KAI_QUEUE_LABEL

        # KAI's pod-grouper reads the queue from the top owner's labels.
        labels[KAI_QUEUE_LABEL] = ov.queue
    elif ov.queue is not None:
        annotations[c.VOLCANO_QUEUE_ANNOTATION] = ov.queue
    if labels:
        flag_meta["labels"] = labels
    if annotations:
        flag_meta["annotations"] = annotations
    if flag_meta:
        # Labels, annotations and the Volcano queue reach the JobSet only through a runtime
        # patch, as upstream expects (ENGINE.md §4.1, §7.2).
        patches.append(
            {
                "manager": f"{c.DEFAULT_PATCH_MANAGER}-flags",
                "trainingRuntimeSpec": {"template": {"metadata": flag_meta}},
            }
        )
    if patches:
        spec.setdefault("runtimePatches", [])
        spec["runtimePatches"].extend(patches)
    return data


def _is_torchtune_runtime(runtime: TrainingRuntime) -> bool:
    labels = runtime.metadata.labels or {}
    return labels.get(c.LABEL_FRAMEWORK) == "torchtune"


def apply_runtime_aware_flags(data: Obj, ov: JobOverrides, entry: RuntimeEntry, registry: RuntimeRegistry) -> Obj:
    """The flags whose meaning depends on the runtime: fine-tuning (torchtune runtimes only),
    the GPU resource `--gpus` sets, and which replicated jobs the placement flags reach."""
    from ktrain.authoring import placement

    runtime = entry.runtime
    template: Obj = {"spec": dict(runtime.spec.template.spec or {})}
    spec = data["spec"]
    if ov.fine_tuning is not None and not ov.fine_tuning.is_empty():
        from ktrain.authoring import finetune

        if not _is_torchtune_runtime(runtime):
            accepting = sorted(e.runtime.name for e in registry.entries() if _is_torchtune_runtime(e.runtime))
            raise UsageError(
                f"fine-tuning flags need a torchtune runtime; {runtime.name!r} is not one "
                f"(label {c.LABEL_FRAMEWORK}: torchtune)",
                hint="runtimes that accept them: " + (", ".join(accepting) or "none known: see `ktrain runtime list`"),
            )
        trainer = _ensure(spec, "trainer")
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
        limits = _ensure(_ensure(spec, "trainer"), "resourcesPerNode", "limits")
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


def _runtime_trainer_command(runtime: TrainingRuntime) -> list[str]:
    from ktrain.api.base import runtime_trainer_container

    command = runtime_trainer_container(runtime.spec.template.spec or {}).get("command")
    return [str(w) for w in command] if isinstance(command, list) else []


def _apply_code(data: Obj, request: RenderRequest, entry: RuntimeEntry) -> Obj:
    """`--code` mounts the files through a runtime patch; `--code`/`--pip` wrap the trainer
    command (authoring/code_launch.py). The same TrainJob serves both targets."""
    from ktrain.authoring import code_launch
    from ktrain.inputs import code_bundle

    ov = request.overrides
    runtime = entry.runtime
    spec = data["spec"]
    trainer = spec.get("trainer") if isinstance(spec.get("trainer"), dict) else None
    command = trainer.get("command") if trainer else None
    if command == ["tune", "run"] or (command is None and _is_torchtune_runtime(runtime)):
        raise UsageError(
            "--code/--pip cannot wrap `tune run`: torchtune recipes run from the image",
            hint="use a torch runtime for your own training code",
        )
    if ov.pip and runtime.spec.ml_policy is not None and runtime.spec.ml_policy.mpi is not None:
        raise UsageError(
            "--pip on an MPI runtime would install on the launcher only: its workers start sshd, "
            "which ktrain does not wrap",
            hint="install the packages in the image (--code works on MPI runtimes)",
        )
    if command is None:
        command = _runtime_trainer_command(runtime)
    trainer = _ensure(spec, "trainer")
    if ov.code and request.code_bundle is None:
        request.code_bundle = code_bundle.collect(ov.code, ov.code_include)
    if request.code_bundle is not None:
        maps = code_bundle.config_maps(request.code_bundle, data["metadata"]["name"], data["metadata"]["namespace"])
        volume = code_bundle.volume(request.code_bundle, maps)
        template: Obj = {"spec": dict(runtime.spec.template.spec or {})}
        digest = request.code_bundle.digest()
        size = request.code_bundle.size
        note = (
            f"--code: {len(request.code_bundle.files)} files, {size / 1024:.1f} KiB in {len(maps)} ConfigMap"
            f"{'s' if len(maps) > 1 else ''} ({maps[0]['metadata']['name']}{', ...' if len(maps) > 1 else ''}), "
            f"mounted at {code_bundle.MOUNT_PATH}"
        )
        if note not in request.notes:
            request.notes.append(note)
        patch = code_launch.mount_patch(template, volume, code_bundle.MOUNT_PATH, digest)
        spec.setdefault("runtimePatches", []).append(patch)
        data["metadata"].setdefault("annotations", {})[code_launch.CODE_ANNOTATION] = digest
    trainer["command"] = code_launch.wrap(
        [str(w) for w in command],
        code_dir=code_bundle.MOUNT_PATH if request.code_bundle is not None else None,
        packages=list(ov.pip),
        index_urls=list(ov.pip_index_urls),
    )
    return data


def code_objects(request: RenderRequest, job_name: str, namespace: str) -> list[Obj]:
    """The code ConfigMaps of `--code` (empty without it): they go with the job's objects."""
    if request.code_bundle is None:
        return []
    from ktrain.inputs import code_bundle

    return code_bundle.config_maps(request.code_bundle, job_name, namespace)


def _max_name_length(runtime: TrainingRuntime, data: Obj) -> int:
    """Longest TrainJob name for which JobSet's job and pod names stay <= 63 chars (§11.4)."""
    trainer = (data.get("spec") or {}).get("trainer") or {}
    nodes = trainer.get("numNodes") if isinstance(trainer.get("numNodes"), int) else None
    worst = 0
    for rjob in runtime.spec.template.spec.get("replicatedJobs") or []:
        par = ((rjob.get("template") or {}).get("spec") or {}).get("parallelism") or 1
        count = max(nodes or 1, runtime.spec.ml_policy.num_nodes or 1 if runtime.spec.ml_policy else 1, par)
        replicas = rjob.get("replicas") or 1
        worst = max(worst, len(str(rjob.get("name"))) + len(str(replicas - 1)) + len(str(max(count - 1, 0))) + 9)
    return min(63, 63 - worst)


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def name_prefix(runtime_name: str) -> str:
    """The start of a derived job name: the runtime's name in lower case, each run of other
    characters than [a-z0-9-] made one `-`, trimmed of `-`, without a `-distributed` ending
    (`re.sub` spelled out: the render path does not compile regular expressions)."""
    out: list[str] = []
    in_run = False
    for ch in runtime_name.lower():
        if ch in _NAME_CHARS:
            out.append(ch)
            in_run = False
        elif not in_run:
            out.append("-")
            in_run = True
    prefix = "".join(out).strip("-")
    if prefix.endswith("-distributed"):
        prefix = prefix[: -len("-distributed")]
    return prefix or "job"


def derive_name(runtime: TrainingRuntime, data: Obj) -> str:
    """A stable name from the job's content: same input, same name (GitOps-friendly)."""
    digest = sha256(dumps(data.get("spec"), sort_keys=True).encode()).hexdigest()[:8]
    prefix = name_prefix(runtime.name)
    if not prefix[0].isalpha():
        prefix = "job-" + prefix
    limit = max(_max_name_length(runtime, data), 10)
    room = limit - len(digest) - 1
    prefix = prefix[:room].rstrip("-") if room > 0 else ""
    return f"{prefix}-{digest}" if prefix else f"j{digest}"


def resolve_runtime(
    registry: RuntimeRegistry,
    data: Obj,
    override: str | None,
    doc: Document | None = None,
    *,
    kind_chosen: bool = False,
) -> RuntimeEntry:
    """The runtime the TrainJob names, looked up by kind and name as the TrainJob webhook does.

    The kind is `spec.runtimeRef.kind` (CRD default ClusterTrainingRuntime). With `--runtime NAME`
    it is whichever kind the highest-precedence source holds, unless `kind_chosen` (the kind was
    set for this command: `--runtime-kind`, `--set runtimeRef.kind=...`). A runtime of that name found only under
    the other kind, or held under the other kind by a `--runtime-file`, refuses the job with the
    webhook's not-found message (upstream `pkg/runtime/core/{,cluster}trainingruntime.go`
    ValidateObjects), pointing at `runtimeRef.kind`."""
    ref = (data.get("spec") or {}).get("runtimeRef") or {}
    name = override or ref.get("name")
    if not name:
        raise UsageError(
            "no runtime given: pass --runtime NAME or set spec.runtimeRef.name in the job file",
            hint="see `ktrain runtime list`",
        )
    if len(str(name)) > 253:  # the CRD's maxLength; no runtime can have such a name
        message = "Too long: may not be more than 253 bytes"
        if override or doc is None:
            raise InputError(f"--runtime: {message}", file="--runtime")
        raise doc.error(f"spec.runtimeRef.name: {message}", ("spec", "runtimeRef", "name"))
    name = str(name)
    kind = None if override and not kind_chosen else (ref.get("kind") or c.CLUSTER_TRAINING_RUNTIME_KIND)
    entry = registry.find(name, kind)
    if kind is not None and kind not in c.RUNTIME_KINDS:
        # an unsupported kind: validate_runtime_ref reports the webhook's "unsupported runtime"
        entry = entry or registry.find(name)
    elif kind is not None:
        other = registry.find(name, next(k for k in c.RUNTIME_KINDS if k != kind))
        if other is not None and (entry is None or (other.source == "file" and entry.source != "file")):
            raise _kind_mismatch(kind, name, other, doc, stated=bool(ref.get("kind")))
    if entry is None:
        try:
            return registry.get(name, kind)
        except RuntimeNotFoundError as exc:
            if kind in c.RUNTIME_KINDS:
                # The job file names the runtime: say it as the TrainJob webhook does (V2/V3).
                exc.message = f"{exc.message}\n{runtime_not_found(kind, name)}"
                exc.args = (exc.message,)
            if doc is not None and not override:  # the name came from the file: point at it
                line, col = doc.locate(("spec", "runtimeRef", "name"))
                if line is not None:
                    exc.at(doc.file, line, col, doc.source_line(line))
            raise
    return entry


def _kind_mismatch(
    kind: str, name: str, other: RuntimeEntry, doc: Document | None, *, stated: bool
) -> RuntimeNotFoundError:
    """The webhook's refusal of a runtimeRef whose kind names no runtime we have, while a runtime
    of that name exists under the other kind."""
    where = f"{other.path} holds" if other.source == "file" and other.path else f"there is ({other.origin})"
    hint = (
        f"{where} a {other.runtime.kind} named {name!r}, not a {kind}: set spec.runtimeRef.kind: {other.runtime.kind}"
    )
    if not stated:
        hint += f" (runtimeRef.kind defaults to {c.CLUSTER_TRAINING_RUNTIME_KIND})"
    exc = RuntimeNotFoundError(f"{kind} {name!r} not found\n{runtime_not_found(kind, name)}", hint=hint)
    if doc is not None:
        line, col = doc.locate(("spec", "runtimeRef", "kind"))
        if line is not None:
            exc.at(doc.file, line, col, doc.source_line(line))
    return exc


def build_job(request: RenderRequest, registry: RuntimeRegistry) -> tuple[TrainJob, RuntimeEntry, Document | None]:
    doc, entry = job_document(request, registry)
    job = parse_model(doc, "TrainJob", what="TrainJob")
    # without a file, errors can still point into --patch files
    return job, entry, (doc if request.file or doc.grafts else None)


def job_document(request: RenderRequest, registry: RuntimeRegistry) -> tuple[Document, RuntimeEntry]:
    """The TrainJob mapping as it will be submitted (file, template, --set and flags applied,
    name derived), with the file's positions for errors; and its runtime."""
    ov = request.overrides
    doc: Document | None = None
    job_sets: list[Assignment] = []
    template_sets: list[Assignment] = []
    if ov.sets:  # setpath is loaded only when --set is used
        from ktrain.authoring.set_paths import is_job_path, parse_assignment

        for assignment in map(parse_assignment, ov.sets):
            (job_sets if is_job_path(assignment.parts) else template_sets).append(assignment)
    original = None
    if request.file:
        doc, conversion = load_job_input(
            request.file, ov.values_files, template_sets, ov.runtime, warnings=request.input_warnings, text=request.text
        )
        if doc.siblings:
            registry.add_converted(same_file_runtimes(doc))
        if conversion is not None:
            entry_rt = converted_runtime_entry(conversion)
            if entry_rt is not None:
                registry.add_converted([entry_rt])
            note = conversion_note(conversion)
            if note not in request.notes:
                request.notes.append(note)
            request.source_labels = conversion.source_labels()
        # The flags below read and write into the file's mapping: its types must hold first.
        check_types(doc, "TrainJob", what="TrainJob")
        data: Obj = doc.data
        original = deep_copy(data)
    else:
        _reject_template_inputs(None, ov.values_files, template_sets)
        data = {}
    for assignment in job_sets:
        from ktrain.authoring.set_paths import apply_assignment

        apply_assignment(data, assignment, "TrainJob")
    if job_sets:
        check_types(doc if doc is not None else Document(data=data, file="--set"), "TrainJob", what="TrainJob")
    if not request.file and not ov.runtime and not job_sets:
        from_files = [e.runtime.name for e in registry.all_entries() if e.source == "file"]
        hint = "e.g. --runtime torch-distributed --nodes 2 -- torchrun train.py"
        if from_files:  # --runtime-file only loads runtimes; --runtime picks one (issue #19)
            hint = "--runtime-file defines " + ", ".join(from_files) + f": pick one with --runtime {from_files[0]}"
        raise UsageError("no job given: pass a job file with -f, or --runtime NAME", hint=hint)
    kind_chosen = False  # a kind chosen for this command (--runtime-kind, --set runtimeRef.kind) is honoured
    if ov.runtime_kind:
        if ov.runtime_kind not in c.RUNTIME_KINDS:
            raise UsageError(
                f"--runtime-kind must be {' or '.join(c.RUNTIME_KINDS)}, got {ov.runtime_kind!r}",
            )
        _ensure(data, "spec", "runtimeRef")["kind"] = ov.runtime_kind
        kind_chosen = True
    elif job_sets:
        from ktrain.authoring.set_paths import absolute

        kind_chosen = any(absolute(a.parts) == ("spec", "runtimeRef", "kind") for a in job_sets)
    # A namespaced TrainingRuntime is looked up where the job will live (-n, else the file's).
    meta_ns = (data.get("metadata") or {}).get("namespace") if isinstance(data.get("metadata"), dict) else None
    registry.use_namespace(str(ov.namespace or meta_ns or request.default_namespace))
    entry = resolve_runtime(registry, data, ov.runtime, doc, kind_chosen=kind_chosen)
    # The runtime's own rules first: deriving a name below reads into its template.
    check_runtime(entry, allow_extensions=request.allow_extensions)
    grafts: list[tuple[Path, Document, Path]] = []
    data = apply_overrides(data, ov, entry.runtime.kind if ov.runtime else None, grafts)
    if ov.scheduler is not None:
        from ktrain.authoring.scheduling import check_scheduler

        policy = entry.runtime.spec.pod_group_policy
        gang = None
        if policy is not None:
            gang = (
                "coscheduling" if policy.coscheduling is not None else "volcano" if policy.volcano is not None else None
            )
        check_scheduler(ov.scheduler, allow_extensions=request.allow_extensions, runtime_gang=gang)
    if ov.fine_tuning is not None or ov.node_selector or ov.tolerations or ov.gpus is not None or ov.gpu_type:
        data = apply_runtime_aware_flags(data, ov, entry, registry)
    meta = data["metadata"]
    if not meta.get("name"):
        meta["name"] = derive_name(entry.runtime, data)
    meta.setdefault("namespace", request.default_namespace)
    if ov.code or ov.pip or request.code_bundle is not None:
        data = _apply_code(data, request, entry)
    if doc is not None:
        return Document(
            data=data,
            file=doc.file,
            lines=doc.lines,
            positions=doc.positions,
            key_positions=doc.key_positions,
            original=original,
            grafts=grafts,
        ), entry
    return Document(data=data, file="<flags>", grafts=grafts), entry


def check_runtime(entry: RuntimeEntry, *, allow_extensions: bool) -> None:
    """The runtime's own CRD and webhook rules, reported against the runtime's file (the engine
    checks them again; here they are located where the user can fix them)."""
    from ktrain.engine.validation import (
        validate_runtime_schema,
        validate_runtime_webhook,
    )

    runtime = entry.runtime
    errors = validate_runtime_schema(runtime, allow_extensions=allow_extensions) + validate_runtime_webhook(runtime)
    if errors:
        exc = ValidationFailedError(errors, subject=f"{runtime.kind} {runtime.name}")
        if entry.document is not None:
            locate_field_errors(exc, entry.document)
        raise exc


def _is_runtime_path(path: str) -> bool:
    # A TrainJob has no spec.template/mlPolicy/podGroupPolicy: such paths are the runtime's.
    return path.startswith(("spec.template", "spec.mlPolicy", "spec.podGroupPolicy"))


def check_ssh_secret(name: str | None) -> None:
    """--ssh-secret names a Secret the pods mount: a DNS-1123 subdomain, as pod validation says."""
    from ktrain.engine.validation import dns1123_subdomain_errors

    if name is None:
        return
    problems = dns1123_subdomain_errors(name) if name else ["Required value"]
    if problems:
        raise InputError(
            f'Invalid value: "{name[:300]}": ' + "; ".join(problems),
            file="--ssh-secret",
            column=1,
            source_line=name[:300],
        )


def render_request(request: RenderRequest, registry: RuntimeRegistry) -> RenderOutcome:
    check_ssh_secret(request.ssh_secret)
    job, entry, doc = build_job(request, registry)  # the runtime is checked there too
    errors = validate_runtime_ref(job, entry.runtime)
    if errors:
        exc = ValidationFailedError(errors)
        if doc is not None:
            locate_field_errors(exc, doc)
        raise exc
    needs_key = (
        entry.runtime.spec.ml_policy is not None
        and entry.runtime.spec.ml_policy.mpi is not None
        and request.ssh_secret is None
    )
    ssh_key = None
    if needs_key:
        from ktrain.inputs.ssh_keys import generate_ssh_key_pair

        ssh_key = generate_ssh_key_pair()
    snapshot_text = None
    if request.runtime_snapshot:
        from ktrain.output.yamltext import dump

        snapshot_text = dump(entry.runtime.to_dict())
    ctx = RenderContext(
        ssh_key=ssh_key,
        ssh_secret_name=request.ssh_secret,
        allow_extensions=request.allow_extensions,
        runtime_snapshot=request.runtime_snapshot,
        runtime_snapshot_text=snapshot_text,
    )
    try:
        result = render(job, entry.runtime, ctx)
    except ValidationFailedError as exc:
        # Runtime schema errors point into the runtime's file, everything else into the job's.
        if doc is not None:
            # JobSet errors name JobSet paths: only metadata.name also exists in the TrainJob.
            in_job = (
                (lambda e: e.path.startswith("metadata"))
                if exc.subject == "JobSet"
                else (lambda e: not _is_runtime_path(e.path))
            )
            locate_field_errors(exc, doc, only=in_job)
        if entry.document is not None:
            locate_field_errors(exc, entry.document, only=lambda e: _is_runtime_path(e.path))
        raise
    if request.input_warnings:
        result.warnings[:0] = [n for n in request.input_warnings if n not in result.warnings]
    ov = request.overrides
    if ov.elastic is not None or ov.max_restarts is not None:
        from ktrain.authoring import elastic

        if ov.elastic is None:
            raise UsageError("--max-restarts needs --elastic MIN:MAX")
        if not request.allow_extensions:
            raise UsageError(
                "--elastic is a ktrain extension (upstream Trainer has no elastic policy)",
                hint="add --allow-extensions to use it",
            )
        elastic.apply(result.objects, min_nodes=ov.elastic[0], max_nodes=ov.elastic[1], max_restarts=ov.max_restarts)
    if ov.priority_class is not None or ov.scheduler is not None:
        from ktrain.authoring import scheduling

        scheduling.apply(result.objects, priority_class=ov.priority_class, scheduler=ov.scheduler)
    if request.code_bundle is not None:
        # The code goes first: its ConfigMaps must exist before the pods that mount them.
        result.objects[:0] = code_objects(request, job.name, job.namespace)
    secret_printed = any(o["kind"] == "Secret" and o.get("type") == "kubernetes.io/ssh-auth" for o in result.objects)
    return RenderOutcome(job=job, runtime=entry, result=result, document=doc, secret_printed=secret_printed, ctx=ctx)


def render_resolving(
    request: RenderRequest,
    registry: RuntimeRegistry,
    options: Any,
    *,
    cluster: Any = None,
    prefer_cluster: bool = False,
    run: Any = None,
) -> tuple[Any, list[str]]:
    """`render_request` (or `run`, e.g. `validate_request`), with runtimes from the cluster where
    the caller wants them.

    - `cluster` given (job create): the cluster's runtimes win over local ones of the same name,
      except a `--runtime-file` (the user named that file for this job).
    - `prefer_cluster` (render with --kubeconfig/--context): the same, but an unreachable
      cluster is only a warning.
    - otherwise local runtimes are used, and the cluster (when a kubeconfig exists) is asked
      only for a name that is not found locally.
    """
    # ktrain.cluster is imported only where the cluster is asked: not for a runtime found locally
    use = run or render_request
    warnings: list[str] = []
    if cluster is not None:
        from ktrain.cluster.runtimes import add_cluster_runtimes

        # Runtimes we may not list (403) matter only when the name is then not found at all.
        unreadable = add_cluster_runtimes(registry, cluster, prefer=True)
        try:
            return use(request, registry), warnings
        except RuntimeNotFoundError as exc:
            if unreadable:
                exc.hint = "; ".join([*([exc.hint] if exc.hint else []), *unreadable])
            raise
    if prefer_cluster:
        from ktrain.cluster.runtimes import try_add_cluster_runtimes

        warnings += try_add_cluster_runtimes(registry, options, prefer=True, request=request)
    try:
        return use(request, registry), warnings
    except RuntimeNotFoundError:
        from ktrain.cluster.runtimes import kubeconfig_available, try_add_cluster_runtimes

        if prefer_cluster or not kubeconfig_available(options.kubeconfig):
            raise
        fallback = try_add_cluster_runtimes(registry, options, prefer=False, request=request)
        try:
            return use(request, registry), warnings
        except RuntimeNotFoundError as exc:
            if fallback:
                exc.hint = f"{exc.hint}; {fallback[0]}" if exc.hint else fallback[0]
            raise


@struct
class ValidateOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    warnings: list[str]


def validate_request(request: RenderRequest, registry: RuntimeRegistry) -> ValidateOutcome:
    """Offline validation: the TrainJob JSON Schema first, then everything the engine checks
    (CRD rules, webhooks, plugins). Raises ValidationFailedError with every problem found."""
    from ktrain.authoring.json_schemas import schema_errors
    from ktrain.engine import SshKeyPair

    check_ssh_secret(request.ssh_secret)
    doc, entry = job_document(request, registry)
    located = schema_errors(doc, "trainjob.schema.json")
    if located:
        exc = ValidationFailedError([err for err, _ in located])
        for i, (_, where) in enumerate(located):
            if where is not None:
                exc.locations[i] = where
        raise exc
    job = parse_model(doc, "TrainJob", what="TrainJob")
    errors = validate_runtime_ref(job, entry.runtime)
    # The output is thrown away, so a placeholder key pair stands in for a generated one.
    ctx = RenderContext(
        ssh_key=SshKeyPair(b"<validate>", b"<validate>\n"),
        ssh_secret_name=request.ssh_secret,
        allow_extensions=request.allow_extensions,
    )
    try:
        if errors:
            raise ValidationFailedError(errors)
        result = render(job, entry.runtime, ctx)
        require_admissible(result)
    except ValidationFailedError as exc:
        locate_field_errors(exc, doc)  # the job file's lines, and --patch files'
        raise
    return ValidateOutcome(job=job, runtime=entry, warnings=[*request.input_warnings, *result.warnings])


def require_admissible(result: RenderResult) -> None:
    """What JobSet's webhook would refuse is an error for `job validate` and `job create`
    (a render still prints it, as the controller still builds it)."""
    if result.rejections:
        raise ValidationFailedError(result.rejections, subject="JobSet")


def explain_notes(request: RenderRequest, outcome: RenderOutcome) -> list[Any]:
    """For each rendered object, path -> where the field came from (`job render --explain`)."""
    from ktrain.authoring.explain import explain

    original = outcome.document.original if outcome.document is not None else None
    file_spec = (original.get("spec") or {}) if isinstance(original, dict) else None
    file_meta = (original.get("metadata") or {}) if isinstance(original, dict) else {}

    def source(field: str, flag_value: str | None, otherwise: str) -> str:
        if flag_value:
            return f"flag --{field}"
        return "TrainJob metadata" if file_meta.get(field) else otherwise

    name_source = source("name", request.overrides.name, "derived from the job's content")
    namespace_source = source("namespace", request.overrides.namespace, "default namespace")
    assert outcome.ctx is not None
    notes = explain(
        outcome.result.objects,
        outcome.job,
        outcome.runtime.runtime,
        outcome.ctx,
        file_spec if isinstance(file_spec, dict) else None,
        name_source,
        namespace_source,
        request.source_labels,
    )
    return [_name_the_code_wrapper(obj, note) for obj, note in zip(outcome.result.objects, notes, strict=True)]


def _name_the_code_wrapper(obj: Obj, note: Any) -> Any:
    """`--explain`: the words `--code`/`--pip` put before a trainer command are the wrapper's."""
    from ktrain.authoring.code_launch import is_wrapped

    def source(path: Path) -> str | None:
        found = note(path)
        at = path.index("command") if "command" in path else -1
        if at < 2 or path[at - 2] != "containers" or len(path) != at + 2:
            return found  # type: ignore[no-any-return]
        node: Any = obj
        for key in path[: at + 1]:
            if isinstance(node, dict):
                node = node.get(key)
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                node = None
        if not is_wrapped(node if isinstance(node, list) else None):
            return found  # type: ignore[no-any-return]
        word = path[at + 1]
        if isinstance(word, int) and word < 4:
            return "--code/--pip wrapper (ktrain: cd, pip install, exec the command)"
        return f"{found}, run by the --code/--pip wrapper"

    return source


@struct
class ConvertOutcome:
    conversions: list[Conversion]
    objects: list[Obj]  # what to print, in document order: converted jobs (+ runtimes) and the rest as is
    notes: list[str]


def convert_file(path: str, runtime: str | None = None) -> ConvertOutcome:
    """Every Training Operator v1 job of a file (one job, several documents, or a `List`),
    converted (`ktrain job convert`). Other documents (a PVC, a ConfigMap) are kept as they are,
    each with a note."""
    from ktrain.convert import convert_documents, list_leftovers, supported_text

    label = "<stdin>" if path == "-" else path
    docs = load_documents(read_text(path), label)
    outcome = ConvertOutcome(conversions=[], objects=[], notes=[])
    for i, doc in enumerate(docs):
        converted = convert_documents([doc], runtime=runtime)
        outcome.notes += list_leftovers(doc)
        if converted:
            outcome.conversions += converted
            for conv in converted:
                outcome.objects += [conv.trainjob, *([conv.runtime] if conv.runtime is not None else [])]
            continue
        data = doc.data if isinstance(doc.data, dict) else {}
        what = f"{data.get('kind', 'a document')} {(data.get('metadata') or {}).get('name', '')}".strip()
        line = doc.positions.get((), (None,))[0]
        outcome.notes.append(f"{label}:{line or 1}: document {i + 1} ({what}) is not a v1 job: kept as it is")
        outcome.objects.append(doc.data)
    if not outcome.conversions:
        if not docs:
            raise InputError("the file is empty", file=label)
        first = docs[0]
        kind = first.data.get("kind") if isinstance(first.data, dict) else None
        if kind == c.TRAINJOB_KIND:
            raise first.error("this is already a TrainJob: nothing to convert", ("kind",))
        raise first.error(
            f"no Training Operator v1 job in this file (kind {kind!r}); ktrain converts {supported_text()}", ("kind",)
        )
    return outcome
