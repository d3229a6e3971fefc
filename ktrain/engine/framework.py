"""The phase runner: the fixed order in which plugins see a render.

Upstream ranges over a Go map, so plugin order within a stage is random (ENGINE.md §3.2);
here it is one explicit order:

  0. schema checks (TrainJob and runtime CRDs, runtime webhook, runtimePatches V10–V14)
  1. build RuntimeInfo (labels, runtimePatches merge, PodSets, resourcesPerNode)   — S1
  2. validate: JobSet, the active ML plugin, the active gang plugins (all errors together)
  3. enforce_ml_policy: the one active ML plugin, then TrainJobStatus (feature gate) — S2
  4. enforce_pod_group_policy: the active gang plugins                             — S3
  5. build: JobSet, the ML plugin's objects, PodGroups, TrainJobStatus's ConfigMap — S4–S6
  6. order objects by kind (Secret, ConfigMap, PodGroup, JobSet)
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine import validation, volume_mounts
from ktrain.engine.context import RenderContext
from ktrain.engine.info import build_runtime_info
from ktrain.engine.plugins import GANG_POLICIES, JOBSET, ML_POLICIES, PLAIN_ML, TRAINJOB_STATUS, Plugin, plugin
from ktrain.engine.plugins.gang import min_member
from ktrain.engine.plugins.jobset import jobset_admission_warnings, jobset_name_errors
from ktrain.engine.shapes import INT32
from ktrain.errors import FieldError, ValidationFailedError
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # records (ktrain.api.records) or the pydantic models: the engine reads both alike
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.api.trainjob import TrainJob
    from ktrain.util.jsondata import Obj


INT32_MAX = INT32[1]
KIND_RANK = {"Secret": 0, "ConfigMap": 1, "PodGroup": 2, "JobSet": 3}


@struct
class RenderResult:
    objects: list[Obj]
    warnings: list[str] = field(default_factory=list)
    # Names of the plugins that acted, in phase order (for `runtime show` and --explain).
    plugins: list[str] = field(default_factory=list)
    # What JobSet's admission webhook will refuse (ENGINE.md §11.4). The Trainer controller still
    # builds these objects (the refusal only shows as a Warning event), so a render returns them;
    # submitting and validating treat these as errors.
    rejections: list[FieldError] = field(default_factory=list)


def select_ml_plugin(runtime: TrainingRuntime) -> Plugin:
    ml = runtime.spec.ml_policy
    keys = ml.policy_keys if ml is not None else []
    for key, module, name in ML_POLICIES:
        if key in keys:
            return plugin(module, name)
    return plugin(*PLAIN_ML)


def select_gang_plugins(runtime: TrainingRuntime) -> list[Plugin]:
    pgp = runtime.spec.pod_group_policy
    if pgp is None:
        return []
    return [plugin(module, name) for key, module, name in GANG_POLICIES if getattr(pgp, key) is not None]


def check_inputs(job: TrainJob, runtime: TrainingRuntime, ctx: RenderContext) -> list[FieldError]:
    """Stage 0: what the API server and the webhooks reject before any plugin runs."""
    errors = validation.validate_trainjob_schema(job)
    errors += validation.validate_runtime_schema(runtime, allow_extensions=ctx.allow_extensions)
    errors += validation.validate_runtime_webhook(runtime)
    errors += validation.validate_runtime_patches(job, runtime)
    if not errors:  # a pod's volumeMounts must name its volumes (the API server refuses the pod)
        patches = job.spec.runtime_patches or []
        errors += volume_mounts.runtime_mount_errors(runtime.spec, patches)
        errors += volume_mounts.patch_mount_errors(patches, runtime.spec)
    return errors


def deprecation_warnings(job: TrainJob, runtime: TrainingRuntime) -> list[str]:
    # Only the ClusterTrainingRuntime webhook path warns (ENGINE.md §11.2 "Warnings").
    if runtime.kind != c.CLUSTER_TRAINING_RUNTIME_KIND or runtime.labels.get(c.LABEL_SUPPORT) != c.SUPPORT_DEPRECATED:
        return []
    return [
        f'Referenced {runtime.kind} "{runtime.name}" is deprecated and will be removed in a future release of '
        f"Kubeflow Trainer. See runtime deprecation policy: {c.DEPRECATION_POLICY_URL}"
    ]


def run(job: TrainJob, runtime: TrainingRuntime, ctx: RenderContext) -> RenderResult:
    errors = check_inputs(job, runtime, ctx)
    if errors:
        raise ValidationFailedError(errors)
    warnings = deprecation_warnings(job, runtime)
    if job.spec.managed_by != c.MANAGED_BY_TRAINER:
        warnings.append(
            f"spec.managedBy is {job.spec.managed_by}: the Trainer controller creates no objects for this TrainJob"
        )
        return RenderResult(objects=[], warnings=warnings)

    info = build_runtime_info(job, runtime, ctx)
    ml = select_ml_plugin(runtime)
    gangs = select_gang_plugins(runtime)

    errors = JOBSET.validate(info) + ml.validate(info)
    for gang in gangs:
        errors += gang.validate(info)
    if errors:
        raise ValidationFailedError(errors)

    ml.enforce_ml_policy(info)
    status = plugin(*TRAINJOB_STATUS) if ctx.status_server is not None else None
    if status is not None:
        status.enforce_ml_policy(info)
    for gang in gangs:
        gang.enforce_pod_group_policy(info)

    rejections = jobset_name_errors(info)
    info.warnings += [f"the JobSet webhook will reject this JobSet: {err}" for err in rejections]
    if gangs:
        members = min_member(info)
        if members > INT32_MAX:  # PodGroup spec.minMember is an int32
            refused = FieldError(
                "",
                f"PodGroup {info.name}: spec.minMember: Invalid value: {members}: spec.minMember in body "
                f"should be less than or equal to {INT32_MAX}",
            )
            rejections.append(refused)
            info.warnings.append(f"the API server will reject the PodGroup: {refused}")
    info.warnings += jobset_admission_warnings(info)

    objects = ml.build(info) + [o for g in gangs for o in g.build(info)]
    if status is not None:
        objects += status.build(info)
    objects += JOBSET.build(info)
    if ctx.runtime_snapshot and job.metadata.uid and ctx.runtime_snapshot_text is not None:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": info.object_meta(f"{info.name}{c.RUNTIME_SNAPSHOT_SUFFIX}"),
                "data": {"runtime": ctx.runtime_snapshot_text},
            }
        )
    objects.sort(key=lambda o: KIND_RANK.get(o["kind"], 99))  # stable: plugin order within a kind
    plugins = [JOBSET.name, ml.name, *(g.name for g in gangs), *([status.name] if status is not None else [])]
    return RenderResult(objects=objects, warnings=warnings + info.warnings, plugins=plugins, rejections=rejections)
