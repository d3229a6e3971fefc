"""Checks the API server and the admission webhooks would make, done before rendering.

- TrainJob CRD schema and CEL rules (ENGINE.md §2.1; the `numNodes >= 0` and
  `numProcPerNode >= 1` rules are from upstream master, §15, and pinned by conformance cases);
- runtime CRD schema and CEL rules (§2.2) and the runtime validating webhook (§11.3);
- runtimePatches rules V10–V14, checked against the runtime *as written* (§16 item 31);
- runtimeRef resolution against a given runtime object (V1–V3).
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.field_errors import (
    STRING_MAPS,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    int_fields,
    invalid,
    matches,
    max_items,
    max_length,
    minimum,
    name_errors,
    string_map_errors,
    unique_names,
    validate_domain_prefixed_path,
)
from ktrain.errors import FieldError
from ktrain.util.dnsnames import is_dns1035_label
from ktrain.util.jsondata import dumps

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # records (ktrain.api.records) or the pydantic models: the engine reads both alike
    from typing import Any

    from ktrain.api.runtime import TrainingRuntime
    from ktrain.api.trainjob import TrainJob
    from ktrain.util.jsondata import Obj


# Required fields of an EnvVar's valueFrom sources in the TrainJob CRD (core/v1 EnvVarSource).
_ENV_SOURCE_REQUIRED = {
    "configMapKeyRef": ("key",),
    "secretKeyRef": ("key",),
    "fieldRef": ("fieldPath",),
    "resourceFieldRef": ("resource",),
    "fileKeyRef": ("key", "path", "volumeName"),
}


def _crd_quantity(text: str) -> bool:
    from ktrain.engine.quantity import matches_crd_pattern  # (and decimal) only for a quantity set

    return matches_crd_pattern(text)


def _env_errors(path: str, envs: list[Any] | None) -> list[FieldError]:
    """The CRD's checks inside EnvVar.valueFrom: known sources, their required fields, divisor."""
    errors: list[FieldError] = []
    for i, env in enumerate(envs or []):
        source = env.value_from
        if source is None:
            continue
        base = f"{path}[{i}].valueFrom"
        for key, ref in source.items():
            if key not in _ENV_SOURCE_REQUIRED:
                errors.append(FieldError(f"{base}.{key}", f'unknown field "{base}.{key}"', kind="FieldValueUnknown"))
                continue
            if not isinstance(ref, dict):
                errors.append(invalid(f"{base}.{key}", ref, f"{base}.{key} in body must be of type object"))
                continue
            for field in _ENV_SOURCE_REQUIRED[key]:
                if field not in ref:
                    errors.append(FieldError(f"{base}.{key}.{field}", "Required value", kind="Required"))
            divisor = ref.get("divisor") if key == "resourceFieldRef" else None
            if divisor is not None and (isinstance(divisor, bool) or not isinstance(divisor, (str, int, float))):
                # x-kubernetes-int-or-string: a list or a mapping never reaches the quantity parser
                errors.append(
                    invalid(
                        f"{base}.{key}.divisor",
                        divisor,
                        f"{base}.{key}.divisor in body must be of type integer or string",
                    )
                )
            elif isinstance(divisor, str) and not _crd_quantity(divisor):
                errors.append(
                    invalid(
                        f"{base}.{key}.divisor",
                        divisor,
                        f"{base}.{key}.divisor in body should match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|"
                        "(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|"
                        "(\\.[0-9]+))))?$'",
                    )
                )
    return errors


def trainjob_shape_errors(job: TrainJob) -> list[FieldError]:
    """Values the TrainJob's schema types refuse that the records let through: int32/int64 fields
    out of range, and wrongly typed values inside the runtimePatches' free-form templates."""
    from ktrain.engine.shapes import JOBSET_SPEC, OBJECT_META, shape_errors

    trainer = job.spec.trainer
    errors = int_fields(
        [
            ("spec.trainer.numNodes", trainer.num_nodes if trainer else None, 32),
            ("spec.trainer.numProcPerNode", trainer.num_proc_per_node if trainer else None, 32),
            ("spec.activeDeadlineSeconds", job.spec.active_deadline_seconds, 64),
        ]
    )
    for i, patch in enumerate(job.spec.runtime_patches or []):
        tmpl = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        if tmpl is None:
            continue
        base = f"spec.runtimePatches[{i}].trainingRuntimeSpec.template"
        errors += shape_errors(f"{base}.metadata", tmpl.metadata, OBJECT_META)
        errors += shape_errors(f"{base}.spec", tmpl.spec, JOBSET_SPEC)
    return errors


