"""The JSON types the API server's schema gives the free-form parts of a runtime and a patch.

A runtime's `spec.template` and a runtimePatch's `trainingRuntimeSpec.template` are kept as plain
mappings (the JobSet, Job and Pod schemas are too large to model), but the merge and the plugins
read into them: a `replicatedJobs: 5`, a `containers: abc` or a `parallelism: 1e100` would
otherwise surface as a Python crash. The API server checks every such value against the CRD's
structural schema before anything else sees it; `shape_errors` does the same for the fields ktrain
reads or writes (and the int32/int64 fields around them), in the API server's words:

    spec.template.spec.replicatedJobs: Invalid value: "integer": spec.template.spec.replicatedJobs
    in body must be of type array: "integer"

Fields not listed here are not checked (they pass through untouched). A `null` is an unset field.
"""

from __future__ import annotations

from ktrain.api.base import openapi_type
from ktrain.errors import FieldError
from ktrain.util.jsondata import dumps

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any, Final

    Shape = Any

# A type: "string", "boolean", "int32", "int64", "quantity" (int-or-string), "any", or a tuple:
# ("object", {field: type}) with unknown fields unchecked, ("array", item), ("map", value).

INT32: Final = (-(2**31), 2**31 - 1)
INT64: Final = (-(2**63), 2**63 - 1)

_STR: Final = "string"
_BOOL: Final = "boolean"
_I32: Final = "int32"
_I64: Final = "int64"
_QTY: Final = "quantity"


def _obj(**fields: Shape) -> Shape:
    return ("object", fields)


def _arr(item: Shape) -> Shape:
    return ("array", item)


def _map(value: Shape) -> Shape:
    return ("map", value)


_STRINGS: Final = _arr(_STR)
_STRING_MAP: Final = _map(_STR)
_FREE: Final = _obj()  # an object whose fields ktrain does not read

