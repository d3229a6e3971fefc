"""The JobSet: counts, trainer and initializer overrides, scheduler pod metadata, suspend
(upstream `plugins/jobset/{jobset.go,builder.go}`, ENGINE.md §5)."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import convert_env_vars, env_var, upsert_env_vars
from ktrain.engine.field_errors import DNS1123_SUBDOMAIN_MSG, dns1035_label_errors
from ktrain.engine.info import PodSet, RuntimeInfo
from ktrain.engine.plugins.base import Plugin, trainer_env
from ktrain.errors import FieldError
from ktrain.util.dnsnames import is_dns1123_subdomain

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj


def _initializer(info: RuntimeInfo, ps: PodSet, container_name: str, source: Any) -> None:
    ps.rjob["replicas"] = 1
    if source is None:
        return
    container = ps.container(container_name)
    if container is None:
        return
    if source.storage_uri is not None:
        upsert_env_vars(container, [env_var(c.INITIALIZER_ENV_STORAGE_URI, source.storage_uri)])
    upsert_env_vars(container, convert_env_vars([e.to_dict() for e in source.env or []]))
    if source.secret_ref is not None:
        container.setdefault("envFrom", []).append({"secretRef": {"name": source.secret_ref.name}})


def _trainer(info: RuntimeInfo, ps: PodSet) -> None:
    trainer = info.job.spec.trainer
    ps.rjob["replicas"] = 1
    if trainer is None:
        return
    container = ps.container(c.NODE)
    if container is None:
        return
    if trainer.image is not None:
        container["image"] = trainer.image
    if info.trainer_command is not None:
        container["command"] = list(info.trainer_command)
    if info.trainer_args is not None:
        container["args"] = list(info.trainer_args)
    upsert_env_vars(container, trainer_env(info))


def canonical_resources(pod_spec: Obj) -> None:
    # Upstream serialises typed quantities, so `0.7` is sent as `700m` and `4` as "4".
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or []:
            resources = container.get("resources")
            if not isinstance(resources, dict):
                continue
            for section in ("limits", "requests"):
                values = resources.get(section)
                if isinstance(values, dict):
                    from ktrain.engine.quantity import Quantity  # decimal only where a quantity is read

                    resources[section] = {k: Quantity.parse(v).canonical() for k, v in values.items()}


def jobset_name_errors(info: RuntimeInfo) -> list[FieldError]:
    """JobSet admission limits that upstream only reports as a Warning event (§11.4)."""
    errors: list[FieldError] = []
    for ps in info.pod_sets:
        job_name = f"{info.name}-{ps.name}-{max(ps.replicas - 1, 0)}"
        if len(job_name) > 63:
            errors.append(
                FieldError(
                    "metadata.name",
                    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
                )
            )
            break
        pod_name_len = len(job_name) + 1 + len(str(max(ps.count - 1, 0))) + 6
        if pod_name_len > 63:
            errors.append(
                FieldError(
                    "metadata.name",
                    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters",
                )
            )
            break
    names = [ps.name for ps in info.pod_sets]
    for i, rjob in enumerate(info.spec.get("replicatedJobs") or []):
        depends = rjob.get("dependsOn") or []
        if depends and i == 0:
            errors.append(
                FieldError(f"spec.replicatedJobs[{i}].dependsOn", "DependsOn can't be set for the first ReplicatedJob")
            )
            continue
        for dep in depends:
            if dep.get("name") not in names[:i]:
                errors.append(
                    FieldError(
                        f"spec.replicatedJobs[{i}].dependsOn",
                        f"replicatedJob: {rjob.get('name')} cannot depend on replicatedJob: {dep.get('name')}",
                    )
                )
    return errors


def jobset_admission_warnings(info: RuntimeInfo) -> list[str]:
    """Other JobSet webhook rejections (§11.4). The Trainer controller still builds this JobSet
    (the rejection only shows as a Warning event), so they are reported, not raised."""
    errors: list[FieldError] = []
    names = [ps.name for ps in info.pod_sets]
    for target in (info.spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []:
        if target not in names:
            errors.append(
                FieldError(
                    "spec.successPolicy.targetReplicatedJobs",
                    f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs",
                )
            )
    subdomain = (info.spec.get("network") or {}).get("subdomain")
    if isinstance(subdomain, str) and subdomain:
        # The subdomain is also the headless Service name: DNS-1123 subdomain and DNS-1035 label.
        if not is_dns1123_subdomain(subdomain) or len(subdomain) > 253:
            errors.append(FieldError("spec.network.subdomain", DNS1123_SUBDOMAIN_MSG))
        errors += [FieldError("spec.network.subdomain", m) for m in dns1035_label_errors(subdomain)]
    for i, rjob in enumerate(info.spec.get("replicatedJobs") or []):
        group = rjob.get("groupName")
        if isinstance(group, str) and group:
            errors += [FieldError(f"spec.replicatedJobs[{i}].groupName", m) for m in dns1035_label_errors(group)]
        replicas = rjob.get("replicas") if isinstance(rjob.get("replicas"), int) else 1
        if replicas * info.pod_sets[i].count > 2147483647:
            errors.append(
                FieldError(
                    f"spec.replicatedJobs[{i}]",
                    "the product of replicas and parallelism must "
                    f"not exceed 2147483647 for replicatedJob '{rjob.get('name')}'",
                )
            )
    return [f"the JobSet webhook would reject this JobSet: {e}" for e in errors]


class JobSetPlugin(Plugin):
    name = "jobset"
    policy_key = None

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        errors: list[FieldError] = []
        init = info.job.spec.initializer
        for kind, label in (("dataset", "datasetConfig"), ("model", "modelConfig")):
            if init is None or getattr(init, kind) is None:
                continue
            job_name = c.DATASET_INITIALIZER if kind == "dataset" else c.MODEL_INITIALIZER
            ps = info.pod_set(job_name)
            if ps is None:
                errors.append(
                    FieldError(
                        "spec.runtimeRef", f"must have {job_name} job when trainJob is configured with input {label}"
                    )
                )
                continue
            container = ps.container(job_name, include_init=True)
            if container is None:
                errors.append(
                    FieldError("spec.runtimeRef", f"must have container with name - {job_name} in the {job_name} job")
                )
                continue
            if not any(m.get("name") == c.INITIALIZER_VOLUME for m in container.get("volumeMounts") or []):
                errors.append(
                    FieldError(
                        "spec.runtimeRef",
                        f"must have volumeMount with name - {c.INITIALIZER_VOLUME} in container {job_name} "
                        f"of the {job_name} job",
                    )
                )
        return errors

    def build(self, info: RuntimeInfo) -> list[Obj]:
        mpi = info.ml_policy.mpi if info.ml_policy else None
        init = info.job.spec.initializer
        for ps in info.pod_sets:
            job_spec = ps.rjob.setdefault("template", {}).setdefault("spec", {})
            job_spec["parallelism"] = ps.count
            job_spec["completions"] = ps.count
            if ps.ancestor == c.ANCESTOR_DATASET_INITIALIZER:
                _initializer(info, ps, c.DATASET_INITIALIZER, init.dataset if init else None)
            elif ps.ancestor == c.ANCESTOR_MODEL_INITIALIZER:
                _initializer(info, ps, c.MODEL_INITIALIZER, init.model if init else None)
            elif ps.ancestor == c.ANCESTOR_TRAINER:
                _trainer(info, ps)
            if mpi is not None and mpi.run_launcher_as_node and ps.name == c.NODE and ps.ancestor != c.ANCESTOR_TRAINER:
                container = ps.container(c.NODE)
                if container is not None and info.job.spec.trainer is not None:
                    upsert_env_vars(container, trainer_env(info))
            pod_template = job_spec.setdefault("template", {})
            if info.pod_labels or info.pod_annotations:
                meta = pod_template.setdefault("metadata", {})
                if info.pod_labels:
                    meta["labels"] = {**(meta.get("labels") or {}), **info.pod_labels}
                if info.pod_annotations:
                    meta["annotations"] = {**(meta.get("annotations") or {}), **info.pod_annotations}
            canonical_resources(pod_template.setdefault("spec", {}))
        info.spec["suspend"] = info.job.spec.suspend

        metadata = info.object_meta(info.name)
        if info.labels:
            metadata["labels"] = dict(info.labels)
        if info.annotations:
            metadata["annotations"] = dict(info.annotations)
        return [{"apiVersion": c.JOBSET_API_VERSION, "kind": c.JOBSET_KIND, "metadata": metadata, "spec": info.spec}]