def runtime_shape_errors(runtime: TrainingRuntime) -> list[FieldError]:
    """Values the runtime CRD's schema refuses that the records let through: int32 fields out of
    range, and wrongly typed values in the free-form JobSet template (see ktrain.engine.shapes).
    The other runtime checks, the merge and the plugins may assume these shapes once it is empty."""
    from ktrain.engine.shapes import JOBSET_SPEC, OBJECT_META, shape_errors

    spec = runtime.spec
    ml, pgp = spec.ml_policy, spec.pod_group_policy
    errors = int_fields(
        [
            ("spec.mlPolicy.numNodes", ml.num_nodes if ml else None, 32),
            ("spec.mlPolicy.mpi.numProcPerNode", ml.mpi.num_proc_per_node if ml and ml.mpi else None, 32),
            ("spec.mlPolicy.flux.numProcPerNode", ml.flux.num_proc_per_node if ml and ml.flux else None, 32),
            (
                "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds",
                pgp.coscheduling.schedule_timeout_seconds if pgp and pgp.coscheduling else None,
                32,
            ),
        ]
    )
    errors += shape_errors("spec.template.metadata", spec.template.metadata, OBJECT_META)
    errors += shape_errors("spec.template.spec", spec.template.spec, JOBSET_SPEC)
    return errors


def validate_trainjob_schema(job: TrainJob) -> list[FieldError]:
    errors = trainjob_shape_errors(job)
    if errors:
        return errors  # the checks below read into the values these are about
    name = job.metadata.name
    if not name:
        errors.append(FieldError("metadata.name", "Required value: name or generateName is required", kind="Required"))
    else:
        if not is_dns1035_label(name):
            errors.append(FieldError("metadata.name", "metadata.name must match RFC 1035 DNS label format"))
        if len(name) > 63:
            errors.append(FieldError("metadata.name", "metadata.name must be no more than 63 characters"))
    # apimachinery ValidateObjectMeta: the namespace is a DNS-1123 label.
    errors += name_errors("metadata.namespace", job.metadata.namespace, dns1123_label_errors)
    spec = job.spec
    ref = spec.runtime_ref
    if not ref.name:
        errors.append(
            FieldError(
                "spec.runtimeRef.name",
                'Invalid value: "": spec.runtimeRef.name in body should be at least 1 chars long',
            )
        )
    errors += max_length("spec.runtimeRef.name", ref.name, 253)
    errors += max_length("spec.runtimeRef.apiGroup", ref.api_group, 253)
    errors += max_length("spec.runtimeRef.kind", ref.kind, 253)
    if spec.initializer is not None:
        for kind in ("dataset", "model"):
            source = getattr(spec.initializer, kind)
            if source is None:
                continue
            base = f"spec.initializer.{kind}"
            uri = source.storage_uri
            errors += max_length(f"{base}.storageUri", uri, 2048)
            if uri is not None and uri != "" and not matches(r"^[A-Za-z][A-Za-z0-9+.-]*://.+$", uri):
                errors.append(
                    invalid(
                        f"{base}.storageUri", uri, "storageUri may be empty, or it must be a valid URI (scheme://...)"
                    )
                )
            if source.secret_ref is not None:
                # Pod validation of the initializer's secret reference (a Secret name).
                errors += name_errors(f"{base}.secretRef.name", source.secret_ref.name, dns1123_subdomain_errors)
            errors += max_items(f"{base}.env", source.env, 128)
            errors += unique_names(f"{base}.env", source.env)
            errors += _env_errors(f"{base}.env", source.env)
    trainer = spec.trainer
    if trainer is not None:
        errors += max_length("spec.trainer.image", trainer.image, 500)
        errors += max_items("spec.trainer.command", trainer.command, 128)
        errors += max_items("spec.trainer.args", trainer.args, 128)
        errors += max_items("spec.trainer.env", trainer.env, 128)
        errors += unique_names("spec.trainer.env", trainer.env)
        errors += _env_errors("spec.trainer.env", trainer.env)
        errors += minimum("spec.trainer.numNodes", trainer.num_nodes, 0)
        if trainer.num_proc_per_node is not None and trainer.num_proc_per_node < 1:
            errors.append(
                invalid(
                    "spec.trainer.numProcPerNode",
                    trainer.num_proc_per_node,
                    "numProcPerNode must be greater than or equal to 1",
                )
            )
        if trainer.resources_per_node is not None:
            errors += _quantity_errors("spec.trainer.resourcesPerNode", trainer.resources_per_node.to_dict())
    patches = spec.runtime_patches or []
    errors += max_items("spec.runtimePatches", spec.runtime_patches, 16)
    errors += unique_names("spec.runtimePatches", patches, key="manager")
    for i, patch in enumerate(patches):
        if not patch.manager:
            errors.append(
                FieldError(
                    f"spec.runtimePatches[{i}].manager",
                    f'Invalid value: "": spec.runtimePatches[{i}].manager in body should be at least 1 chars long',
                )
            )
        errors += max_length(f"spec.runtimePatches[{i}].manager", patch.manager, 253)
    errors += validate_runtime_patch_fields(job)
    errors += minimum("spec.activeDeadlineSeconds", spec.active_deadline_seconds, 1)
    if spec.managed_by not in c.MANAGED_BY_VALUES:
        errors.append(
            invalid(
                "spec.managedBy",
                spec.managed_by,
                "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set",
            )
        )
    errors += max_length("spec.managedBy", spec.managed_by, 253)
    return errors


