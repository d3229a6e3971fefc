"""`ktrain job render --explain`: where each field of the rendered objects came from.

The engine stays as it is (pure, and no slower for normal renders). Provenance is found from
the outside by rendering again with the layers of input added one at a time, and noting, for
every field of the real output, the last layer that changed it:

  1. runtime template      the blueprint's JobSet template as written
  2. CRD default           structural defaults of the runtime CRD (replicas, groupName, ...)
  3. jobset plugin         a bare TrainJob on the runtime, ML and gang policies switched off
  4. runtime patch by M    each runtimePatch, in order (--label/--annotation/--queue and --patch
                           arrive this way too, under managers ktrain.io/cli-flags / ktrain.io/cli)
  5. TrainJob field        the job file (after templating)
  6. flag                  --set and the typed flags (--nodes, --env, --image, ...)
  7. <ml> plugin           the runtime's ML policy (torch, mpi, ...) switched on
  8. TrainJobStatus        the controller's feature gate, when the render has it on
  9. <gang> plugin         the gang scheduler (coscheduling, volcano) switched on = the real render

"Switched off" means: the runtime's mlPolicy keeps only numNodes (PlainML runs, as upstream does
for a runtime without a framework policy) and podGroupPolicy is dropped. A layer whose render
fails is skipped; its changes are then credited to the next layer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ktrain import constants as c
from ktrain.api.base import default_jobset_spec
from ktrain.api.policies import ML_POLICY_KEYS
from ktrain.api.records import validate
from ktrain.engine import RenderContext, render
from ktrain.engine.framework import select_gang_plugins, select_ml_plugin
from ktrain.engine.plugins.jobset import canonical_resources
from ktrain.errors import KtrainError
from ktrain.util.jsondata import Obj
from ktrain.util.structs import fields

if TYPE_CHECKING:
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.api.trainjob import TrainJob

Path = tuple[Any, ...]
_MISSING = object()

RUNTIME_TEMPLATE = "runtime template"
CRD_DEFAULT = "CRD default"
JOBSET_PLUGIN = "jobset plugin"
TRAINJOB_FIELD = "TrainJob field"
FLAG = "flag"


@dataclass
class Layer:
    label: str
    objects: list[Obj]


def _key(obj: Obj) -> tuple[str, str]:
    return (str(obj.get("kind")), str((obj.get("metadata") or {}).get("name")))


def _leaves(value: Any, path: Path, named: Path, out: dict[Path, tuple[Path, Any]]) -> None:
    """raw path -> (path with list items of named mappings keyed by name, value), for each leaf.

    Keying by name keeps `env[name=LR]` the same field when a layer inserts env vars before it.
    """
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _leaves(v, (*path, k), (*named, k), out)
        return
    if isinstance(value, list) and value:
        for i, v in enumerate(value):
            name = v.get("name") if isinstance(v, dict) else None
            _leaves(v, (*path, i), (*named, ("name", name) if isinstance(name, str) else i), out)
        return
    out[path] = (named, value)


def _by_named_path(obj: Obj) -> dict[Path, Any]:
    found: dict[Path, tuple[Path, Any]] = {}
    _leaves(obj, (), (), found)
    return dict(found.values())


def _without_policies(runtime: TrainingRuntime, *, keep_ml: bool) -> TrainingRuntime:
    ml = runtime.spec.ml_policy
    if not keep_ml and ml is not None:
        ml = ml.model_copy(update=dict.fromkeys(ML_POLICY_KEYS))
    spec = runtime.spec.model_copy(update={"ml_policy": ml, "pod_group_policy": None})
    return runtime.model_copy(update={"spec": spec})


def _job(final: TrainJob, spec: Obj) -> TrainJob:
    data = final.to_dict()
    data["spec"] = spec
    job: TrainJob = validate("TrainJob", data)
    return job


def _template_object(runtime: TrainingRuntime, final: Obj, spec: Obj) -> Obj:
    meta = runtime.spec.template.metadata or {}
    metadata = dict(final.get("metadata") or {})
    for key in ("labels", "annotations"):
        metadata.pop(key, None)
        if meta.get(key):
            metadata[key] = dict(meta[key])
    # apiVersion/kind only let the layers be matched; the JobSet builder writes them (see explain()).
    return {"apiVersion": final.get("apiVersion"), "kind": final.get("kind"), "metadata": metadata, "spec": spec}


def _canonical_quantities(spec: Obj) -> Obj:
    """The template with its resource quantities as the JobSet builder writes them (`4096Mi` is
    `4Gi`): a spelling is not a source, so `memory: 4096Mi` stays the template's like its `cpu`."""
    for rjob in spec.get("replicatedJobs") or []:
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        if isinstance(pod, dict):
            try:
                canonical_resources(pod)
            except (KtrainError, ValueError):
                pass  # a quantity the render refuses: the render says so
    return spec


