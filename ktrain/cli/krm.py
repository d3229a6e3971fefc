"""`ktrain-krm`: ktrain as a KRM function, for kustomize and kpt (docs/gitops.md).

It reads resources on stdin, renders every TrainJob among them into the objects the Trainer
controller would create (the same code as `ktrain job render`: `ktrain.service.render`), passes
every other resource through, and writes the result on stdout. Two protocols:

- KRM functions (kustomize `transformers:`/`generators:` with `config.kubernetes.io/function:
  exec:` and `kustomize build --enable-alpha-plugins --enable-exec`; `kpt fn eval --exec
  ktrain-krm`): a `ResourceList` in (YAML or JSON), a `ResourceList` out, in the same format,
  options in its `functionConfig`, problems in its `results`
  (kubernetes-sigs/kustomize `cmd/config/docs/api-conventions/functions-spec.md`).
- kustomize's exec plugins (`kubectl kustomize --enable-alpha-plugins`, whose kustomize has no
  `--enable-exec` and skips exec KRM functions without a word): the executable is called with
  the path of its configuration file, the resources as a YAML stream on stdin, the kustomization's
  directory as working directory (and in $KUSTOMIZE_PLUGIN_CONFIG_ROOT); it writes the resources
  as a YAML stream, and its errors on stderr.

Any error fails the run (exit 1) with the message on stderr (and in `results`): a build must not
go on without the objects it asked for.
"""

from __future__ import annotations

import os
import sys

from ktrain import constants as c
from ktrain.errors import InputError, KtrainError, UsageError, ValidationFailedError
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.inputs.registry import RuntimeEntry
    from ktrain.inputs.spelling import Spelling
    from ktrain.util.jsondata import Obj

CONFIG_API_VERSION = "ktrain.io/v1alpha1"
CONFIG_KIND = "KtrainRender"
RESOURCE_LIST_API_VERSION = "config.kubernetes.io/v1"
RESOURCE_LIST_KINDS = ("ResourceList", "List")

# The orchestrators' bookkeeping: where a resource came from (kpt writes an item back to its file
# at its index), and how its file indents sequences. Copied from a TrainJob to what it renders.
PATH_KEYS = ("config.kubernetes.io/path", "internal.config.kubernetes.io/path")
INDEX_KEYS = ("config.kubernetes.io/index", "internal.config.kubernetes.io/index")
KEPT_KEYS = (*PATH_KEYS, *INDEX_KEYS, "internal.config.kubernetes.io/seqindent")
# Annotations that are the orchestrators' own, never the TrainJob's: dropped before a render.
ORCHESTRATION_PREFIXES = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "kustomize.config.k8s.io/")
ORCHESTRATION_KEYS = ("config.k8s.io/id",)
# kustomize notes a renamed resource's names so far, first the one in its file (comma-separated).
PREVIOUS_NAMES = "internal.config.kubernetes.io/previousNames"

TARGETS = ("jobset", "trainjob")
SSH_HINT = (
    "set sshSecret to the name of an existing Secret of type kubernetes.io/ssh-auth (a key pair generated "
    "at build time would change on every build and put a private key in the output); "
    "generateSshKeys: true allows it anyway"
)
USAGE = """\
Usage: ktrain-krm [CONFIG_FILE]

Render the TrainJobs among Kubernetes resources into the objects the Trainer controller would
create; pass every other resource through.

  ktrain-krm              KRM function: a ResourceList on stdin, a ResourceList on stdout
                          (kustomize --enable-alpha-plugins --enable-exec; kpt fn eval --exec)
  ktrain-krm CONFIG_FILE  kustomize exec plugin: the KtrainRender configuration in CONFIG_FILE,
                          resources as a YAML stream on stdin (kubectl kustomize --enable-alpha-plugins)

Options go in the function configuration (apiVersion: ktrain.io/v1alpha1, kind: KtrainRender):
spec.target, sshSecret, generateSshKeys, allowExtensions, runtimeFiles, runtimesDirs,
keepRuntimes, inheritLabels, files, code, featureGates and statusServer. See docs/gitops.md.
"""


