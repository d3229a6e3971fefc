"""Flux ML policy: the Flux framework bootstrapped into every node pod
(upstream `plugins/flux/flux.go`, ENGINE.md §6.6). The scripts are ktrain's own
(`flux_assets.py`); they do what upstream's templates do."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import upsert_volume_mounts, upsert_volumes
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins import flux_assets as assets
from ktrain.engine.plugins.base import Plugin, gpu_count, resources_for_detection
from ktrain.engine.plugins.plainml import enforce_plain
from ktrain.errors import FieldError, UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.util.jsondata import Obj


INIT_CONTAINER = "flux-installer"
ENTRYPOINT_SUFFIX = "-flux-entrypoint"
CURVE_SUFFIX = "-flux-curve"
CURVE_VOLUME = "flux-curve"
INSTALL_VOLUME = "flux-install"
SPACK_VOLUME = "spack-install"
SHM_VOLUME = "shared-memory"
CONFIG_DIR = "/etc/flux-config"
VIEW_PATH = assets.FLUX_VIEW_PATH

SETTING_DEFAULTS = {
    "FLUX_VIEW_IMAGE": assets.FLUX_VIEW_IMAGE_DEFAULT,
    "FLUX_NETWORK_DEVICE": assets.FLUX_NETWORK_DEVICE_DEFAULT,
    "FLUX_QUEUE_POLICY": assets.FLUX_QUEUE_POLICY_DEFAULT,
}


def settings(info: RuntimeInfo, runtime_env: list[Obj]) -> dict[str, str]:
    """Defaults, overridden by the runtime trainer container's env, then by `trainer.env`."""
    out = dict(SETTING_DEFAULTS)
    for env in runtime_env:
        if env.get("name") in out and isinstance(env.get("value"), str):
            out[env["name"]] = env["value"]
    trainer = info.job.spec.trainer
    for var in (trainer.env or []) if trainer else []:
        if var.name in out and var.value is not None:
            out[var.name] = var.value
    return out


def _tasks(info: RuntimeInfo) -> int:
    trainer = info.job.spec.trainer
    if trainer is not None and trainer.num_proc_per_node is not None:
        return trainer.num_proc_per_node
    assert info.ml_policy is not None and info.ml_policy.flux is not None
    return info.ml_policy.flux.num_proc_per_node


class FluxPlugin(Plugin):
    name = "flux"
    policy_key = "flux"

    def validate(self, info: RuntimeInfo) -> list[FieldError]:
        errors: list[FieldError] = []
        if _tasks(info) < 1:
            errors.append(
                FieldError("spec.trainer.numProcPerNode", "must be greater than or equal to 1 for Flux TrainJob")
            )
        node = info.pod_set(c.NODE)
        if node is not None and any(
            ct.get("name") == INIT_CONTAINER for ct in node.pod_spec.get("initContainers") or []
        ):
            errors.append(FieldError("spec.trainer.initContainers", f"InitContainer '{INIT_CONTAINER}' is reserved"))
        trainer = info.job.spec.trainer
        if trainer is None or trainer.num_nodes is None:
            # Upstream dereferences both without a check and the reconcile panics.
            errors.append(
                FieldError(
                    "spec.trainer.numNodes", "Required value: a Flux TrainJob must set numNodes", kind="Required"
                )
            )
        return errors

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        trainer = info.job.spec.trainer
        container = info.trainer_container()
        runtime_env = list((container or {}).get("env") or [])
        runtime_command = list((container or {}).get("command") or [])
        enforce_plain(info)
        if trainer is None:
            return
        config = f"{info.name}{ENTRYPOINT_SUFFIX}"
        view_image = settings(info, runtime_env)["FLUX_VIEW_IMAGE"]
        node = info.pod_set(c.NODE)
        if node is not None:
            upsert_volumes(
                node.pod_spec,
                [
                    {"name": SPACK_VOLUME, "emptyDir": {}},
                    {"name": INSTALL_VOLUME, "emptyDir": {}},
                    {"name": config, "configMap": {"name": config, "defaultMode": 0o755}},
                    {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}},
                    {
                        "name": CURVE_VOLUME,
                        "secret": {"secretName": f"{info.name}{CURVE_SUFFIX}", "defaultMode": 0o400},
                    },
                ],
            )
            init_containers = node.pod_spec.setdefault("initContainers", [])
            init_containers.append(
                {
                    "name": INIT_CONTAINER,
                    "image": view_image,
                    "command": ["/bin/bash", f"{CONFIG_DIR}/init.sh"],
                    "volumeMounts": [
                        {"name": INSTALL_VOLUME, "mountPath": "/mnt/flux"},
                        {"name": config, "mountPath": CONFIG_DIR, "readOnly": True},
                    ],
                }
            )
            node_container = node.container(c.NODE)
            if node_container is not None:
                upsert_volume_mounts(
                    node_container,
                    [
                        {"name": INSTALL_VOLUME, "mountPath": "/mnt/flux"},
                        {"name": SPACK_VOLUME, "mountPath": "/opt/software"},
                        {"name": config, "mountPath": CONFIG_DIR, "readOnly": True},
                        {"name": CURVE_VOLUME, "mountPath": "/curve", "readOnly": True},
                        {"name": SHM_VOLUME, "mountPath": "/dev/shm", "readOnly": True},
                    ],
                )
        original = list(trainer.command) if trainer.command is not None else runtime_command
        original += list(trainer.args or [])
        info.trainer_command = ["/bin/bash", f"{CONFIG_DIR}/entrypoint.sh", " ".join(original).strip()]
        info.trainer_args = None  # consumed into the command line above
        info.plugin_state["flux.runtime_env"] = runtime_env

    def build(self, info: RuntimeInfo) -> list[Obj]:
        trainer = info.job.spec.trainer
        if trainer is None or trainer.num_nodes is None:
            return []
        uid = info.job.metadata.uid
        if not uid:
            # What the user gave is not enough to render (exit 2, as any other missing input).
            raise UsageError(
                "the Flux CURVE Secret is derived from the TrainJob uid, which is unknown before the TrainJob exists",
                hint="set metadata.uid (in the job file, or --set metadata.uid=UUID), "
                "or submit with --target trainjob and let the controller build it",
            )
        num_nodes = trainer.num_nodes
        conf = settings(info, info.plugin_state.get("flux.runtime_env", []))
        hosts = assets.hostlist(info.name, num_nodes)
        broker = assets.render_broker_toml(
            job_name=info.name,
            namespace=info.namespace,
            hostlist=hosts,
            network_device=conf["FLUX_NETWORK_DEVICE"],
            queue_policy=conf["FLUX_QUEUE_POLICY"],
        )
        tasks = _tasks(info)
        gpus = gpu_count(resources_for_detection(info))
        init_sh = assets.render_init_sh(VIEW_PATH, f"{info.name}-0", hosts, broker)
        entry_sh = assets.render_entrypoint_sh(
            assets.rspec(tasks, gpus), f"{info.name}-{c.NODE}-0-0", assets.flux_flags(num_nodes, tasks, gpus)
        )
        cert = assets.curve_certificate(info.name, uid)
        from base64 import b64encode  # Flux runtimes only

        return [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": info.object_meta(f"{info.name}{ENTRYPOINT_SUFFIX}"),
                "data": {"entrypoint.sh": entry_sh, "init.sh": init_sh},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": info.object_meta(f"{info.name}{CURVE_SUFFIX}"),
                "data": {"curve.cert": b64encode(cert.encode()).decode()},
            },
        ]