OBJECT_META: Final = _obj(
    name=_STR,
    generateName=_STR,
    namespace=_STR,
    labels=_STRING_MAP,
    annotations=_STRING_MAP,
    finalizers=_STRINGS,
)
_NAMED: Final = _obj(name=_STR)
_REF: Final = _obj(name=_STR, optional=_BOOL)
_RESOURCES: Final = _obj(limits=_map(_QTY), requests=_map(_QTY), claims=_arr(_obj(name=_STR, request=_STR)))
_KEY_TO_PATH: Final = _arr(_obj(key=_STR, path=_STR, mode=_I32))
_VOLUME: Final = _obj(
    name=_STR,
    secret=_obj(secretName=_STR, defaultMode=_I32, items=_KEY_TO_PATH, optional=_BOOL),
    configMap=_obj(name=_STR, defaultMode=_I32, items=_KEY_TO_PATH, optional=_BOOL),
    emptyDir=_obj(medium=_STR, sizeLimit=_QTY),
    hostPath=_obj(path=_STR, type=_STR),
    persistentVolumeClaim=_obj(claimName=_STR, readOnly=_BOOL),
    projected=_obj(defaultMode=_I32, sources=_arr(_FREE)),
    ephemeral=_obj(volumeClaimTemplate=_obj(metadata=OBJECT_META, spec=_FREE)),
)
_PROBE: Final = _obj(
    initialDelaySeconds=_I32,
    timeoutSeconds=_I32,
    periodSeconds=_I32,
    successThreshold=_I32,
    failureThreshold=_I32,
    terminationGracePeriodSeconds=_I64,
)
CONTAINER: Final = _obj(
    name=_STR,
    image=_STR,
    command=_STRINGS,
    args=_STRINGS,
    workingDir=_STR,
    env=_arr(_obj(name=_STR, value=_STR, valueFrom=_FREE)),
    envFrom=_arr(_obj(prefix=_STR, configMapRef=_REF, secretRef=_REF)),
    ports=_arr(_obj(name=_STR, containerPort=_I32, hostPort=_I32, protocol=_STR, hostIP=_STR)),
    volumeMounts=_arr(
        _obj(
            name=_STR,
            mountPath=_STR,
            readOnly=_BOOL,
            subPath=_STR,
            subPathExpr=_STR,
            mountPropagation=_STR,
            recursiveReadOnly=_STR,
        )
    ),
    volumeDevices=_arr(_obj(name=_STR, devicePath=_STR)),
    resources=_RESOURCES,
    imagePullPolicy=_STR,
    restartPolicy=_STR,
    securityContext=_FREE,
    livenessProbe=_PROBE,
    readinessProbe=_PROBE,
    startupProbe=_PROBE,
    lifecycle=_FREE,
    stdin=_BOOL,
    stdinOnce=_BOOL,
    tty=_BOOL,
    terminationMessagePath=_STR,
    terminationMessagePolicy=_STR,
    resizePolicy=_arr(_obj(resourceName=_STR, restartPolicy=_STR)),
)
POD_SPEC: Final = _obj(
    containers=_arr(CONTAINER),
    initContainers=_arr(CONTAINER),
    ephemeralContainers=_arr(CONTAINER),
    volumes=_arr(_VOLUME),
    imagePullSecrets=_arr(_NAMED),
    schedulingGates=_arr(_NAMED),
    resourceClaims=_arr(_NAMED),
    readinessGates=_arr(_obj(conditionType=_STR)),
    hostAliases=_arr(_obj(ip=_STR, hostnames=_STRINGS)),
    tolerations=_arr(_obj(key=_STR, operator=_STR, value=_STR, effect=_STR, tolerationSeconds=_I64)),
    topologySpreadConstraints=_arr(
        _obj(maxSkew=_I32, minDomains=_I32, topologyKey=_STR, whenUnsatisfiable=_STR, labelSelector=_FREE)
    ),
    nodeSelector=_STRING_MAP,
    overhead=_map(_QTY),
    resources=_RESOURCES,
    affinity=_FREE,
    securityContext=_FREE,
    dnsConfig=_FREE,
    os=_NAMED,
    serviceAccountName=_STR,
    serviceAccount=_STR,
    schedulerName=_STR,
    restartPolicy=_STR,
    priorityClassName=_STR,
    priority=_I32,
    preemptionPolicy=_STR,
    runtimeClassName=_STR,
    nodeName=_STR,
    hostname=_STR,
    subdomain=_STR,
    dnsPolicy=_STR,
    terminationGracePeriodSeconds=_I64,
    activeDeadlineSeconds=_I64,
    automountServiceAccountToken=_BOOL,
    enableServiceLinks=_BOOL,
    hostNetwork=_BOOL,
    hostPID=_BOOL,
    hostIPC=_BOOL,
    hostUsers=_BOOL,
    shareProcessNamespace=_BOOL,
    setHostnameAsFQDN=_BOOL,
)
_POD_TEMPLATE: Final = _obj(metadata=OBJECT_META, spec=POD_SPEC)
_JOB_SPEC: Final = _obj(
    parallelism=_I32,
    completions=_I32,
    activeDeadlineSeconds=_I64,
    backoffLimit=_I32,
    backoffLimitPerIndex=_I32,
    maxFailedIndexes=_I32,
    ttlSecondsAfterFinished=_I32,
    completionMode=_STR,
    podReplacementPolicy=_STR,
    managedBy=_STR,
    suspend=_BOOL,
    manualSelector=_BOOL,
    selector=_FREE,
    podFailurePolicy=_obj(rules=_arr(_FREE)),
    successPolicy=_obj(rules=_arr(_obj(succeededIndexes=_STR, succeededCount=_I32))),
    template=_POD_TEMPLATE,
)
REPLICATED_JOB: Final = _obj(
    name=_STR,
    groupName=_STR,
    replicas=_I32,
    dependsOn=_arr(_obj(name=_STR, status=_STR)),
    template=_obj(metadata=OBJECT_META, spec=_JOB_SPEC),
)
JOBSET_SPEC: Final = _obj(
    replicatedJobs=_arr(REPLICATED_JOB),
    network=_obj(enableDNSHostnames=_BOOL, subdomain=_STR, publishNotReadyAddresses=_BOOL),
    successPolicy=_obj(operator=_STR, targetReplicatedJobs=_STRINGS),
    failurePolicy=_obj(
        maxRestarts=_I32,
        restartStrategy=_STR,
        rules=_arr(
            _obj(
                name=_STR,
                action=_STR,
                onJobFailureReasons=_STRINGS,
                onJobFailureMessagePatterns=_STRINGS,
                targetReplicatedJobs=_STRINGS,
            )
        ),
    ),
    startupPolicy=_obj(startupPolicyOrder=_STR),
    coordinator=_obj(replicatedJob=_STR, jobIndex=_I32, podIndex=_I32),
    volumeClaimPolicies=_arr(_obj(templates=_arr(_FREE), retentionPolicy=_FREE)),
    suspend=_BOOL,
    managedBy=_STR,
    ttlSecondsAfterFinished=_I32,
)