class ConfigError(KtrainError):
    """The function configuration is wrong: `path` is the field."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(f"{CONFIG_KIND} {path}: {message}" if path else f"{CONFIG_KIND}: {message}")
        self.path = path


@struct
class CodeSpec:
    """`--code`/`--pip` for the TrainJob named `job` (its name in its file, or after renames)."""

    job: str
    paths: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    pip_index_urls: list[str] = field(default_factory=list)


@struct
class Options:
    target: str = "jobset"
    ssh_secret: str | None = None
    generate_ssh_keys: bool = False
    allow_extensions: bool = False
    runtime_files: list[str] = field(default_factory=list)
    runtimes_dirs: list[str] = field(default_factory=list)
    keep_runtimes: bool | None = None  # None: keep them for target trainjob, drop them for jobset
    inherit_labels: bool = True
    files: list[str] = field(default_factory=list)
    code: list[CodeSpec] = field(default_factory=list)
    # The Trainer controller's feature gates (`TrainJobStatus=true`, or a mapping) and its status server.
    feature_gates: dict[str, bool] = field(default_factory=dict)
    status_server: str | None = None

    @property
    def keeps_runtimes(self) -> bool:
        return self.keep_runtimes if self.keep_runtimes is not None else self.target == "trainjob"


@struct
class Result:
    """One entry of the output's `results` (the KRM functions spec)."""

    message: str
    severity: str = "error"
    resource: Obj | None = None  # the item it is about (its apiVersion, kind, name, namespace)
    field_path: str | None = None
    file: str | None = None
    index: str | None = None

    def to_dict(self) -> Obj:
        out: Obj = {"message": self.message, "severity": self.severity}
        if self.resource is not None:
            meta = metadata_of(self.resource)
            ref = {"apiVersion": self.resource.get("apiVersion"), "kind": self.resource.get("kind")}
            ref["name"] = meta.get("name")
            if meta.get("namespace"):
                ref["namespace"] = meta["namespace"]
            out["resourceRef"] = ref
        if self.field_path:
            out["field"] = {"path": self.field_path}
        if self.file:
            out["file"] = {"path": self.file}
            if self.index is not None and self.index.isdigit():
                out["file"]["index"] = int(self.index)
        return out

    def line(self) -> str:
        """The result as one line of stderr."""
        where = self.file or ""
        if self.resource is not None:
            meta = metadata_of(self.resource)
            ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
            what = f"{self.resource.get('kind')} {ns}{meta.get('name')}"
            where = f"{where} ({what})" if where else what
        prefix = "error" if self.severity == "error" else self.severity
        return f"{prefix}: {where}: {self.message}" if where else f"{prefix}: {self.message}"


# --- the function configuration -------------------------------------------------------------

_SPEC_KEYS = {
    "target": "target",
    "sshSecret": "ssh_secret",
    "generateSshKeys": "generate_ssh_keys",
    "allowExtensions": "allow_extensions",
    "runtimeFiles": "runtime_files",
    "runtimesDirs": "runtimes_dirs",
    "keepRuntimes": "keep_runtimes",
    "inheritLabels": "inherit_labels",
    "files": "files",
    "code": "code",
    "featureGates": "feature_gates",
    "statusServer": "status_server",
}
_BOOLS = ("generate_ssh_keys", "allow_extensions", "keep_runtimes", "inherit_labels")
_LISTS = ("runtime_files", "runtimes_dirs", "files")
_CODE_KEYS = {"job": "job", "paths": "paths", "include": "include", "pip": "pip", "pipIndexUrls": "pip_index_urls"}


def parse_options(config: Any) -> Options:
    """Options from a `functionConfig`: a KtrainRender's `spec`, or a ConfigMap's `data` (what
    `kpt fn eval --exec ktrain-krm -- sshSecret=keys` passes: every value a string)."""
    options = Options()
    if config is None:
        return options
    if not isinstance(config, dict):
        raise ConfigError("the function configuration must be a mapping", "")
    kind = config.get("kind")
    if kind == "ConfigMap":
        values, prefix, strings = config.get("data") or {}, "data", True
    elif kind == CONFIG_KIND:
        values, prefix, strings = config.get("spec") or {}, "spec", False
    else:
        raise ConfigError(
            f"the function configuration must be a {CONFIG_KIND} ({CONFIG_API_VERSION}) or a ConfigMap, got {kind!r}",
            "kind",
        )
    if not isinstance(values, dict):
        raise ConfigError("must be a mapping", prefix)
    for key, value in values.items():
        name = _SPEC_KEYS.get(str(key))
        path = f"{prefix}.{key}"
        if name is None:
            raise ConfigError(f"unknown field; the fields are {', '.join(_SPEC_KEYS)}", path)
        if name in _BOOLS:
            setattr(options, name, _boolean(value, path, strings))
        elif name in _LISTS:
            setattr(options, name, _strings(value, path, strings))
        elif name == "feature_gates":
            options.feature_gates = _feature_gates(value, path)
        elif name == "code":
            if strings:
                raise ConfigError("code needs a KtrainRender configuration (a list of mappings)", path)
            options.code = _code_specs(value, path)
        elif not isinstance(value, str) or not value:
            raise ConfigError("must be a non-empty string", path)
        else:
            setattr(options, name, value)
    if options.target not in TARGETS:
        raise ConfigError(f"must be {' or '.join(TARGETS)}, got {options.target!r}", f"{prefix}.target")
    return options