def _quantity_errors(path: str, resources: Obj) -> list[FieldError]:
    from ktrain.engine.quantity import Quantity, QuantityError, matches_crd_pattern

    errors = []
    for section in ("limits", "requests"):
        for res, qty in (resources.get(section) or {}).items():
            try:
                Quantity.parse(qty)
                # The API server checks the CRD's stricter pattern before parsing ("Ki" parses as 0).
                if isinstance(qty, str) and not matches_crd_pattern(qty):
                    raise QuantityError(qty, "does not match the CRD quantity pattern")
            except QuantityError:
                errors.append(
                    invalid(
                        f"{path}.{section}[{res}]",
                        qty,
                        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                    )
                )
    return errors


def _supported(path: str, value: str, allowed: tuple[str, ...]) -> FieldError:
    shown = ", ".join(dumps(a) for a in allowed)
    return FieldError(path, f"Unsupported value: {dumps(value)}: supported values: {shown}", kind="NotSupported")


def validate_runtime_schema(runtime: TrainingRuntime, *, allow_extensions: bool = False) -> list[FieldError]:
    """The runtime CRD's schema and CEL rules (what `kubectl apply` of the runtime would reject)."""
    errors = runtime_shape_errors(runtime)
    if errors:
        return errors  # the checks below read into the values these are about
    # apimachinery ValidateObjectMeta: a custom resource's name is a DNS-1123 subdomain.
    errors += name_errors("metadata.name", runtime.metadata.name, dns1123_subdomain_errors)
    errors += name_errors("metadata.namespace", runtime.metadata.namespace, dns1123_label_errors)
    spec = runtime.spec
    ml = spec.ml_policy
    if ml is not None:
        if len(ml.policy_keys) > 1:
            errors.append(invalid("spec.mlPolicy", "object", "Only one of the policy can be configured"))
        if ml.mpi is not None:
            allowed: tuple[str, ...] = ("OpenMPI", "")
            if allow_extensions:
                allowed = ("OpenMPI", "", "Intel", "MPICH")
            if ml.mpi.mpi_implementation not in allowed:
                errors.append(
                    _supported("spec.mlPolicy.mpi.mpiImplementation", ml.mpi.mpi_implementation, ("OpenMPI", ""))
                )
            if ml.mpi.num_proc_per_node < 1:
                errors.append(
                    invalid(
                        "spec.mlPolicy.mpi.numProcPerNode",
                        ml.mpi.num_proc_per_node,
                        "NumProcPerNode in mpiPolicy must be >= 1",
                    )
                )
            errors += max_length("spec.mlPolicy.mpi.sshAuthMountPath", ml.mpi.ssh_auth_mount_path, 4096)
        if ml.flux is not None and ml.flux.num_proc_per_node < 1:
            errors.append(
                invalid(
                    "spec.mlPolicy.flux.numProcPerNode",
                    ml.flux.num_proc_per_node,
                    "NumProcPerNode in fluxPolicy must be >= 1",
                )
            )
        injection = ml.torch.env_injection if ml.torch else None
        if injection is not None and injection.targets:
            errors += max_items("spec.mlPolicy.torch.envInjection.targets", injection.targets, 16)
            for i, target in enumerate(injection.targets):
                base = f"spec.mlPolicy.torch.envInjection.targets[{i}]"
                if not target.job_name:
                    errors.append(FieldError(f"{base}.jobName", 'Invalid value: "": should be at least 1 chars long'))
                names = target.container_names
                if not names:
                    errors.append(
                        FieldError(f"{base}.containerNames", "Invalid value: 0: should have at least 1 items")
                    )
                errors += max_items(f"{base}.containerNames", names, 8)
                if c.NODE in names:
                    errors.append(
                        invalid(
                            f"{base}.containerNames",
                            names,
                            "containerNames must not include the main node container because PET_* "
                            "envs are always injected into it",
                        )
                    )
    pgp = spec.pod_group_policy
    if pgp is not None and pgp.volcano is not None and pgp.volcano.network_topology is not None:
        mode = pgp.volcano.network_topology.mode
        if mode not in ("hard", "soft"):
            errors.append(_supported("spec.podGroupPolicy.volcano.networkTopology.mode", mode, ("hard", "soft")))
    template = spec.template.spec
    rjobs = template.get("replicatedJobs")
    if not isinstance(rjobs, list) or not rjobs:
        errors.append(
            FieldError(
                "spec.template.spec.replicatedJobs",
                "Required value: a runtime needs at least one replicated job",
                kind="Required",
            )
        )
        rjobs = []
    errors += max_items("spec.template.spec.replicatedJobs", rjobs, 100)
    errors += unique_names("spec.template.spec.replicatedJobs", rjobs)
    startup = template.get("startupPolicy") or {}
    if startup.get("startupPolicyOrder") == "InOrder" and any(isinstance(r, dict) and "dependsOn" in r for r in rjobs):
        errors.append(
            invalid("spec.template.spec", "object", "StartupPolicy and DependsOn APIs are mutually exclusive")
        )
    failure = template.get("failurePolicy") or {}
    restart = failure.get("restartStrategy")
    if restart is not None and restart not in ("Recreate", "BlockingRecreate", "InPlaceRestart"):
        errors.append(
            _supported(
                "spec.template.spec.failurePolicy.restartStrategy",
                restart,
                ("Recreate", "BlockingRecreate", "InPlaceRestart"),
            )
        )
    for key in ("labels", "annotations"):
        errors += string_map_errors(f"spec.template.metadata.{key}", (spec.template.metadata or {}).get(key))
    errors += _unknown_fields("spec.template.spec", template, _JOBSET_SPEC_FIELDS)
    errors += _jobset_policy_errors(template)
    for i, rjob in enumerate(rjobs):
        if not isinstance(rjob, dict):
            errors.append(FieldError(f"spec.template.spec.replicatedJobs[{i}]", "Invalid value: must be an object"))
            continue
        base = f"spec.template.spec.replicatedJobs[{i}]"
        errors += _unknown_fields(base, rjob, _REPLICATED_JOB_FIELDS)
        if not rjob.get("name"):
            errors.append(FieldError(f"{base}.name", "Required value", kind="Required"))
        if "template" not in rjob:
            errors.append(FieldError(f"{base}.template", "Required value", kind="Required"))
        depends = rjob.get("dependsOn") or []
        errors += max_items(f"{base}.dependsOn", depends, 5)
        for j, dep in enumerate(depends):
            status = dep.get("status") if isinstance(dep, dict) else None
            if status not in ("Ready", "Complete"):
                errors.append(_supported(f"{base}.dependsOn[{j}].status", str(status), ("Ready", "Complete")))
    return errors


