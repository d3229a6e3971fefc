"""RuntimeInfo: the state one render builds up (mirror of upstream `pkg/runtime/runtime.go`),
and stage S1 — its construction from a runtime and a TrainJob (`newRuntimeInfo`, ENGINE.md §4).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.api.base import default_jobset_spec
from ktrain.engine.apply import find_container
from ktrain.engine.context import RenderContext
from ktrain.engine.gotypes import drop_nulls, drop_zero_values
from ktrain.engine.merge import StrategicMergeError, merge_runtime_patches
from ktrain.errors import FieldError, ValidationFailedError
from ktrain.util.jsondata import deep_copy
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # records (ktrain.api.records) or the pydantic models: the engine reads both alike
    from collections.abc import Iterator
    from typing import Any

    from ktrain.api.runtime import MLPolicy, PodGroupPolicy, TrainingRuntime
    from ktrain.api.trainjob import TrainJob
    from ktrain.engine.quantity import Quantity
    from ktrain.util.jsondata import Obj


def pod_spec_of(rjob: Obj) -> Obj:
    """The pod spec inside a replicatedJob, created on the way if absent."""
    job_template = rjob.setdefault("template", {})
    job_spec = job_template.setdefault("spec", {})
    pod_template = job_spec.setdefault("template", {})
    pod_spec: Obj = pod_template.setdefault("spec", {})
    return pod_spec


def ancestor_of(rjob: Obj) -> str | None:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    value = labels.get(c.LABEL_ANCESTOR)
    return value if isinstance(value, str) else None


@struct(slots=True)
class PodSet:
    """One replicatedJob as the plugins see it. `rjob` is the live mapping being rendered."""

    name: str
    ancestor: str | None
    count: int
    rjob: Obj
    single_pod_requests: dict[str, Quantity] = field(default_factory=dict)
    replicas: int = 1

    @property
    def pod_spec(self) -> Obj:
        return pod_spec_of(self.rjob)

    def container(self, name: str, *, include_init: bool = False) -> Obj | None:
        return find_container(self.pod_spec, name, include_init=include_init)


@struct(slots=True)
class RuntimeInfo:
    job: TrainJob
    runtime: TrainingRuntime
    ctx: RenderContext
    labels: dict[str, str]
    annotations: dict[str, str]
    spec: Obj  # JobSet spec after runtimePatches; mutated by every later stage
    pod_sets: list[PodSet]
    ml_policy: MLPolicy | None
    pod_group_policy: PodGroupPolicy | None
    # What the JobSet builder writes on the trainer container; torchtune rewrites the command.
    trainer_command: list[str] | None = None
    trainer_args: list[str] | None = None
    pod_labels: dict[str, str] = field(default_factory=dict)
    pod_annotations: dict[str, str] = field(default_factory=dict)
    objects: list[Obj] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Values one plugin phase leaves for a later phase of the same plugin.
    plugin_state: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.job.name

    @property
    def namespace(self) -> str:
        return self.job.namespace

    def trainer_pod_set(self) -> PodSet | None:
        for ps in self.pod_sets:
            if ps.ancestor == c.ANCESTOR_TRAINER:
                return ps
        return None

    def pod_set(self, name: str) -> PodSet | None:
        for ps in self.pod_sets:
            if ps.name == name:
                return ps
        return None

    def trainer_container(self) -> Obj | None:
        ps = self.trainer_pod_set()
        return ps.container(c.NODE) if ps else None

    def subdomain(self) -> str:
        network = self.spec.get("network") or {}
        sub = network.get("subdomain")
        return sub if isinstance(sub, str) and sub else self.name

    def endpoints(self, ps: PodSet) -> Iterator[str]:
        """Pod DNS names of one PodSet (JobSet `IdentifyPodNetwork`): job index is always 0."""
        sub = self.subdomain()
        prefix = f"{self.name}-{ps.name}-0-"
        for pod in range(ps.count):
            yield f"{prefix}{pod}.{sub}"

    def owner_reference(self) -> Obj:
        return {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": c.TRAINJOB_KIND,
            "name": self.name,
            "uid": self.job.metadata.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def object_meta(self, name: str) -> Obj:
        meta: Obj = {"name": name, "namespace": self.namespace}
        if self.job.metadata.uid:
            meta["ownerReferences"] = [self.owner_reference()]
        return meta


def trainer_resources_targets(rjob: Obj, ps_ancestor: str | None, info_ml: MLPolicy | None) -> bool:
    """Whether `trainer.resourcesPerNode` is merged into this rJob's `node` container (§4.4)."""
    if info_ml is None:
        return False
    if ps_ancestor == c.ANCESTOR_TRAINER:
        return True
    mpi = info_ml.mpi
    return bool(mpi is not None and mpi.run_launcher_as_node and rjob.get("name") == c.NODE)