def _feature_gates(value: Any, path: str) -> dict[str, bool]:
    from ktrain.inputs.feature_gates import parse_feature_gates

    if isinstance(value, dict):
        value = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())
    if not isinstance(value, str):
        raise ConfigError("must be Name=true,... or a mapping of gate names to booleans", path)
    try:
        return parse_feature_gates(value, path)
    except KtrainError as exc:
        raise ConfigError(str(exc).removeprefix(f"{path}: "), path) from None


def _boolean(value: Any, path: str, strings: bool) -> bool:
    if isinstance(value, bool):
        return value
    if strings and value in ("true", "false"):
        return bool(value == "true")
    raise ConfigError(f"must be true or false, got {value!r}", path)


def _strings(value: Any, path: str, strings: bool) -> list[str]:
    if strings and isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError("must be a list of non-empty strings", path)
    return list(value)


def _code_specs(value: Any, path: str) -> list[CodeSpec]:
    if not isinstance(value, list):
        raise ConfigError("must be a list of {job, paths, include, pip, pipIndexUrls}", path)
    specs = []
    for i, entry in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError("must be a mapping", where)
        spec = CodeSpec(job="")
        for key, item in entry.items():
            name = _CODE_KEYS.get(str(key))
            if name is None:
                raise ConfigError(f"unknown field; the fields are {', '.join(_CODE_KEYS)}", f"{where}.{key}")
            if name == "job":
                if not isinstance(item, str) or not item:
                    raise ConfigError("must be the TrainJob's name", f"{where}.job")
                spec.job = item
            else:
                setattr(spec, name, _strings(item, f"{where}.{key}", False))
        if not spec.job:
            raise ConfigError("names no TrainJob", f"{where}.job")
        if not spec.paths and not spec.pip:
            raise ConfigError("needs paths (files sent with the job) or pip (packages)", where)
        specs.append(spec)
    return specs


def inside(base: str, given: str, what: str) -> str:
    """`given`, a path relative to `base`, made absolute; refused when it leaves `base` (as
    kustomize's default load restrictor refuses files outside the kustomization)."""
    if os.path.isabs(given):
        raise InputError(f"{what} {given!r}: must be relative to the kustomization's directory")
    joined = os.path.join(base, given)
    root = os.path.realpath(base)
    real = os.path.realpath(joined)
    if real != root and not real.startswith(root + os.sep):
        raise InputError(f"{what} {given!r}: leaves the kustomization's directory ({root})")
    return joined


# --- the transformation ----------------------------------------------------------------------


def metadata_of(obj: Obj) -> dict[str, Any]:
    """`obj`'s metadata, or {} where it has none or a malformed one (reported by the render)."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def annotations_of(obj: Obj) -> dict[str, Any]:
    annotations = metadata_of(obj).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def without_orchestration(obj: Obj) -> Obj:
    """`obj` without the orchestrators' annotations (a copy where it had any)."""
    from ktrain.util.jsondata import deep_copy

    annotations = annotations_of(obj)
    drop = [k for k in annotations if str(k).startswith(ORCHESTRATION_PREFIXES) or k in ORCHESTRATION_KEYS]
    if not drop:
        return deep_copy(obj)
    out = deep_copy(obj)
    kept = {k: v for k, v in annotations.items() if k not in drop}
    if kept:
        out["metadata"]["annotations"] = kept
    else:
        del out["metadata"]["annotations"]
    return out