# JobSet v1alpha2 (v0.12.0) JobSetSpec and ReplicatedJob fields, as the runtime CRD declares them.
_JOBSET_SPEC_FIELDS = frozenset(
    {
        "coordinator",
        "failurePolicy",
        "managedBy",
        "network",
        "replicatedJobs",
        "startupPolicy",
        "successPolicy",
        "suspend",
        "ttlSecondsAfterFinished",
        "volumeClaimPolicies",
    }
)
_REPLICATED_JOB_FIELDS = frozenset({"dependsOn", "groupName", "name", "replicas", "template"})


def _enum(path: str, value: Any, allowed: tuple[str, ...]) -> list[FieldError]:
    if value is None:
        return [FieldError(path, "Required value", kind="Required")]
    return [] if value in allowed else [_supported(path, str(value), allowed)]


def _jobset_policy_errors(template: Obj) -> list[FieldError]:
    """Enums and required fields of the JobSet policies in the runtime CRD (jobset v0.12.0 types)."""
    base = "spec.template.spec"
    errors: list[FieldError] = []
    success = template.get("successPolicy")
    if isinstance(success, dict):
        errors += _enum(f"{base}.successPolicy.operator", success.get("operator"), ("All", "Any"))
    startup = template.get("startupPolicy")
    if isinstance(startup, dict):
        errors += _enum(
            f"{base}.startupPolicy.startupPolicyOrder", startup.get("startupPolicyOrder"), ("AnyOrder", "InOrder")
        )
    failure = template.get("failurePolicy")
    for i, rule in enumerate((failure.get("rules") or []) if isinstance(failure, dict) else []):
        if not isinstance(rule, dict):
            continue
        if "name" not in rule:
            errors.append(FieldError(f"{base}.failurePolicy.rules[{i}].name", "Required value", kind="Required"))
        errors += _enum(
            f"{base}.failurePolicy.rules[{i}].action",
            rule.get("action"),
            (
                "FailJobSet",
                "RestartJobSet",
                "RestartJobSetAndIgnoreMaxRestarts",
                "RestartJob",
                "RestartJobAndIgnoreMaxRestarts",
            ),
        )
    ttl = template.get("ttlSecondsAfterFinished")
    if isinstance(ttl, int):
        errors += minimum(f"{base}.ttlSecondsAfterFinished", ttl, 0)
    return errors


