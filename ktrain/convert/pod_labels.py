"""The labels the v1 controllers put on every pod, carried where a job reads them.

training-operator (`pkg/controller.v1/common/pod.go` createNewPod with `job_controller.go`
GenLabels, v1.9) labelled each pod `training.kubeflow.org/operator-name` (the controller's name),
`training.kubeflow.org/job-name`, `training.kubeflow.org/replica-type` (the type, lower case),
`training.kubeflow.org/replica-index` (the pod's index within its type) and, where the framework's
IsMasterRole said so, `training.kubeflow.org/job-role: master`. mpi-operator v2beta1
(`pkg/controller/mpi_job_controller.go` defaultLabels, newWorker) put operator-name `mpi-operator`,
job-name and job-role `launcher` / `worker` on its pods, and replica-index on the workers only.

JobSet pods have none of them, so a downward-API env var reading one resolves to "" and a selector
matching one matches nothing. Here, per replicated job of the layout:

- a fieldRef to job-name reads `jobset.sigs.k8s.io/jobset-name` (the JobSet is named after the job);
- a fieldRef to replica-index reads the pod's index where it is v1's: the Job completion index (one
  pod per replica in one Job) or `jobset.sigs.k8s.io/job-index` (one Job per replica);
- a label whose value is the same for every pod of the step (operator-name, replica-type, job-role)
  is put on the step's pod template, for fieldRefs, selectors and scripts alike;
- what has no counterpart (replica-index outside a fieldRef, JAX's job-role of worker 0) is reported.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ktrain import constants as c
from ktrain.convert.common import Ctx, Role
from ktrain.convert.compat import Layout, Placement
from ktrain.convert.kinds import V1, KindInfo
from ktrain.convert.report import APPROXIMATED, KEPT
from ktrain.inputs.documents import Path
from ktrain.util.jsondata import Obj

PREFIX = "training.kubeflow.org/"
OPERATOR_NAME = PREFIX + "operator-name"
JOB_NAME = PREFIX + "job-name"
REPLICA_TYPE = PREFIX + "replica-type"
REPLICA_INDEX = PREFIX + "replica-index"
JOB_ROLE = PREFIX + "job-role"
V1_LABELS = (OPERATOR_NAME, JOB_NAME, REPLICA_TYPE, REPLICA_INDEX, JOB_ROLE)
# The labels whose value differs between a Master and a Worker (a step they share cannot carry them).
PER_ROLE = (REPLICA_TYPE, REPLICA_INDEX, JOB_ROLE)
# Each controller's name (GenLabels: the reconciler's controllerName const).
OPERATORS = {
    "PyTorchJob": "pytorchjob-controller",
    "TFJob": "tfjob-controller",
    "XGBoostJob": "xgboostjob-controller",
    "PaddleJob": "paddlejob-controller",
    "JAXJob": "jaxjob-controller",
    "MXJob": "mxjob-controller",
    "MPIJob": "mpijob-controller",
}
# IsMasterRole of each reconciler: the replica types whose pods were `job-role: master`.
MASTER_ROLES = {
    "PyTorchJob": ("Master",),
    "XGBoostJob": ("Master",),
    "PaddleJob": ("Master",),
    "TFJob": ("Chief", "Master"),
    "MXJob": ("Server",),
    "MPIJob": ("Launcher",),
}
_FIELD_PATH = re.compile(r"^metadata\.labels\['(?P<key>[^']+)'\]$")


def reads(template: Any, keys: tuple[str, ...] = V1_LABELS) -> set[str]:
    """The v1 label keys a pod template mentions anywhere (a fieldRef, a selector, a script)."""
    text = json.dumps(template, default=str)
    return {k for k in keys if k in text}


def static_labels(info: KindInfo, api: str, role: Role, name: str) -> dict[str, str]:
    """The v1 labels every pod of this replica type had, with the same value."""
    if info.kind == "MPIJob" and api != V1:
        return {OPERATOR_NAME: "mpi-operator", JOB_NAME: name, JOB_ROLE: role.type.lower()}
    out = {OPERATOR_NAME: OPERATORS[info.kind], JOB_NAME: name, REPLICA_TYPE: role.rt}
    if role.type in MASTER_ROLES.get(info.kind, ()):
        out[JOB_ROLE] = "master"
    return out


def _index_path(place: Placement) -> str | None:
    """The downward-API path whose value is v1's replica index for every pod of the step."""
    if place.per_job:
        return f"metadata.labels['{c.JOBSET_JOB_INDEX_LABEL}']"
    if place.offset == 0:
        return c.COMPLETION_INDEX_FIELD_PATH
    return None


