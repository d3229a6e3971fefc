"""What the v1 conversion modules share: the replica roles, the report context, the settings
the v1 spec-level fields collect for a generated runtime, and small helpers."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from ktrain.convert.kinds import KindInfo
from ktrain.convert.report import Row
from ktrain.errors import InputError
from ktrain.inputs.documents import Document, Path, path_text
from ktrain.util.jsondata import Obj

PATCH_MANAGER = "ktrain.io/convert"
# What a runtime patch may set on a pod (ENGINE.md §2.3), besides containers.
PATCHABLE_POD = (
    "volumes",
    "affinity",
    "tolerations",
    "nodeSelector",
    "serviceAccountName",
    "imagePullSecrets",
    "securityContext",
    "terminationGracePeriodSeconds",
    "schedulingGates",
)
# What the TrainJob's trainer (or a container patch) carries for the framework container.
TRAINER_CONTAINER = ("name", "image", "command", "args", "env", "resources", "volumeMounts", "securityContext")
ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")
SERVER_SET_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "finalizers",
    "generateName",
)
TF_SPLIT_ROLES = ("Chief", "Master", "PS", "Evaluator")


@dataclass
class Role:
    type: str  # v1 replica type, e.g. "Worker"
    replicas: int
    restart: str | None  # as written
    template: Obj
    path: Path  # of the replica spec, in the document
    main: int  # index of the framework container
    default_restart: str = "Never"  # what v1 used when restartPolicy is unset

    @property
    def rt(self) -> str:
        return self.type.lower()

    @property
    def container(self) -> Obj:
        container: Obj = self.template["spec"]["containers"][self.main]
        return container


class Ctx:
    def __init__(self, doc: Document, base: Path) -> None:
        self.doc = doc
        self.base = base
        self.rows: list[Row] = []
        self.sources: dict[Path, Path] = {}

    def row(self, path: Path, status: str, target: str, note: str = "") -> None:
        self.rows.append(Row(path_text(path) or "(the job)", status, target, note))

    def error(self, message: str, path: Path, *, hint: str | None = None, key: bool = False) -> InputError:
        return self.doc.error(message, (*self.base, *path), hint=hint, key=key)

    def typed(self, value: Any, kind: type | tuple[type, ...], path: Path, what: str) -> Any:
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if isinstance(kind, tuple) and int in kind and isinstance(value, bool):
            ok = False
        if not ok:
            got = type(value).__name__ if value is not None else "null"
            raise self.error(f"{path_text(path)} must be {what}, got {got} {value!r}"[:200], path)
        return value

    def known(self, mapping: Obj, allowed: tuple[str, ...], path: Path, what: str) -> None:
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                raise self.error(
                    f'unknown field "{path_text((*path, key))}" in {what}',
                    (*path, key),
                    key=True,
                    hint=f"did you mean {close[0]!r}?" if close else f"{what} fields: {', '.join(allowed)}",
                )


def get(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


class Settings:
    """What the v1 spec-level fields (runPolicy, schedulingPolicy, the kind's own fields) set
    for a generated runtime, the rows only a generated runtime makes true, and what blocks a
    bundled one."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.blockers: list[tuple[Path, str]] = []
        self.backoff_limit: int | None = None
        self.launcher_deadline: int | None = None  # mpi-operator v2beta1: the launcher Job's activeDeadlineSeconds
        self.queue: str | None = None
        self.schedule_timeout: int | None = None
        self.priority_class: str | None = None
        self.gang: str | None = None
        self.nproc: int | None = None  # PyTorch nprocPerNode, when a number
        self.nproc_text: str | None = None  # as written (v1 passed it on in PET_NPROC_PER_NODE)
        self.elastic: Obj | None = None  # PyTorch elasticPolicy
        self.tf_sparse = False
        self.tf_success: str | None = None  # TFJob spec.successPolicy ("" or absent: v1's default)
        self.slots: int | None = None
        self.ssh_path: str | None = None
        self.mpi_impl: str | None = None
        self.launcher_as_node = False
        self.wait_workers = False

    def row(self, path: Path, status: str, target: str, note: str = "") -> None:
        self.rows.append(Row(path_text(path) or "(the job)", status, target, note))

    def block(self, path: Path, why: str) -> None:
        self.blockers.append((path, why))


def without_nulls(value: Any) -> Any:
    """A copy without null-valued keys (`command:` with no value): the API server drops them
    too, and a null is not a valid value for the v2 CRDs' typed fields."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def default_pull_policy(image: str) -> str:
    """The imagePullPolicy Kubernetes gives a container that sets none: Always for a `:latest`
    tag or no tag and no digest, else IfNotPresent (k8s.io/kubernetes pkg/apis/core/v1
    `defaults.go` SetDefaults_Container, with `pkg/util/parsers` ParseImageName)."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def int_port(info: KindInfo, role: Role) -> int:
    for port in role.container.get("ports") or []:
        if isinstance(port, dict) and port.get("name") == info.port_name and isinstance(port.get("containerPort"), int):
            return int(port["containerPort"])
    return int(info.default_port or 0)
