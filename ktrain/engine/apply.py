"""Upsert helpers over plain Kubernetes mappings (upstream `pkg/apply/apply.go`).

"Upsert" = replace the first element that matches, in place, wholesale; else append.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]


def _upsert(items: list[Obj], new: Obj, same: Callable[[Obj, Obj], bool]) -> None:
    for i, existing in enumerate(items):
        if same(existing, new):
            items[i] = new
            return
    items.append(new)


def upsert_env_vars(container: Obj, envs: Iterable[Obj]) -> None:
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
    """TrainJob env entries as upstream's `apply.EnvVars` turns them into apply configurations.

    `fieldRef.apiVersion` is dropped, `resourceFieldRef.divisor` is always emitted ("0" when
    unset) and sources other than the four known ones vanish (ENGINE.md §5.4, §16 item 37).
    """
    out: list[Obj] = []
    for env in envs or []:
        item: Obj = {"name": env.get("name")}
        source = env.get("valueFrom")
        if source is None:
            if env.get("value") is not None:
                item["value"] = env["value"]
            out.append(item)
            continue
        converted: Obj = {}
        if isinstance(source.get("fieldRef"), dict):
            converted["fieldRef"] = {"fieldPath": source["fieldRef"].get("fieldPath")}
        if isinstance(source.get("resourceFieldRef"), dict):
            ref = source["resourceFieldRef"]
            res: Obj = {}
            if ref.get("containerName") is not None:
                res["containerName"] = ref["containerName"]
            if ref.get("resource") is not None:
                res["resource"] = ref["resource"]
            res["divisor"] = str(ref.get("divisor", "0"))
            converted["resourceFieldRef"] = res
        for key in ("configMapKeyRef", "secretKeyRef"):
            if isinstance(source.get(key), dict):
                ref = source[key]
                converted[key] = {k: ref[k] for k in ("key", "name", "optional") if k in ref}
        item["valueFrom"] = converted
        out.append(item)
    return out


def find_container(pod_spec: Obj, name: str, *, include_init: bool = False) -> Obj | None:
    for container in pod_spec.get("containers") or []:
        if container.get("name") == name:
            return container
    if include_init:
        for container in pod_spec.get("initContainers") or []:
            if container.get("name") == name:
                return container
    return None