def _requests_something(pod_spec: Obj) -> bool:
    """Whether a container, the pod or its overhead names any resources: else the pod's requests
    are empty, without reading a quantity (nor importing decimal)."""
    if pod_spec.get("resources") or pod_spec.get("overhead"):
        return True
    for key in ("containers", "initContainers"):
        items = pod_spec.get(key)
        if isinstance(items, list) and any(not isinstance(c, dict) or c.get("resources") for c in items):
            return True
    return False


def _pod_requests(pod_spec: Obj) -> dict[str, Quantity]:
    """component-helpers `PodRequests` (`ktrain.engine.quantity.pod_requests`)."""
    if not _requests_something(pod_spec):
        return {}
    from ktrain.engine.quantity import pod_requests

    return pod_requests(pod_spec)


def merge_resources(current: Obj | None, override: Obj) -> Obj:
    """Strategic merge of ResourceRequirements: limits/requests per key, claims by name."""
    out: Obj = deep_copy(current) if current else {}
    for key in ("limits", "requests"):
        if override.get(key):
            merged = dict(out.get(key) or {})
            for res, qty in override[key].items():
                from ktrain.engine.quantity import Quantity  # decimal only where a quantity is read

                merged[res] = Quantity.parse(qty).canonical()
            out[key] = merged
    if override.get("claims"):
        claims = list(out.get("claims") or [])
        for claim in override["claims"]:
            for i, existing in enumerate(claims):
                if existing.get("name") == claim.get("name"):
                    claims[i] = {**existing, **claim}
                    break
            else:
                claims.append(claim)
        out["claims"] = claims
    return out


def build_runtime_info(job: TrainJob, runtime: TrainingRuntime, ctx: RenderContext) -> RuntimeInfo:
    rt_spec = runtime.spec
    template_meta = drop_nulls(rt_spec.template.metadata or {})
    labels: dict[str, str] = dict(template_meta.get("labels") or {})
    annotations: dict[str, str] = dict(template_meta.get("annotations") or {})

    # Upstream reads the runtime into Go types and JSON-encodes it: zero `omitempty` values vanish.
    spec = drop_zero_values(default_jobset_spec(drop_nulls(rt_spec.template.spec)), "JobSetSpec")
    patch_specs: list[Obj] = []
    for patch in job.spec.runtime_patches or []:
        tmpl = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        if tmpl is None:
            continue
        meta = drop_nulls(tmpl.metadata or {})
        labels.update(meta.get("labels") or {})
        annotations.update(meta.get("annotations") or {})
        if tmpl.spec is not None:
            patch_specs.append(tmpl.spec)
    if patch_specs:
        # The merged result is decoded into the typed JobSetSpec again: same zero-value rule.
        try:
            merged = merge_runtime_patches(spec, patch_specs)
        except StrategicMergeError as exc:
            # apimachinery refuses the same patch; the controller reports it for the TrainJob.
            raise ValidationFailedError(
                [FieldError("spec.runtimePatches", f"cannot apply the patches: {exc}")]
            ) from None
        spec = drop_zero_values(merged, "JobSetSpec")

    ml = rt_spec.ml_policy
    trainer = job.spec.trainer
    resources_override = (
        trainer.resources_per_node.to_dict() if trainer is not None and trainer.resources_per_node is not None else None
    )
    pod_sets: list[PodSet] = []
    for rjob in spec.get("replicatedJobs") or []:
        ancestor = ancestor_of(rjob)
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        count = job_spec.get("parallelism")
        count = count if isinstance(count, int) else 1
        if ancestor == c.ANCESTOR_TRAINER and ml is not None:
            count = ml.num_nodes if ml.num_nodes is not None else 1
        pod_spec = pod_spec_of(rjob)
        if resources_override and trainer_resources_targets(rjob, ancestor, ml):
            for container in pod_spec.get("containers") or []:
                if container.get("name") == c.NODE:
                    container["resources"] = merge_resources(container.get("resources"), resources_override)
                    break
        replicas = rjob.get("replicas")
        pod_sets.append(
            PodSet(
                name=str(rjob.get("name")),
                ancestor=ancestor,
                count=max(count, 1),
                rjob=rjob,
                single_pod_requests=_pod_requests(pod_spec),
                replicas=replicas if isinstance(replicas, int) else 1,
            )
        )

    return RuntimeInfo(
        job=job,
        runtime=runtime,
        ctx=ctx,
        labels=labels,
        annotations=annotations,
        spec=spec,
        pod_sets=pod_sets,
        ml_policy=ml,
        pod_group_policy=rt_spec.pod_group_policy,
        trainer_command=list(trainer.command) if trainer and trainer.command is not None else None,
        trainer_args=list(trainer.args) if trainer and trainer.args is not None else None,
    )