def _unknown_fields(path: str, value: Obj, known: frozenset[str]) -> list[FieldError]:
    """kubectl's strict field validation: `unknown field "<path>"` (the CRD would prune it)."""
    return [
        FieldError(f"{path}.{key}", f'unknown field "{path}.{key}"', kind="FieldValueUnknown")
        for key in value
        if key not in known
    ]


def validate_runtime_webhook(runtime: TrainingRuntime) -> list[FieldError]:
    """The (Cluster)TrainingRuntime validating webhook (§11.3); skipped for runtimes labelled
    `trainer.kubeflow.org/webhook-validation: disabled`, as the webhook's objectSelector does."""
    if runtime.labels.get(c.LABEL_WEBHOOK_VALIDATION) == c.WEBHOOK_VALIDATION_DISABLED:
        return []
    if runtime_shape_errors(runtime):
        return []  # validate_runtime_schema reports them; the API server stops there too
    errors: list[FieldError] = []
    required = {
        c.ANCESTOR_TRAINER: c.NODE,
        c.ANCESTOR_MODEL_INITIALIZER: c.MODEL_INITIALIZER,
        c.ANCESTOR_DATASET_INITIALIZER: c.DATASET_INITIALIZER,
    }
    for i, rjob in enumerate(runtime.spec.template.spec.get("replicatedJobs") or []):
        if not isinstance(rjob, dict):
            continue
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ancestor = labels.get(c.LABEL_ANCESTOR)
        if ancestor not in required:
            continue
        base = f"spec.template.spec.replicatedJobs[{i}]"
        replicas = rjob.get("replicas", 1)
        if replicas != 1:
            errors.append(invalid(f"{base}.replicas", replicas, "always must be 1"))
        pod_spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        names = [ct.get("name") for ct in pod_spec.get("containers") or [] if isinstance(ct, dict)]
        if required[ancestor] not in names:
            errors.append(
                invalid(
                    f"{base}.template.spec.template.spec.containers",
                    names,
                    f"must contain the required container for the ancestor: {ancestor}",
                )
            )
    return errors