def _source(obj: Obj) -> tuple[str | None, str | None]:
    annotations = annotations_of(obj)
    path = next((str(annotations[k]) for k in PATH_KEYS if annotations.get(k)), None)
    index = next((str(annotations[k]) for k in INDEX_KEYS if annotations.get(k) is not None), None)
    return path, index


def original_names(obj: Obj) -> list[str]:
    """The TrainJob's names: as written in its file (kustomize's rename history) and now."""
    meta = metadata_of(obj)
    names = [n for n in str(annotations_of(obj).get(PREVIOUS_NAMES) or "").split(",") if n]
    return [*names[:1], str(meta.get("name") or "")]


class Transformer:
    """Renders the TrainJobs of one run; collects the results."""

    def __init__(self, options: Options, base: str) -> None:
        self.options = options
        self.base = base
        self.results: list[Result] = []
        self.items: list[Obj] = []  # every input resource (a Secret `sshSecret` names is looked up there)
        # Runtimes among the items that kustomize renamed: (kind, namespace, name in the file) -> name now
        self.renamed_runtimes: dict[tuple[str, str | None, str], str] = {}
        self.used_code: set[int] = set()  # the `code` entries that named a TrainJob
        self.spelling: Spelling | None = None  # the items' scalars as written (passed through so)

    # one TrainJob

    def _registry(self, runtimes: list[RuntimeEntry], namespace: str | None) -> Any:
        from ktrain.inputs.registry import RuntimeRegistry

        o = self.options
        registry = RuntimeRegistry(
            files=[inside(self.base, f, "runtimeFiles:") for f in o.runtime_files],
            dirs=[inside(self.base, d, "runtimesDirs:") for d in o.runtimes_dirs],
            env_path=os.environ.get("KTRAIN_RUNTIMES_PATH"),
        )
        # A TrainingRuntime serves the TrainJobs of its own namespace only (as on a cluster).
        usable = [
            e
            for e in runtimes
            if e.runtime.kind != c.TRAINING_RUNTIME_KIND or (e.runtime.metadata.namespace or None) in (None, namespace)
        ]
        registry.add_converted(usable)
        return registry

    def _follow_runtime_rename(self, data: Obj, namespace: str | None) -> None:
        """A TrainJob names its runtime as written in the repository; kustomize renamed the runtime
        (namePrefix) but not the reference: point the reference at the runtime's name now, as
        kustomize does for the references it knows."""
        spec = data.get("spec")
        ref = spec.get("runtimeRef") if isinstance(spec, dict) else None
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            return
        kind = ref.get("kind") or c.CLUSTER_TRAINING_RUNTIME_KIND
        scope = namespace if kind == c.TRAINING_RUNTIME_KIND else None
        renamed = self.renamed_runtimes.get((str(kind), scope, ref["name"]))
        if renamed is not None:
            ref["name"] = renamed

    def _ssh_secret(self, namespace: str | None) -> str | None:
        """`sshSecret`, under its current name when the Secret is among the resources and was
        renamed (kustomize's namePrefix/nameSuffix ran before this function)."""
        name = self.options.ssh_secret
        for item in self.items:
            meta = metadata_of(item)
            same_namespace = (meta.get("namespace") or None) == namespace
            is_secret = item.get("kind") == "Secret" and item.get("apiVersion") == "v1"
            if is_secret and same_namespace and name in original_names(item)[:1] and meta.get("name"):
                return str(meta["name"])
        return name

    def _code(self, item: Obj) -> CodeSpec | None:
        names = original_names(item)
        found = [i for i, s in enumerate(self.options.code) if s.job in names]
        self.used_code.update(found)
        return self.options.code[found[0]] if found else None

    def render(self, item: Obj, runtimes: list[RuntimeEntry]) -> list[Obj]:
        """The objects one TrainJob item becomes (raises KtrainError)."""
        from ktrain.inputs.documents import Document
        from ktrain.service.render import render_request, require_admissible
        from ktrain.service.requests import JobOverrides, RenderRequest

        o = self.options
        path, _ = _source(item)
        data = without_orchestration(item)
        meta: Obj = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
        namespace = meta.get("namespace") or None
        label = path or f"TrainJob {meta.get('name')}"
        self._follow_runtime_rename(data, namespace)
        overrides = JobOverrides()
        request = RenderRequest(
            file=label,
            document=Document(data=data, file=label),
            overrides=overrides,
            ssh_secret=self._ssh_secret(namespace),
            allow_extensions=o.allow_extensions,
            ssh_key_refusal=None if o.generate_ssh_keys else SSH_HINT,
            feature_gates=dict(o.feature_gates),
            status_server=o.status_server,
        )
        code = self._code(item)
        if code is not None:
            from ktrain.inputs.code_bundle import collect

            for given in code.paths:
                inside(self.base, given, "code paths:")
            overrides.code = list(code.paths)
            overrides.code_include = list(code.include)
            overrides.pip = list(code.pip)
            overrides.pip_index_urls = list(code.pip_index_urls)
            if code.paths:
                request.code_bundle = collect(code.paths, code.include, cwd=self.base)
        outcome = render_request(request, self._registry(runtimes, namespace))
        runtime = outcome.runtime.runtime
        if namespace is None and runtime.spec.ml_policy is not None and runtime.spec.ml_policy.flux is not None:
            raise UsageError(
                "a Flux job's addresses name its namespace: set metadata.namespace (or kustomize's namespace:)"
            )
        for message in outcome.result.warnings:
            self.results.append(Result(message, "warning", item, file=path))
        if o.feature_gates:  # what an offline render of the gated plugins cannot know
            notes = [m for m in request.notes if m.startswith("TrainJobStatus")]
            self.results += [Result(m, "info", item, file=path) for m in notes]
        if o.target == "trainjob":
            from ktrain.inputs.code_bundle import is_code
            from ktrain.jobs.plan import trainjob_to_submit

            objects = [trainjob_to_submit(outcome.job.to_dict(), outcome.result.objects, {}, {})]
            objects += [x for x in outcome.result.objects if x.get("kind") == "ConfigMap" and is_code(x)]
        else:
            from ktrain.jobs.plan import record_runtime

            require_admissible(outcome.result)
            objects = record_runtime(outcome.result.objects, runtime.name)
        labels: Obj = meta["labels"] if o.inherit_labels and isinstance(meta.get("labels"), dict) else {}
        return [self._finish(obj, item, labels, namespace) for obj in objects]

    def _finish(self, obj: Obj, item: Obj, labels: dict[str, Any], namespace: str | None) -> Obj:
        """A rendered object as emitted: the TrainJob's labels under its own (as kustomize's label
        transformer would have set them), no namespace where the TrainJob had none (the
        orchestrator's or `kubectl apply -n`'s decides), and the TrainJob's source annotations."""
        meta = obj.setdefault("metadata", {})
        if labels:
            meta["labels"] = {**labels, **(meta.get("labels") or {})}
        if namespace is None:
            meta.pop("namespace", None)
        source = {k: v for k, v in annotations_of(item).items() if k in KEPT_KEYS}
        if source:
            meta["annotations"] = {**(meta.get("annotations") or {}), **source}
        return obj

    # the whole list

    def _located(self, exc: KtrainError, item: Obj | None) -> list[Result]:
        """Results for an error: one per field problem of the TrainJob (with its field path)."""
        path, index = _source(item) if item is not None else (None, None)
        if isinstance(exc, ConfigError):
            return [Result(exc.message, resource=item, field_path=exc.path or None, file=path, index=index)]
        if isinstance(exc, ValidationFailedError) and exc.subject == c.TRAINJOB_KIND:
            return [
                Result(
                    f"TrainJob is invalid: {err.message}", resource=item, field_path=err.path, file=path, index=index
                )
                for err in exc.errors
            ]
        message = exc.message + (f" ({exc.hint})" if exc.hint else "")
        return [Result(message, resource=item, file=path, index=index)]

    def _file_items(self) -> list[Obj]:
        """The resources of the files named in `spec.files` (a generator's TrainJobs)."""
        from ktrain.inputs.reading import read_input

        out: list[Obj] = []
        for given in self.options.files:
            text = read_input(inside(self.base, given, "files:"), what="TrainJob file")
            out += [d for d in _documents(text, given, self.spelling) if isinstance(d, dict)]
        return out

    def transform(self, items: list[Obj]) -> list[Obj]:
        """The output items: each TrainJob replaced by its objects, runtimes kept or dropped,
        every other item as it came. Errors are in `self.results`."""
        from ktrain.inputs.documents import Document
        from ktrain.inputs.registry import load_runtime_documents

        try:
            items = [*items, *self._file_items()]
        except KtrainError as exc:
            self.results += self._located(exc, None)
            return items
        self.items = items
        runtimes: list[RuntimeEntry] = []
        for item in items:
            if item.get("kind") in c.RUNTIME_KINDS:
                meta = metadata_of(item)
                first, now = original_names(item)[0], str(meta.get("name") or "")
                if first != now:
                    scope = (meta.get("namespace") or None) if item["kind"] == c.TRAINING_RUNTIME_KIND else None
                    self.renamed_runtimes[(str(item["kind"]), scope, first)] = now
                path, _ = _source(item)
                label = path or f"{item.get('kind')} {(item.get('metadata') or {}).get('name')}"
                try:
                    runtimes += load_runtime_documents([Document(without_orchestration(item), label)], "file", label)
                except KtrainError as exc:
                    self.results += self._located(exc, item)
        out: list[Obj] = []
        renumber: set[str] = set()
        for item in items:
            kind = item.get("kind")
            if kind == c.TRAINJOB_KIND and item.get("apiVersion") == c.TRAINER_API_VERSION:
                try:
                    rendered = self.render(item, runtimes)
                except KtrainError as exc:
                    self.results += self._located(exc, item)
                    continue
                path, _ = _source(item)
                if path is not None:
                    renumber.add(path)
                out += rendered
            elif kind in c.RUNTIME_KINDS and not self.options.keeps_runtimes:
                path, _ = _source(item)
                if path is not None:
                    renumber.add(path)
            elif kind == c.CLUSTER_TRAINING_RUNTIME_KIND and metadata_of(item).get("namespace"):
                # kustomize's `namespace:` sets one on every kind it does not know to be cluster-scoped
                kept = dict(item)
                kept["metadata"] = {k: v for k, v in item["metadata"].items() if k != "namespace"}
                out.append(kept)
            else:
                out.append(item)
        _renumber(out, renumber)
        for i, spec in enumerate(self.options.code):
            if i not in self.used_code:  # a typo in a name must not send a job without its code
                error = ConfigError(f"no TrainJob is named {spec.job!r}", f"spec.code[{i}].job")
                self.results += self._located(error, None)
        return out

    @property
    def failed(self) -> bool:
        return any(r.severity == "error" for r in self.results)