def explain(
    final_objects: list[Obj],
    job: TrainJob,
    runtime: TrainingRuntime,
    ctx: RenderContext,
    file_spec: Obj | None,
    name_source: str,
    namespace_source: str = "default namespace",
    labels: dict[str, str] | None = None,
) -> list[Callable[[Path], str | None]]:
    """For each object of `final_objects`, a function from a raw field path to its source.
    `labels` renames layers (a converted v1 job: "TrainJob field" -> "converted from TFJob ...")."""
    ref = job.spec.runtime_ref.to_dict()
    patches = [p.to_dict() for p in job.spec.runtime_patches or []]
    plain = _without_policies(runtime, keep_ml=False)
    ml_only = _without_policies(runtime, keep_ml=True)

    gated = ctx  # the layers before the feature-gated plugin render without it
    ctx = RenderContext(**{f.name: getattr(gated, f.name) for f in fields(gated) if f.name != "status_server"})

    def attempt(label: str, spec: Obj, rt: TrainingRuntime, context: RenderContext = ctx) -> Layer | None:
        try:
            return Layer(label, render(_job(job, spec), rt, context).objects)
        except (KtrainError, ValueError):
            return None

    layers: list[Layer | None] = []
    jobset = next((o for o in final_objects if o.get("kind") == c.JOBSET_KIND), None)
    if jobset is not None:
        raw = _canonical_quantities(copy.deepcopy(runtime.spec.template.spec))
        layers.append(Layer(RUNTIME_TEMPLATE, [_template_object(runtime, jobset, raw)]))
        layers.append(Layer(CRD_DEFAULT, [_template_object(runtime, jobset, default_jobset_spec(raw))]))
    layers.append(attempt(JOBSET_PLUGIN, {"runtimeRef": ref}, plain))
    for k in range(1, len(patches) + 1):
        layers.append(
            attempt(
                f"runtime patch by {patches[k - 1].get('manager')}",
                {"runtimeRef": ref, "runtimePatches": patches[:k]},
                plain,
            )
        )
    final_spec = job.spec.to_dict()
    if file_spec is not None:
        spec = {**file_spec, "runtimeRef": ref}
        spec.pop("runtimePatches", None)
        if patches:
            spec["runtimePatches"] = patches
        layers.append(attempt(TRAINJOB_FIELD, spec, plain))
    layers.append(attempt(FLAG, final_spec, plain))
    ml = select_ml_plugin(runtime)
    gangs = select_gang_plugins(runtime)
    if ml.policy_key is not None:
        layers.append(attempt(f"{ml.name} plugin (ML policy)", final_spec, ml_only))
    if gated.status_server is not None:
        layers.append(attempt("TrainJobStatus plugin (feature gate)", final_spec, ml_only, gated))
    if gangs:
        layers.append(Layer(" + ".join(g.name for g in gangs) + " plugin (scheduler)", final_objects))
    else:
        layers.append(Layer(layers[-1].label if layers[-1] else FLAG, final_objects))
    present = [layer for layer in layers if layer is not None]

    notes: list[Callable[[Path], str | None]] = []
    for obj in final_objects:
        key = _key(obj)
        states = []
        for layer in present:
            match = next((o for o in layer.objects if _key(o) == key), None)
            states.append((layer.label, _by_named_path(match) if match is not None else {}))
        raw_leaves: dict[Path, tuple[Path, Any]] = {}
        _leaves(obj, (), (), raw_leaves)
        sources: dict[Path, str] = {}
        for raw_path, (named, _) in raw_leaves.items():
            if named[:1] == ("metadata",) and named[1:] in (("name",), ("namespace",)):
                sources[raw_path] = name_source if named[1] == "name" else namespace_source
                continue
            source = None
            previous: Any = _MISSING
            for label, values in states:
                if named in (("apiVersion",), ("kind",)) and label in (RUNTIME_TEMPLATE, CRD_DEFAULT):
                    continue
                value = values.get(named, _MISSING)
                if value is not _MISSING and (source is None or value != previous):
                    source = label
                elif value is _MISSING:
                    source = None
                previous = value
            found = source or states[-1][0]
            sources[raw_path] = (labels or {}).get(found, found)
        notes.append(sources.get)
    return notes