def _container_names(rjob: Obj) -> set[str]:
    pod_spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    names = set()
    for key in ("initContainers", "containers"):
        for ct in pod_spec.get(key) or []:
            if isinstance(ct, dict) and isinstance(ct.get("name"), str):
                names.add(ct["name"])
    return names


# The fields the TrainJob CRD schema declares under runtimePatches[].trainingRuntimeSpec.template.spec
# (trainjob_types.go `JobSetSpecPatch` and below; embedded ObjectMeta is trimmed by controller-gen to
# these five). Anything else is an unknown field that kubectl's strict field validation rejects.
_PATCH_FIELDS: dict[str, tuple[frozenset[str], dict[str, str]]] = {
    "JobSetSpecPatch": (frozenset({"replicatedJobs"}), {"replicatedJobs": "ReplicatedJobPatch"}),
    "ReplicatedJobPatch": (frozenset({"name", "template"}), {"template": "JobTemplatePatch"}),
    "JobTemplatePatch": (frozenset({"metadata", "spec"}), {"metadata": "ObjectMeta", "spec": "JobSpecPatch"}),
    "JobSpecPatch": (frozenset({"template"}), {"template": "PodTemplatePatch"}),
    "PodTemplatePatch": (frozenset({"metadata", "spec"}), {"metadata": "ObjectMeta", "spec": "PodSpecPatch"}),
    "ObjectMeta": (frozenset({"labels", "annotations", "name", "namespace", "finalizers"}), {}),
    "PodSpecPatch": (
        frozenset(
            {
                "serviceAccountName",
                "volumes",
                "initContainers",
                "containers",
                "imagePullSecrets",
                "securityContext",
                "nodeSelector",
                "affinity",
                "tolerations",
                "schedulingGates",
                "terminationGracePeriodSeconds",
            }
        ),
        {
            "initContainers": "ContainerPatch",
            "containers": "ContainerPatch",
            "imagePullSecrets": "Name",
            "schedulingGates": "Name",
            "tolerations": "Toleration",
        },
    ),
    "ContainerPatch": (
        frozenset({"name", "env", "volumeMounts", "securityContext"}),
        {"env": "EnvVar", "volumeMounts": "VolumeMount"},
    ),
    "EnvVar": (frozenset({"name", "value", "valueFrom"}), {}),
    "VolumeMount": (
        frozenset({"name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation", "subPathExpr"}),
        {},
    ),
    "Toleration": (frozenset({"key", "operator", "value", "effect", "tolerationSeconds"}), {}),
    "Name": (frozenset({"name"}), {}),
}


def _unknown_patch_fields(path: str, value: Any, struct: str) -> list[FieldError]:
    if isinstance(value, list):
        return [e for i, item in enumerate(value) for e in _unknown_patch_fields(f"{path}[{i}]", item, struct)]
    if not isinstance(value, dict):
        return []
    allowed, nested = _PATCH_FIELDS[struct]
    errors = []
    for key, item in value.items():
        child = f"{path}.{key}"
        if key not in allowed:
            errors.append(FieldError(child, f'unknown field "{child}"', kind="FieldValueUnknown"))
        elif key in nested:
            errors += _unknown_patch_fields(child, item, nested[key])
        elif key in STRING_MAPS:
            errors += string_map_errors(child, item)
        elif key == "terminationGracePeriodSeconds" and isinstance(item, int):
            errors += minimum(child, item, 0)
    return errors


