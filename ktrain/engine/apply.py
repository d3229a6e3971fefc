"""Upsert helpers over plain Kubernetes mappings (upstream `pkg/apply/apply.go`).

"Upsert" = replace the first element that matches, in place, wholesale; else append.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ktrain.util.jsondata import Obj


def _upsert(items: list[Obj], new: Obj, same: Callable[[Obj, Obj], bool]) -> None:
    for i, existing in enumerate(items):
        if same(existing, new):
            items[i] = new
            return
    items.append(new)


def upsert_env_vars(container: Obj, envs: Iterable[Obj]) -> None:
    envs = list(envs)
    if not envs:  # upstream leaves a nil list nil: no `env: []` in the output
        return
    items = container.setdefault("env", [])
    for env in envs:
        _upsert(items, env, lambda a, b: a.get("name") == b.get("name"))


def upsert_ports(container: Obj, ports: Iterable[Obj]) -> None:
    # Upstream compares containerPort OR name with pointer equality, so two ports without a
    # name count as equal: an unnamed runtime port is replaced (ENGINE.md §16 item 38).
    items = container.setdefault("ports", [])
    for port in ports:
        _upsert(
            items,
            port,
            lambda a, b: a.get("containerPort") == b.get("containerPort") or a.get("name") == b.get("name"),
        )


def upsert_volume_mounts(container: Obj, mounts: Iterable[Obj]) -> None:
    items = container.setdefault("volumeMounts", [])
    for mount in mounts:
        _upsert(items, mount, lambda a, b: a.get("mountPath") == b.get("mountPath"))


def upsert_volumes(pod_spec: Obj, volumes: Iterable[Obj]) -> None:
    items = pod_spec.setdefault("volumes", [])
    for volume in volumes:
        _upsert(items, volume, lambda a, b: a.get("name") == b.get("name"))


def env_var(name: str, value: str) -> Obj:
    return {"name": name, "value": value}


def env_field_ref(name: str, field_path: str) -> Obj:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def convert_env_vars(envs: Iterable[Obj] | None) -> list[Obj]:
    """TrainJob env entries as upstream's `apply.EnvVar` turns them into apply configurations.

    Without `valueFrom` the value is always set (`""` when absent). With it, `fieldRef` keeps only
    `fieldPath`; `resourceFieldRef` always carries `containerName`, `resource` and `divisor` (`""`,
    `""`, `"0"` when unset); the key refs always carry `key` and `name`, `optional` only when set;
    other sources vanish (ENGINE.md §5.4, §16 item 37; upstream `pkg/apply/apply.go`).
    """
    out: list[Obj] = []
    for env in envs or []:
        item: Obj = {"name": env.get("name")}
        source = env.get("valueFrom")
        if source is None:
            item["value"] = env.get("value") or ""
            out.append(item)
            continue
        converted: Obj = {}
        if isinstance(source.get("fieldRef"), dict):
            converted["fieldRef"] = {"fieldPath": source["fieldRef"].get("fieldPath") or ""}
        if isinstance(source.get("resourceFieldRef"), dict):
            ref = source["resourceFieldRef"]
            from ktrain.engine.quantity import Quantity  # decimal only where a quantity is read

            converted["resourceFieldRef"] = {
                "containerName": ref.get("containerName") or "",
                "resource": ref.get("resource") or "",
                "divisor": Quantity.parse(ref.get("divisor", "0")).canonical(),
            }
        for key in ("configMapKeyRef", "secretKeyRef"):
            if isinstance(source.get(key), dict):
                ref = source[key]
                converted[key] = {"key": ref.get("key") or "", "name": ref.get("name") or ""}
                if ref.get("optional") is not None:
                    converted[key]["optional"] = ref["optional"]
        item["valueFrom"] = converted
        out.append(item)
    return out


def find_container(pod_spec: Obj, name: str, *, include_init: bool = False) -> Obj | None:
    containers: list[Obj] = pod_spec.get("containers") or []
    for container in containers:
        if container.get("name") == name:
            return container
    if include_init:
        init_containers: list[Obj] = pod_spec.get("initContainers") or []
        for container in init_containers:
            if container.get("name") == name:
                return container
    return None