_OPENAPI: Final = {
    "string": "string",
    "boolean": "boolean",
    "int32": "integer",
    "int64": "integer",
    "object": "object",
    "array": "array",
    "map": "object",
}


def type_error(path: str, value: Any, expected: str) -> FieldError:
    got = openapi_type(value)
    return FieldError(path, f'Invalid value: "{got}": {path} in body must be of type {expected}: "{got}"')


def int_text(value: int) -> str:
    """`str(value)`, also for integers too long for Python's int-to-text limit (4300 digits)."""
    if value.bit_length() < 10_000:
        return str(value)
    digits = int(value.bit_length() * 0.30103) + 1
    return f"{'-' if value < 0 else ''}<an integer of about {digits} digits>"


def int_range_errors(path: str, value: int, bits: int) -> list[FieldError]:
    """An integer outside int32/int64, worded as the schema's minimum/maximum."""
    low, high = INT32 if bits == 32 else INT64
    if value > high:
        return [
            FieldError(path, f"Invalid value: {int_text(value)}: {path} in body should be less than or equal to {high}")
        ]
    if value < low:
        return [
            FieldError(
                path, f"Invalid value: {int_text(value)}: {path} in body should be greater than or equal to {low}"
            )
        ]
    return []


def _integer_errors(path: str, value: Any, bits: int) -> list[FieldError]:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        value = int(value)  # JSON numbers: 2.0 is an integer to the API server
    if isinstance(value, bool) or not isinstance(value, int):
        return [type_error(path, value, "integer")]
    return int_range_errors(path, value, bits)


def _quantity_errors(path: str, value: Any) -> list[FieldError]:
    from ktrain.engine.quantity import Quantity, QuantityError, matches_crd_pattern

    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return [
            FieldError(
                path,
                f'Invalid value: "{openapi_type(value)}": {path} in body must be of type integer,string: '
                f'"{openapi_type(value)}"',
            )
        ]
    try:
        Quantity.parse(value)
        if isinstance(value, str) and not matches_crd_pattern(value):
            raise QuantityError(value, "does not match the CRD quantity pattern")
    except QuantityError:
        shown = (
            dumps(value[:100]) if isinstance(value, str) else int_text(value) if isinstance(value, int) else str(value)
        )
        return [
            FieldError(
                path,
                f"Invalid value: {shown}: quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            )
        ]
    return []


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def shape_errors(path: str, value: Any, shape: Shape, limit: int = 50) -> list[FieldError]:
    """Where `value` (at `path`) is not of `shape`; at most `limit` errors."""
    errors: list[FieldError] = []
    _walk(path, value, shape, errors, limit)
    return errors


def _walk(path: str, value: Any, shape: Shape, errors: list[FieldError], limit: int) -> None:
    if value is None or len(errors) >= limit or shape == "any":
        return
    if shape == _STR:
        if not isinstance(value, str):
            errors.append(type_error(path, value, "string"))
    elif shape == _BOOL:
        if not isinstance(value, bool):
            errors.append(type_error(path, value, "boolean"))
    elif shape == _I32:
        errors += _integer_errors(path, value, 32)
    elif shape == _I64:
        errors += _integer_errors(path, value, 64)
    elif shape == _QTY:
        errors += _quantity_errors(path, value)
    else:
        kind, inner = shape
        if kind == "array":
            if not isinstance(value, list):
                errors.append(type_error(path, value, "array"))
                return
            for i, item in enumerate(value):
                if item is None and inner != "any":  # a null item is not pruned, and not a value
                    expected = inner if isinstance(inner, str) else "array" if inner[0] == "array" else "object"
                    errors.append(type_error(f"{path}[{i}]", None, _OPENAPI.get(expected, "string")))
                    continue
                _walk(f"{path}[{i}]", item, inner, errors, limit)
        elif not isinstance(value, dict):
            errors.append(type_error(path, value, "object"))
        elif kind == "map":
            for key, item in value.items():
                _walk(_key(path, str(key)), item, inner, errors, limit)
        else:
            for key, item in value.items():
                sub = inner.get(key)
                if sub is not None:
                    _walk(_key(path, key), item, sub, errors, limit)