def validate_runtime_patch_fields(job: TrainJob) -> list[FieldError]:
    """Unknown fields inside runtimePatches (the API server's strict decoding error)."""
    errors: list[FieldError] = []
    for i, patch in enumerate(job.spec.runtime_patches or []):
        tmpl = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        if tmpl is None:
            continue
        base = f"spec.runtimePatches[{i}].trainingRuntimeSpec.template"
        if tmpl.metadata is not None:
            errors += _unknown_patch_fields(f"{base}.metadata", tmpl.metadata, "ObjectMeta")
        if tmpl.spec is not None:
            errors += _unknown_patch_fields(f"{base}.spec", tmpl.spec, "JobSetSpecPatch")
    return errors


def validate_runtime_patches(job: TrainJob, runtime: TrainingRuntime) -> list[FieldError]:
    """V10–V14 against the runtime as written (before patches are merged)."""
    if trainjob_shape_errors(job) or runtime_shape_errors(runtime):
        return []  # the schema checks report them; the API server stops there too
    errors: list[FieldError] = []
    rjobs = {
        r.get("name"): _container_names(r)
        for r in runtime.spec.template.spec.get("replicatedJobs") or []
        if isinstance(r, dict)
    }
    reserved = (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER, c.NODE)
    for patch in job.spec.runtime_patches or []:
        errors += validate_domain_prefixed_path("spec.runtimePatches.manager", patch.manager)
        tmpl = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        spec = (tmpl.spec if tmpl else None) or {}
        for prj in spec.get("replicatedJobs") or []:
            if not isinstance(prj, dict):
                continue
            name = prj.get("name")
            if name not in rjobs:
                errors.append(
                    FieldError(
                        "spec.runtimePatches",
                        "must not have replicated job that doesn't exist in the runtime job template",
                    )
                )
                continue
            known = rjobs[name]
            pod_spec = (((prj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            for ct in pod_spec.get("initContainers") or []:
                if isinstance(ct, dict) and ct.get("name") not in known:
                    errors.append(
                        FieldError(
                            "spec.runtimePatches",
                            f"must not have initContainer that doesn't exist in the runtime job {name}",
                        )
                    )
            for ct in pod_spec.get("containers") or []:
                if not isinstance(ct, dict):
                    continue
                if ct.get("name") not in known:
                    errors.append(
                        FieldError(
                            "spec.runtimePatches",
                            f"must not have container that doesn't exist in the runtime job {name}",
                        )
                    )
                elif ct.get("env") and ct.get("name") in reserved:
                    errors.append(
                        FieldError(
                            "spec.runtimePatches",
                            "must not have envs for the dataset-initializer, model-initializer, node containers",
                        )
                    )
    return errors


def validate_runtime_ref(job: TrainJob, runtime: TrainingRuntime | None) -> list[FieldError]:
    """V1–V3: the reference must name a trainer runtime kind, and `runtime` must be the one it names."""
    ref = job.spec.runtime_ref
    if ref.api_group != c.TRAINER_GROUP or ref.kind not in c.RUNTIME_KINDS:
        key = f"{ref.kind}.{ref.api_group}" if ref.api_group else ref.kind
        return [FieldError("", f"unsupported runtime: {key}")]
    found = (
        runtime is not None
        and runtime.kind == ref.kind
        and runtime.name == ref.name
        and (ref.kind == c.CLUSTER_TRAINING_RUNTIME_KIND or runtime.metadata.namespace in (None, "", job.namespace))
    )
    if found:
        return []
    return [runtime_not_found(ref.kind, ref.name)]


def runtime_not_found(kind: str, name: str) -> FieldError:
    """V2/V3: the webhook's error when the referenced runtime does not exist (note the capital R
    in the ClusterTrainingRuntime path, ENGINE.md §16 item 40)."""
    if kind == c.TRAINING_RUNTIME_KIND:
        return invalid(
            "spec.runtimeRef",
            name,
            f'trainingruntimes.trainer.kubeflow.org "{name}" not found: specified trainingRuntime '
            "must be created before the TrainJob is created",
        )
    return invalid(
        "spec.RuntimeRef",
        name,
        f'clustertrainingruntimes.trainer.kubeflow.org "{name}" not found: specified '
        "clusterTrainingRuntime must be created before the TrainJob is created",
    )