def _renumber(items: list[Obj], paths: set[str]) -> None:
    """Give the items of each file in `paths` the indexes 0, 1, ... in output order: a TrainJob's
    objects take its place in its file, and kpt writes each item back at its index."""
    counters: dict[str, int] = {}
    for item in items:
        path, index = _source(item)
        if path not in paths or index is None:
            continue
        assert path is not None
        n = counters.get(path, 0)
        counters[path] = n + 1
        annotations = item["metadata"]["annotations"]
        for key in INDEX_KEYS:
            if key in annotations:
                annotations[key] = str(n)


# --- input and output ------------------------------------------------------------------------


def _read_stdin() -> str:
    from ktrain.inputs.reading import read_input

    return read_input("-", what="resource list")


def _documents(text: str, label: str, spelling: Spelling | None = None) -> list[Any]:
    """The documents of what an orchestrator wrote: JSON, or YAML as go-yaml v3 writes it (read
    with YAML 1.2's rules, as kustomize and kpt read it). `spelling` keeps the text of their
    scalars, for the resources written back unchanged (`ktrain.inputs.spelling`)."""
    if text.lstrip().startswith("{"):
        from ktrain.inputs.reading import MAX_YAML_DEPTH
        from ktrain.util.jsondata import loads, nesting_depth

        deep = nesting_depth(text, MAX_YAML_DEPTH)
        if deep is not None:
            raise InputError(
                f"invalid JSON: nested more than {MAX_YAML_DEPTH} levels deep (at char {deep})", file=label
            )
        try:
            return [spelling.load_json(text) if spelling is not None else loads(text)]
        except (ValueError, RecursionError) as exc:
            raise InputError(f"invalid JSON: {str(exc)[:200]}", file=label) from None
    from ktrain.inputs.documents import load_documents

    data = [d.data for d in load_documents(text, label, version=(1, 2)) if d.data is not None]
    if spelling is not None:
        spelling.add_yaml(text, data, (1, 2))
    return data


