"""TrainJobStatus: how trainer pods reach the controller's status server (upstream
`pkg/runtime/framework/plugins/trainjobstatus/trainjobstatus.go`, ENGINE.md §6.7).

Selected only when the controller's feature gate `TrainJobStatus` is on (alpha, default off):
`RenderContext.status_server` is then set. For every TrainJob, whatever its ML policy:

- EnforceMLPolicy: into every container of the first trainer PodSet, the three
  `KUBEFLOW_TRAINER_SERVER_*` variables and the read-only mount of the projected volume
  `kubeflow-trainer-token`; that volume (a service-account token whose audience is the TrainJob's
  status path, and the `ca.crt` of `<job>-tls-config`) into the PodSet's pod spec.
- Build: the ConfigMap `<job>-tls-config` holding the CA the controller copies from its webhook
  Secret. An offline render cannot know it: `ca.crt` is then empty, and the caller says so.

Upstream runs this beside the ML plugin in one stage, in Go map order (ENGINE.md §3.2), so the
three variables land before or after the ML plugin's; here they always come after.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.apply import env_var, upsert_env_vars, upsert_volume_mounts, upsert_volumes
from ktrain.engine.info import RuntimeInfo
from ktrain.engine.plugins.base import Plugin

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.engine.context import StatusServer
    from ktrain.util.jsondata import Obj

ENV_SERVER_URL = "KUBEFLOW_TRAINER_SERVER_URL"
ENV_CA_CERT = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
ENV_TOKEN = "KUBEFLOW_TRAINER_SERVER_TOKEN"
ENV_NAMES = (ENV_SERVER_URL, ENV_CA_CERT, ENV_TOKEN)
CONFIG_MOUNT_PATH = "/var/run/secrets/kubeflow/trainer"
CA_CERT_FILE = "ca.crt"
TOKEN_FILE = "token"
TOKEN_VOLUME = "kubeflow-trainer-token"
TOKEN_EXPIRY_SECONDS = 3600
CA_CERT_KEY = "ca.crt"
TLS_CONFIG_SUFFIX = "-tls-config"
# The Secret the controller copies the CA from (certManagement.webhookSecretName's default), in its namespace.
WEBHOOK_SECRET = "kubeflow-trainer-webhook-cert"


def status_path(namespace: str, name: str) -> str:
    """upstream `statusserver.StatusUrl`: the path the status server serves for one TrainJob."""
    return f"/apis/{c.TRAINER_API_VERSION}/namespaces/{namespace}/trainjobs/{name}/status"


def token_audience(namespace: str, name: str) -> str:
    """upstream `statusserver.TokenAudience`: the audience of the pods' projected token."""
    return f"{c.TRAINER_API_VERSION}/namespaces/{namespace}/trainjobs/{name}/status"


def server_url(server: StatusServer, namespace: str, name: str) -> str:
    return f"https://{server.service}.{server.namespace}.svc:{server.port}{status_path(namespace, name)}"


def tls_config_name(job_name: str) -> str:
    return f"{job_name}{TLS_CONFIG_SUFFIX}"


def _token_volume(info: RuntimeInfo) -> Obj:
    return {
        "name": TOKEN_VOLUME,
        "projected": {
            "sources": [
                {
                    "serviceAccountToken": {
                        "audience": token_audience(info.namespace, info.name),
                        "expirationSeconds": TOKEN_EXPIRY_SECONDS,
                        "path": TOKEN_FILE,
                    }
                },
                {
                    "configMap": {
                        "name": tls_config_name(info.name),
                        "items": [{"key": CA_CERT_KEY, "path": CA_CERT_FILE}],
                    }
                },
            ]
        },
    }


class TrainJobStatusPlugin(Plugin):
    name = "TrainJobStatus"
    policy_key = None  # selected by the feature gate, not by a runtime policy

    def enforce_ml_policy(self, info: RuntimeInfo) -> None:
        server = info.ctx.status_server
        ps = info.trainer_pod_set()
        if server is None or ps is None:
            return
        envs = [
            env_var(ENV_SERVER_URL, server_url(server, info.namespace, info.name)),
            env_var(ENV_CA_CERT, f"{CONFIG_MOUNT_PATH}/{CA_CERT_FILE}"),
            env_var(ENV_TOKEN, f"{CONFIG_MOUNT_PATH}/{TOKEN_FILE}"),
        ]
        for container in ps.pod_spec.get("containers") or []:
            upsert_env_vars(container, [dict(e) for e in envs])
            upsert_volume_mounts(container, [{"name": TOKEN_VOLUME, "mountPath": CONFIG_MOUNT_PATH, "readOnly": True}])
        upsert_volumes(ps.pod_spec, [_token_volume(info)])

    def build(self, info: RuntimeInfo) -> list[Obj]:
        server = info.ctx.status_server
        if server is None:
            return []
        return [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": info.object_meta(tls_config_name(info.name)),
                "data": {CA_CERT_KEY: server.ca_cert or ""},
            }
        ]
