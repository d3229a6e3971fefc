"""What a round trip through upstream's Go types does to a mapping: `omitempty` fields at their zero
value vanish, and non-pointer `resource.Quantity` fields are always written.

Upstream never works on the YAML as written. The runtime is read into the typed JobSet
`JobSetSpec` and turned into an apply configuration by JSON-encoding it
(`apply.FromTypedObjWithFields`), and each runtimePatch is JSON-encoded from its typed
`JobSetSpecPatch` before the strategic merge (ENGINE.md §4.2). Go's encoder leaves out a
non-pointer `omitempty` field holding its zero value (`""`, `false`, `0`), so for example a patch
env `{name: A, value: ""}` is sent as `{name: A}` and leaves the runtime's value of `A` alone, and a
runtime mount's `readOnly: false` never reaches the JobSet. Pointer fields (`serviceAccountName` in a
PodSpecPatch, `privileged`, `runAsUser`, ...) keep their zero values.

A non-pointer struct is never "empty" to `omitempty` (neither to `encoding/json` nor to
`runtime.DefaultUnstructuredConverter.ToUnstructured`, whose `isZero` has no struct case), and a
`resource.Quantity` encodes itself as its canonical string. So `ResourceFieldSelector.divisor` comes
out of every round trip as written in canonical form (`1000m` -> `1`), or as `"0"` when it was
unset: every `resourceFieldRef` in the runtime template, in a runtimePatch and in the merged spec
gains `divisor: "0"` (env `valueFrom` and downwardAPI volume items alike). `QUANTITIES` lists such
fields.

`STRUCTS` lists, per Go struct, its non-pointer `omitempty` scalar fields and the struct type of its
nested fields, for the types a render passes through (k8s.io/api core/v1 and batch/v1 v0.36, JobSet
v1alpha2 v0.12.0, trainer `trainjob_types.go`). Fields not listed are kept as written.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj


# struct -> (omitempty scalar fields, {field: struct of the value or of its list items})
_Struct = tuple[frozenset[str], dict[str, str]]


def _s(omit: str = "", **nested: str) -> _Struct:
    return frozenset(omit.split()), nested


STRUCTS: dict[str, _Struct] = {
    # JobSet v1alpha2
    "JobSetSpec": _s(
        replicatedJobs="ReplicatedJob", network="Network", failurePolicy="FailurePolicy", coordinator="Coordinator"
    ),
    "Coordinator": _s("jobIndex podIndex"),
    "Network": _s("subdomain"),
    "FailurePolicy": _s("maxRestarts restartStrategy"),
    "ReplicatedJob": _s("groupName replicas", template="JobTemplateSpec"),
    "JobTemplateSpec": _s(metadata="ObjectMeta", spec="JobSpec"),
    "JobSpec": _s(template="PodTemplateSpec"),
    "PodTemplateSpec": _s(metadata="ObjectMeta", spec="PodSpec"),
    "ObjectMeta": _s("name generateName namespace selfLink uid resourceVersion generation"),
    # core/v1
    "PodSpec": _s(
        "restartPolicy dnsPolicy serviceAccountName serviceAccount nodeName hostNetwork hostPID hostIPC "
        "hostname subdomain schedulerName priorityClassName",
        volumes="Volume",
        initContainers="Container",
        containers="Container",
        imagePullSecrets="LocalObjectReference",
        securityContext="PodSecurityContext",
        tolerations="Toleration",
    ),
    "Container": _s(
        "image workingDir terminationMessagePath terminationMessagePolicy imagePullPolicy stdin stdinOnce tty",
        ports="ContainerPort",
        env="EnvVar",
        envFrom="EnvFromSource",
        volumeMounts="VolumeMount",
        securityContext="SecurityContext",
    ),
    "ContainerPort": _s("name hostPort protocol hostIP"),
    "EnvVar": _s("value", valueFrom="EnvVarSource"),
    "EnvVarSource": _s(
        fieldRef="ObjectFieldSelector",
        resourceFieldRef="ResourceFieldSelector",
        configMapKeyRef="LocalObjectReference",
        secretKeyRef="LocalObjectReference",
    ),
    "ObjectFieldSelector": _s("apiVersion"),
    "DownwardAPIVolumeSource": _s(items="DownwardAPIVolumeFile"),
    "DownwardAPIProjection": _s(items="DownwardAPIVolumeFile"),
    "DownwardAPIVolumeFile": _s(fieldRef="ObjectFieldSelector", resourceFieldRef="ResourceFieldSelector"),
    "ProjectedVolumeSource": _s(sources="VolumeProjection"),
    "VolumeProjection": _s(downwardAPI="DownwardAPIProjection"),
    "ResourceFieldSelector": _s("containerName"),
    "EnvFromSource": _s("prefix", configMapRef="LocalObjectReference", secretRef="LocalObjectReference"),
    "LocalObjectReference": _s("name"),
    "VolumeMount": _s("readOnly subPath subPathExpr"),
    "Volume": _s(
        emptyDir="EmptyDirVolumeSource",
        secret="SecretVolumeSource",
        configMap="LocalObjectReference",
        persistentVolumeClaim="ReadOnlySource",
        nfs="ReadOnlySource",
        downwardAPI="DownwardAPIVolumeSource",
        projected="ProjectedVolumeSource",
    ),
    "EmptyDirVolumeSource": _s("medium"),
    "SecretVolumeSource": _s("secretName"),
    "ReadOnlySource": _s("readOnly"),
    "Toleration": _s("key operator value effect"),
    "PodSecurityContext": _s(seLinuxOptions="SELinuxOptions"),
    "SecurityContext": _s(seLinuxOptions="SELinuxOptions"),
    "SELinuxOptions": _s("user role type level"),
    # trainer v1alpha1 runtimePatches (JobSetSpecPatch and below)
    "JobSetSpecPatch": _s(replicatedJobs="ReplicatedJobPatch"),
    "ReplicatedJobPatch": _s("name", template="JobTemplatePatch"),
    "JobTemplatePatch": _s(metadata="ObjectMeta", spec="JobSpecPatch"),
    "JobSpecPatch": _s(template="PodTemplatePatch"),
    "PodTemplatePatch": _s(metadata="ObjectMeta", spec="PodSpecPatch"),
    "PodSpecPatch": _s(
        volumes="Volume",
        initContainers="ContainerPatch",
        containers="ContainerPatch",
        imagePullSecrets="LocalObjectReference",
        securityContext="PodSecurityContext",
        tolerations="Toleration",
    ),
    "ContainerPatch": _s("name", env="EnvVar", volumeMounts="VolumeMount", securityContext="SecurityContext"),
}


# struct -> its non-pointer `resource.Quantity` fields (k8s.io/api core/v1).
QUANTITIES: dict[str, tuple[str, ...]] = {"ResourceFieldSelector": ("divisor",)}


def _quantity(value: Any) -> Any:
    """A Quantity as Go writes it back; a value that does not parse is left for validation to report."""
    if value is None:
        return "0"
    from ktrain.engine.quantity import Quantity, QuantityError  # decimal only where a quantity is read

    try:
        return Quantity.parse(value).canonical()
    except (QuantityError, TypeError, ValueError):
        return value


def _is_zero(value: Any) -> bool:
    if isinstance(value, bool):
        return value is False
    if isinstance(value, (int, float)):
        return value == 0
    return isinstance(value, str) and value == ""


def drop_zero_values(value: Any, struct: str) -> Any:
    """`value` (a mapping of Go type `struct`, or a list of them) without its zero `omitempty`
    scalars and with its `QUANTITIES` written, at every depth `STRUCTS` knows. The input is not
    changed."""
    if isinstance(value, list):
        return [drop_zero_values(item, struct) for item in value]
    if not isinstance(value, dict) or struct not in STRUCTS:
        return value
    omit, nested = STRUCTS[struct]
    out: Obj = {}
    for key, item in value.items():
        if key in omit and _is_zero(item):
            continue
        out[key] = drop_zero_values(item, nested[key]) if key in nested else item
    for key in QUANTITIES.get(struct, ()):
        out[key] = _quantity(out.get(key))
    return out


def drop_nulls(value: Any) -> Any:
    """`value` without `null` object fields, at every depth: the API server prunes a null in a
    field that is not nullable before anything reads the object. The input is not changed."""
    if isinstance(value, dict):
        return {key: drop_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [drop_nulls(item) for item in value]
    return value