def _unprintable_in_yaml(o: int) -> bool:
    """A BMP character YAML does not allow as it is (DEL, C1 controls, YAML 1.1's line breaks,
    surrogates, non-characters); JSON does."""
    return o == 0x7F or 0x80 <= o <= 0x9F or o in (0x85, 0x2028, 0x2029, 0xFFFE, 0xFFFF) or 0xD800 <= o <= 0xDFFF


def json_for_yaml_readers(value: Any, spelling: Spelling | None = None) -> str:
    """JSON that YAML readers (kustomize's and kpt's, which read a function's output as YAML) read
    back as the same data: UTF-8 rather than `\\u` escapes for characters outside the BMP (a YAML
    reader takes an escaped surrogate pair for two characters), `\\u` escapes for the characters
    YAML forbids as they are; numbers passed through as `spelling` kept them."""
    from ktrain.inputs.spelling import json_text

    text = json_text(value, spelling)
    if text.isascii() and "\x7f" not in text:
        return text
    return "".join(f"\\u{ord(ch):04x}" if _unprintable_in_yaml(ord(ch)) else ch for ch in text)


def run_krm(text: str) -> tuple[str, int]:
    """A ResourceList in, a ResourceList out (in the input's format) and the exit code."""
    from ktrain.inputs.spelling import Spelling

    is_json = text.lstrip().startswith("{")
    spelling = Spelling()
    docs = _documents(text, "<stdin>", spelling)
    if len(docs) != 1 or not isinstance(docs[0], dict) or docs[0].get("kind") not in RESOURCE_LIST_KINDS:
        raise InputError(
            "stdin holds no ResourceList (kind: ResourceList, apiVersion: config.kubernetes.io/v1)",
            file="<stdin>",
            hint="as a kustomize exec plugin, ktrain-krm is called with its configuration file",
        )
    rl = docs[0]
    items = rl.get("items") or []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise InputError("the ResourceList's items must be a list of resources", file="<stdin>")
    transformer = Transformer(Options(), os.getcwd())
    transformer.spelling = spelling
    try:
        transformer.options = parse_options(rl.get("functionConfig"))
        out_items = transformer.transform(items)
    except ConfigError as exc:
        transformer.results += transformer._located(exc, None)
        out_items = items
    except KtrainError as exc:
        transformer.results += transformer._located(exc, None)
        out_items = items
    out: Obj = {"apiVersion": rl.get("apiVersion") or RESOURCE_LIST_API_VERSION, "kind": rl["kind"]}
    out["items"] = out_items
    if transformer.results:
        out["results"] = [r.to_dict() for r in transformer.results]
    _report(transformer.results)
    if is_json:
        return json_for_yaml_readers(out, spelling) + "\n", 1 if transformer.failed else 0
    from ktrain.output.yamltext import dump

    return dump(out, spell=spelling), 1 if transformer.failed else 0