def carry(ctx: Ctx, info: KindInfo, api: str, roles: list[Role], name: str, layout: Layout) -> list[Role]:
    """Each role with its fieldRefs to v1 labels mapped and the step-wide v1 labels it reads put on
    its pod template (a copy; rows say what became of each)."""
    out = []
    for role in roles:
        keys = reads(role.template)
        place = layout.get(role.type)
        if not keys or place is None:
            out.append(role)
            continue
        template = copy.deepcopy(role.template)
        statics = static_labels(info, api, role, name)
        _map_field_refs(ctx, role, template, place, statics)
        remaining = reads(template)
        wanted = {k: v for k, v in statics.items() if k in remaining}
        if wanted:
            meta = template.setdefault("metadata", {})
            labels = meta.setdefault("labels", {})
            for key, value in wanted.items():
                labels.setdefault(key, value)
            ctx.row(
                (*role.path, "template", "metadata", "labels"),
                KEPT,
                "pod template labels " + ", ".join(f"{k}={v}" for k, v in sorted(wanted.items())),
                "the v1 controller's labels, which the job's pods read (a fieldRef, a selector or a script): "
                "JobSet does not set them",
            )
        for key in sorted(remaining - set(wanted)):
            ctx.row(
                (*role.path, "template"),
                APPROXIMATED,
                "-",
                f"names v1's pod label {key}, which has no counterpart on these JobSet pods"
                + (
                    " (each pod's index: batch.kubernetes.io/job-completion-index, jobset.sigs.k8s.io/job-index)"
                    if key == REPLICA_INDEX
                    else ""
                )
                + ": a selector or script using it matches nothing",
            )
        out.append(Role(role.type, role.replicas, role.restart, template, role.path, role.main, role.default_restart))
    return out


def _map_field_refs(ctx: Ctx, role: Role, template: Obj, place: Placement, statics: dict[str, str]) -> None:
    """fieldRefs to job-name and replica-index -> JobSet's counterparts, in `template`."""
    for key, i, cont in _containers(template):
        for j, env in enumerate(cont.get("env") or []):
            ref = ((env.get("valueFrom") or {}).get("fieldRef") or {}) if isinstance(env, dict) else {}
            m = _FIELD_PATH.match(str(ref.get("fieldPath", "")))
            if not m or not m.group("key").startswith(PREFIX):
                continue
            label = m.group("key")
            at: Path = (*role.path, "template", "spec", key, i, "env", j, "valueFrom", "fieldRef", "fieldPath")
            new = _counterpart(label, place)
            if new is not None:
                ref["fieldPath"] = new
                ctx.row(at, KEPT, f"fieldRef {new}", f"v1's pod label {label} has the same value there under JobSet")
            elif label in statics:
                ctx.row(at, KEPT, f"fieldRef {label} (label put on the pods)", f"{label}={statics[label]}, as v1")


def _counterpart(label: str, place: Placement) -> str | None:
    if label == JOB_NAME:
        return f"metadata.labels['{c.JOBSET_NAME_LABEL}']"
    if label == REPLICA_INDEX:
        return _index_path(place)
    return None


def _containers(template: Obj) -> list[tuple[str, int, Obj]]:
    spec = template.get("spec") or {}
    return [
        (key, i, cont)
        for key in ("initContainers", "containers")
        for i, cont in enumerate(spec.get(key) or [])
        if isinstance(cont, dict)
    ]
