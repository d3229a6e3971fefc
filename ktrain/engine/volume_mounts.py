"""A volumeMount (or volumeDevice) must name a volume of its pod.

The API server refuses such a pod (k8s.io/kubernetes `pkg/apis/core/validation/validation.go`
ValidateVolumeMounts / ValidateVolumeDevices: `field.NotFound(idxPath.Child("name"), mnt.Name)`,
printed `spec.containers[0].volumeMounts[0].name: Not found: "x"`), but only when the Job
controller creates the pod: the TrainingRuntime, the TrainJob and the JobSet are accepted long
before. So `ktrain job validate` / `render` check the pod templates of the runtime (as written) and
of the TrainJob's runtime patches (against the runtime they patch) here, with the field paths of the
object the user wrote.

A pod's volumes are its template's, plus what is added before the pod exists: JobSet's
`volumeClaimPolicies` (a volume per claim template, on every pod that mounts it), the MPI policy's
SSH and hostfile volumes and the Flux policy's volumes (the Trainer plugins add them to the rendered
pods), and, for a patched template, the volumes every runtime patch gives that replicated job.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import FieldError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj
CONTAINER_KEYS = ("initContainers", "containers", "ephemeralContainers")
RJOB_POD = "template.spec.template.spec"


def _pod_spec(rjob: Any) -> Obj:
    if not isinstance(rjob, dict):
        return {}
    spec = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def volume_names(pod_spec: Obj) -> set[str]:
    return {str(v.get("name")) for v in pod_spec.get("volumes") or [] if isinstance(v, dict)}


def pod_mount_errors(pod_path: str, pod_spec: Obj, volumes: set[str]) -> list[FieldError]:
    """Every container's volumeMounts[].name and volumeDevices[].name must be in `volumes`."""
    errors: list[FieldError] = []
    for key in CONTAINER_KEYS:
        containers = pod_spec.get(key)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            if not isinstance(container, dict):
                continue
            for field in ("volumeMounts", "volumeDevices"):
                items = container.get(field)
                if not isinstance(items, list):
                    continue
                for j, mount in enumerate(items):
                    if not isinstance(mount, dict) or "name" not in mount:
                        continue
                    name = mount.get("name")
                    if str(name) not in volumes:
                        errors.append(
                            FieldError(f"{pod_path}.{key}[{i}].{field}[{j}].name", f'Not found: "{name}"', "NotFound")
                        )
    return errors


def added_volumes(runtime_spec: Any, rjob_name: str) -> set[str]:
    """The volumes a replicated job's pods get besides their template's (see the module doc)."""
    out: set[str] = set()
    template_spec = (getattr(getattr(runtime_spec, "template", None), "spec", None)) or {}
    for policy in template_spec.get("volumeClaimPolicies") or [] if isinstance(template_spec, dict) else []:
        for claim in (policy.get("templates") or []) if isinstance(policy, dict) else []:
            name = ((claim.get("metadata") or {}).get("name")) if isinstance(claim, dict) else None
            if name:
                out.add(str(name))
    ml = getattr(runtime_spec, "ml_policy", None)
    if ml is not None and ml.mpi is not None and rjob_name in (c.NODE, c.LAUNCHER):
        from ktrain.engine.plugins import mpi  # only for an MPI runtime

        out.add(mpi.SSH_AUTH_VOLUME)
        if rjob_name == c.LAUNCHER:
            out.add(mpi.HOSTFILE_VOLUME)
    if ml is not None and ml.flux is not None and rjob_name == c.NODE:
        from ktrain.engine.plugins import flux  # only for a Flux runtime

        out |= {flux.SPACK_VOLUME, flux.INSTALL_VOLUME, flux.SHM_VOLUME, flux.CURVE_VOLUME}
    return out


def _flux_config(ml: Any, rjob_name: str, name: str) -> bool:
    if ml is None or ml.flux is None or rjob_name != c.NODE:
        return False
    from ktrain.engine.plugins import flux  # only for a Flux runtime

    return name.endswith(flux.ENTRYPOINT_SUFFIX)


def _without_flux_config(errors: list[FieldError], ml: Any, rjob_name: str) -> list[FieldError]:
    """The Flux policy's entrypoint ConfigMap volume is named after the TrainJob."""
    return [e for e in errors if not _flux_config(ml, rjob_name, e.message[len('Not found: "') : -1])]


def runtime_mount_errors(runtime_spec: Any, patches: list[Any] | None = None) -> list[FieldError]:
    """The runtime's own pod templates (`spec.template.spec.replicatedJobs[i]...`); with a TrainJob's
    `patches`, the volumes they give a replicated job count as its pods' too."""
    template_spec = getattr(getattr(runtime_spec, "template", None), "spec", None)
    if not isinstance(template_spec, dict):
        return []
    ml = getattr(runtime_spec, "ml_policy", None)
    from_patches = _patch_volumes(patches or [], template_spec)
    errors: list[FieldError] = []
    for i, rjob in enumerate(template_spec.get("replicatedJobs") or []):
        if not isinstance(rjob, dict):
            continue
        name = str(rjob.get("name"))
        pod = _pod_spec(rjob)
        volumes = volume_names(pod) | added_volumes(runtime_spec, name) | from_patches.get(name, set())
        found = pod_mount_errors(f"spec.template.spec.replicatedJobs[{i}].{RJOB_POD}", pod, volumes)
        errors += _without_flux_config(found, ml, name)
    return errors


def _patched_pods(patches: list[Any], template_spec: Obj) -> list[tuple[int, int, str, Obj]]:
    """(patch index, replicated job index in the patch, its name, the patched pod spec)."""
    names = {str(r.get("name")) for r in template_spec.get("replicatedJobs") or [] if isinstance(r, dict)}
    patched: list[tuple[int, int, str, Obj]] = []
    for p, patch in enumerate(patches):
        spec = getattr(patch, "training_runtime_spec", None)
        tmpl = getattr(spec, "template", None) if spec is not None else None
        tspec = getattr(tmpl, "spec", None) if tmpl is not None else None
        if not isinstance(tspec, dict):
            continue
        for r, prj in enumerate(tspec.get("replicatedJobs") or []):
            if isinstance(prj, dict) and str(prj.get("name")) in names:
                patched.append((p, r, str(prj["name"]), _pod_spec(prj)))
    return patched


def _patch_volumes(patches: list[Any], template_spec: Obj) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for _, _, name, pod in _patched_pods(patches, template_spec):
        out.setdefault(name, set()).update(volume_names(pod))
    return out


def patch_mount_errors(patches: list[Any], runtime_spec: Any) -> list[FieldError]:
    """The TrainJob's runtime patches: a patched container's mounts must name a volume of the
    patched pod (the runtime's, any patch's for that replicated job, or an added one)."""
    template_spec = getattr(getattr(runtime_spec, "template", None), "spec", None)
    if not isinstance(template_spec, dict):
        return []
    ml = getattr(runtime_spec, "ml_policy", None)
    base_volumes = {
        str(r.get("name")): volume_names(_pod_spec(r))
        for r in template_spec.get("replicatedJobs") or []
        if isinstance(r, dict)
    }
    patched = _patched_pods(patches, template_spec)
    extra = _patch_volumes(patches, template_spec)
    errors: list[FieldError] = []
    for p, r, name, pod in patched:
        volumes = base_volumes[name] | extra[name] | added_volumes(runtime_spec, name)
        path = f"spec.runtimePatches[{p}].trainingRuntimeSpec.template.spec.replicatedJobs[{r}].{RJOB_POD}"
        errors += _without_flux_config(pod_mount_errors(path, pod, volumes), ml, name)
    return errors
