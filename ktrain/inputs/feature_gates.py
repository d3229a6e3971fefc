"""The Trainer controller's feature gates, as a render selects plugins by them.

`--feature-gates TrainJobStatus=true` (or `$KTRAIN_FEATURE_GATES`, or the KRM function's
`featureGates`) says what the controller that will reconcile the job has enabled, in the
controller's own syntax (`k8s.io/component-base/featuregate`: `Name=bool,Name=bool`). The one gate
the Trainer knows today is `TrainJobStatus` (alpha, default off: upstream `pkg/features`), which
adds the TrainJobStatus plugin (ENGINE.md §6.7); `--status-server SERVICE.NAMESPACE:PORT` (or
`$KTRAIN_STATUS_SERVER`) names where that controller's status server listens when its
configuration changes the defaults (`certManagement.webhookServiceName`, the controller's
namespace, `trainJobStatusServer.port`).
"""

from __future__ import annotations

from ktrain.engine.context import StatusServer
from ktrain.errors import UsageError

ENV_FEATURE_GATES = "KTRAIN_FEATURE_GATES"
ENV_STATUS_SERVER = "KTRAIN_STATUS_SERVER"
TRAINJOB_STATUS = "TrainJobStatus"
# Name -> (default, pre-release stage), as upstream `pkg/features/features.go`.
KNOWN_GATES = {TRAINJOB_STATUS: (False, "ALPHA")}
_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool
_FALSE = ("0", "f", "F", "FALSE", "false", "False")
MAX_TEXT = 4096


def parse_feature_gates(text: str | None, source: str = "--feature-gates") -> dict[str, bool]:
    """`Name=bool,...` as component-base's `featureGate.Set` reads it, with its errors
    (`AllAlpha`/`AllBeta` set every alpha/beta gate)."""
    gates: dict[str, bool] = {}
    if not text:
        return gates
    if len(text) > MAX_TEXT:
        raise UsageError(f"{source}: longer than {MAX_TEXT} characters")
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise UsageError(f"{source}: missing bool value for {key[:100]}")
        if value in _TRUE:
            enabled = True
        elif value in _FALSE:
            enabled = False
        else:
            shown = value[:100]
            raise UsageError(
                f"{source}: invalid value of {key[:100]}={shown}, "
                f'err: strconv.ParseBool: parsing "{shown}": invalid syntax'
            )
        if key in ("AllAlpha", "AllBeta"):
            stage = "ALPHA" if key == "AllAlpha" else "BETA"
            for name, (_, pre) in KNOWN_GATES.items():
                if pre == stage:
                    gates.setdefault(name, enabled)
            continue
        if key not in KNOWN_GATES:
            raise UsageError(
                f"{source}: unrecognized feature gate: {key[:100]}",
                hint=f"the Trainer's feature gates are {', '.join(KNOWN_GATES)}",
            )
        gates[key] = enabled
    return gates


def merged_gates(environment: str | None, flag: str | None) -> dict[str, bool]:
    """The environment's gates, then the flag's over them (as a controller's config file, then its flag)."""
    gates = parse_feature_gates(environment, f"${ENV_FEATURE_GATES}")
    gates.update(parse_feature_gates(flag))
    return gates


def enabled(gates: dict[str, bool], name: str) -> bool:
    return gates.get(name, KNOWN_GATES[name][0])


def _label(value: str, what: str, source: str) -> str:
    from ktrain.util.dnsnames import is_dns1123_label

    if not is_dns1123_label(value):
        raise UsageError(f"{source}: the {what} {value[:100]!r} is not a DNS label", hint="give SERVICE.NAMESPACE:PORT")
    return value


def parse_status_server(text: str | None, source: str = "--status-server") -> StatusServer:
    """`SERVICE.NAMESPACE:PORT`, `SERVICE.NAMESPACE` or `:PORT` over the controller's defaults."""
    default = StatusServer()
    if not text:
        return default
    if len(text) > 600:
        raise UsageError(f"{source}: longer than 600 characters")
    host, colon, port_text = text.strip().rpartition(":") if ":" in text else (text.strip(), "", "")
    port = default.port
    if colon:
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise UsageError(f"{source}: the port {port_text[:20]!r} is not a number from 1 to 65535")
        port = int(port_text)
    service, namespace = default.service, default.namespace
    if host:
        service, dot, namespace = host.removesuffix(".svc").partition(".")
        if not dot:
            raise UsageError(f"{source}: {host[:100]!r} names no namespace", hint="give SERVICE.NAMESPACE:PORT")
        _label(service, "service", source)
        _label(namespace, "namespace", source)
    return StatusServer(service=service, namespace=namespace, port=port)


def status_server_for(gates: dict[str, bool], server: str | None, ca_cert: str | None = None) -> StatusServer | None:
    """The render's status server when the TrainJobStatus gate is on, else None."""
    if not enabled(gates, TRAINJOB_STATUS):
        return None
    found = parse_status_server(server)
    return StatusServer(service=found.service, namespace=found.namespace, port=found.port, ca_cert=ca_cert)


def offline_ca_note(job_name: str, server: StatusServer) -> str:
    """What an offline render cannot know about the TrainJobStatus plugin's objects."""
    return (
        f"TrainJobStatus: ConfigMap {job_name}-tls-config holds the CA the controller copies from its Secret "
        f"{server.namespace}/kubeflow-trainer-webhook-cert, which only the cluster knows: ca.crt is left empty here "
        "(job create and job diff read it from the cluster)"
    )