def run_plugin(config_path: str, text: str) -> tuple[str, int]:
    """kustomize's exec plugin protocol: resources as a YAML stream in and out."""
    from ktrain.inputs.reading import read_input

    config_docs = _documents(read_input(config_path, what="plugin configuration"), config_path)
    base = os.environ.get("KUSTOMIZE_PLUGIN_CONFIG_ROOT") or os.getcwd()
    from ktrain.inputs.spelling import Spelling

    transformer = Transformer(parse_options(config_docs[0] if config_docs else None), base)
    transformer.spelling = spelling = Spelling()
    items = _documents(text, "<stdin>", spelling)
    if not all(isinstance(i, dict) for i in items):
        raise InputError("stdin must hold Kubernetes resources (YAML mappings)", file="<stdin>")
    out_items = transformer.transform(items)
    _report(transformer.results)
    if transformer.failed:
        return "", 1
    from ktrain.output.yamltext import dump_all

    return dump_all(out_items, spell=spelling), 0


def _report(results: list[Result]) -> None:
    from ktrain.output.errors import bounded

    for result in results:
        sys.stderr.write(bounded(result.line()) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write(USAGE)
        return 2
    from ktrain.cli.guard import run_guarded

    def command() -> int:
        text = _read_stdin()
        output, code = run_plugin(args[0], text) if args else run_krm(text)
        sys.stdout.write(output)
        return code

    return run_guarded(command, debug=bool(os.environ.get("KTRAIN_DEBUG")))


def run() -> None:
    """The console script `ktrain-krm`."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    sys.exit(main())
