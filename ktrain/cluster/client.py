"""Generic object operations on a connected cluster: get, list, server-side apply, delete,
and discovery of the served CRDs.

Objects stay plain dicts (what ktrain renders and prints). Requests go through the cluster's
transport (auth, TLS, proxies as `kube.connect` configured them), and every failure through
`KubeCluster.call`, so callers only ever see `KtrainError`s.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.cluster.kube import ApiNotFoundError, BrokenAnswerError, KubeCluster
from ktrain.cluster.names import check_name, check_namespace
from ktrain.cluster.transport import LIST_CHUNK, StatusError, TransportError, percent_encode
from ktrain.errors import InternalError
from ktrain.util.jsondata import Obj, loads
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

    from ktrain.cluster.transport import Response, Timeout


APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
# What ktrain accepts for answers: JSON for objects; for pods/log the server negotiates the media
# type like any GET (it accepts only application/json, application/yaml and protobuf in Accept,
# answering 406 to `text/plain` alone) and then streams the log as text/plain whatever was
# negotiated. kubectl (client-go) sends the same header.
ACCEPT_JSON = "application/json"
ACCEPT_LOG = "application/json, */*"


# --- names in paths ---------------------------------------------------------------------------
# Every request path is built here from a namespace and a name checked by `ktrain.cluster.names`
# (the API server's own rules), each segment percent-encoded; `_send` refuses any other path.
# A path `_send` accepts: segments of unreserved characters only, none of them `.` or `..`.
_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-")


def _safe_path(path: str) -> bool:
    r"""`^(/(?!\.\.?(/|$))[A-Za-z0-9._~-]+)+$`, as plain string checks (no `re` at start-up)."""
    if not path.startswith("/"):
        return False
    return all(seg and seg not in (".", "..") and _PATH_CHARS.issuperset(seg) for seg in path[1:].split("/"))


def _seg(text: str) -> str:
    return percent_encode(text)


@struct(frozen=True)
class Resource:
    """Where a kind lives in the REST API."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def type_name(self) -> str:
        """kubectl's `<kind>.<group>` spelling, as in `jobset.jobset.x-k8s.io/NAME`."""
        return f"{self.kind.lower()}.{self.group}" if self.group else self.kind.lower()

    def path(self, namespace: str | None, name: str | None = None, subresource: str | None = None) -> str:
        """The REST path; namespace and name are checked (InvalidNameError) and percent-encoded."""
        base = f"/apis/{self.api_version}" if self.group else f"/api/{self.api_version}"
        if self.namespaced and namespace is not None:  # None: across all namespaces
            base += f"/namespaces/{_seg(check_namespace(namespace))}"
        base += f"/{self.plural}"
        if name is None:
            return base
        base += f"/{_seg(check_name(name, self.kind))}"
        return f"{base}/{subresource}" if subresource else base


CONFIGMAP = Resource("v1", "ConfigMap", "configmaps")
POD = Resource("v1", "Pod", "pods")
EVENT = Resource("v1", "Event", "events")
SECRET = Resource("v1", "Secret", "secrets")
NAMESPACE = Resource("v1", "Namespace", "namespaces", namespaced=False)
JOBSET = Resource(c.JOBSET_API_VERSION, c.JOBSET_KIND, "jobsets")
COSCHEDULING_PODGROUP = Resource(c.COSCHEDULING_API_VERSION, c.PODGROUP_KIND, "podgroups")
VOLCANO_PODGROUP = Resource(c.VOLCANO_API_VERSION, c.PODGROUP_KIND, "podgroups")
TRAINJOB = Resource(c.TRAINER_API_VERSION, c.TRAINJOB_KIND, "trainjobs")
TRAINING_RUNTIME = Resource(c.TRAINER_API_VERSION, c.TRAINING_RUNTIME_KIND, "trainingruntimes")
CLUSTER_TRAINING_RUNTIME = Resource(
    c.TRAINER_API_VERSION, c.CLUSTER_TRAINING_RUNTIME_KIND, "clustertrainingruntimes", namespaced=False
)
# Read by `job why` (ktrain.service.job_why) only.
NODE = Resource("v1", "Node", "nodes", namespaced=False)
RESOURCE_QUOTA = Resource("v1", "ResourceQuota", "resourcequotas")
PVC = Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims")
BATCH_JOB = Resource("batch/v1", "Job", "jobs")
KUEUE_WORKLOADS = tuple(Resource(v, "Workload", "workloads") for v in c.KUEUE_API_VERSIONS)
KUEUE_LOCAL_QUEUES = tuple(Resource(v, "LocalQueue", "localqueues") for v in c.KUEUE_API_VERSIONS)

KNOWN = {
    (r.api_version, r.kind): r
    for r in (
        CONFIGMAP,
        SECRET,
        NAMESPACE,
        JOBSET,
        COSCHEDULING_PODGROUP,
        VOLCANO_PODGROUP,
        TRAINJOB,
        TRAINING_RUNTIME,
        CLUSTER_TRAINING_RUNTIME,
    )
}


def resource_of(obj: Obj) -> Resource:
    key = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    try:
        return KNOWN[key]
    except KeyError:
        raise InternalError(f"ktrain does not know where {key[1]} ({key[0]}) lives in the API") from None


def describe(resource: Resource, name: str, namespace: str | None) -> str:
    """How messages name an object: `JobSet team-a/my-job`."""
    return f"{resource.kind} {namespace}/{name}" if resource.namespaced else f"{resource.kind} {name}"


def _send(
    cluster: KubeCluster,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    headers: dict[str, str],
    body: Any,
    request_timeout: Timeout,
) -> Response:
    """One request through the cluster's transport (auth, TLS, proxy); the unread answer, any status.

    Every request ktrain makes passes here: a path not built by `Resource.path` / `api_path`
    (a segment that is empty, `.`, `..` or holds anything but unreserved characters) is refused
    before anything is sent. Query keys and values are percent-encoded by the transport."""
    if not _safe_path(path):
        raise InternalError(f"refusing to send a request to an unchecked path {path!r}")
    return cluster.transport.request(method, path, query, headers, body, request_timeout)


def _checked(response: Response) -> Response:
    """The response when its status is 2xx; else StatusError with the server's Status body."""
    if not 200 <= response.status <= 299:
        raise StatusError(response.status, getattr(response, "reason", ""), response.read())
    return response


def _request(
    cluster: KubeCluster,
    method: str,
    path: str,
    *,
    query: list[tuple[str, str]] | None = None,
    body: Any = None,
    content_type: str | None = None,
    _request_timeout: Timeout = None,
) -> tuple[Any, int]:
    """One REST request; returns (decoded JSON body, HTTP status)."""
    headers = {"Accept": ACCEPT_JSON}
    if content_type:
        headers["Content-Type"] = content_type
    response = _checked(_send(cluster, method, path, query or [], headers, body, _request_timeout))
    return read_json(response), int(response.status)


def open_get(
    cluster: KubeCluster,
    path: str,
    *,
    query: dict[str, Any] | None = None,
    accept: str = ACCEPT_JSON,
    _request_timeout: Timeout = None,
) -> Response:
    """GET the API path `path` and hand back the unread answer (for streams, and for lists read
    as JSON). A non-2xx status raises StatusError."""
    pairs = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
    return _checked(_send(cluster, "GET", path, pairs, {"Accept": accept}, None, _request_timeout))


def _query_value(value: Any) -> str:
    """Query values as the API server spells them (`true`, not Python's `True`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_json(response: Response) -> Any:
    """The answer's JSON; a body that is not JSON (or nests beyond reason) is a TransportError."""
    data = response.read()
    if not data:
        return None
    try:
        text = data.decode("utf-8")
        del data  # one copy less at the peak: a page may be MAX_BODY_BYTES
        return loads(text)
    except (ValueError, RecursionError) as exc:
        raise TransportError("garbled", type(exc).__name__, sent=True) from None


def _shape(why: str) -> TransportError:
    """A 2xx answer whose JSON is not what was asked for (KubeCluster.translate says so)."""
    return TransportError("shape", why, sent=True)


def checked_object(data: Any, kind: str | None) -> Obj:
    """`data` when it is a JSON object of `kind` (any kind when None); else a "shape" TransportError.
    A server answering `5`, `[]`, `null` or another kind to a GET must not become a made-up object."""
    if not isinstance(data, dict):
        raise _shape(f"{_json_type(data)}, not {'a ' + kind if kind else 'an object'}")
    if kind is not None and data.get("kind") != kind:
        got = data.get("kind")
        raise _shape(f"an object of kind {got!s:.60}, not a {kind}" if isinstance(got, str) else f"not a {kind}")
    meta = data.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise _shape("its metadata is not an object")
    return data


def checked_items(data: Any) -> tuple[list[Obj], str]:
    """(items, continue token) of a list answer: a JSON object whose `items` is a list of objects
    that each have a string metadata.name; else a "shape" TransportError."""
    if not isinstance(data, dict):
        raise _shape(f"{_json_type(data)}, not a list")
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind.endswith("List"):  # JobSetList, PodList, List...
        raise _shape("an object that is not a list (no kind ...List)")
    items = data.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise _shape(f"its items are {_json_type(items)}, not a list")
    for item in items:
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise _shape("an item that is not an object with a metadata.name")
    meta = data.get("metadata")
    token = meta.get("continue") if isinstance(meta, dict) else None
    if token is not None and not isinstance(token, str):
        raise _shape("its metadata.continue is not a string")
    return items, token or ""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# A list is read in pages of LIST_CHUNK objects; one that does not end after this many pages
# (100,000 objects) is refused, as a server sending `continue` tokens for ever would be.
MAX_LIST_PAGES = 200


def list_pages(
    cluster: KubeCluster,
    path: str,
    query: dict[str, Any],
    *,
    what: str,
    managed_fields: bool = True,
    chunk: int = LIST_CHUNK,
) -> tuple[list[Obj], Obj]:
    """Every item of a list, read in pages of `chunk` (`limit` and `continue`, as kubectl's
    --chunk-size) so that no one answer is large; (items, the first page's metadata, whose
    resourceVersion a watch can start from). Failures come out as KtrainErrors.
    `managed_fields=False` drops each item's metadata.managedFields as its page arrives (often a
    third of an object; what `kubectl get` hides too): a list of 10,000 jobs then fits in less."""
    items: list[Obj] = []
    first: Obj | None = None
    token = ""
    for _ in range(MAX_LIST_PAGES):
        page_query = {**query, "limit": chunk, "continue": token or None}
        try:
            (page, meta), next_token = cluster.call(_read_list_page, cluster, path, page_query, what=what)
        except BrokenAnswerError as exc:
            if exc.kind != "too-large" or chunk <= 10:
                raise
            chunk //= 5  # large objects: the same page in smaller pieces (a server ignoring limit fails)
            continue
        if not managed_fields:
            for item in page:
                item["metadata"].pop("managedFields", None)
        items.extend(page)
        if first is None:
            first = meta
        if not next_token:
            return items, first
        if next_token == token:
            raise cluster.translate(_shape("the same continue token twice"), what)
        token = next_token
    raise cluster.translate(_shape(f"more than {MAX_LIST_PAGES * LIST_CHUNK} objects"), what)


def _read_list_page(
    cluster: KubeCluster, path: str, query: dict[str, Any], *, _request_timeout: Timeout = None
) -> tuple[tuple[list[Obj], Obj], str]:
    data = read_json(open_get(cluster, path, query=query, _request_timeout=_request_timeout))
    items, token = checked_items(data)
    if len(items) > int(query["limit"]):  # kube-apiserver honours `limit` for every kind ktrain lists
        raise _shape(f"{len(items)} objects where at most {query['limit']} were asked for")
    meta = data.get("metadata") if isinstance(data, dict) else None
    return (items, meta if isinstance(meta, dict) else {}), token


def get(cluster: KubeCluster, resource: Resource, name: str, namespace: str | None = None) -> Obj | None:
    """The object, or None when it does not exist."""
    ns = namespace or cluster.namespace
    what = describe(resource, name, ns)
    try:
        data, _ = cluster.call(_request, cluster, "GET", resource.path(ns, name), what=what)
    except ApiNotFoundError:
        return None
    return dict(object_or_error(cluster, data, resource.kind, what))


def object_or_error(cluster: KubeCluster, data: Any, kind: str | None, what: str) -> Obj:
    """`checked_object`, its failure as the KtrainError that names `what`."""
    try:
        return checked_object(data, kind)
    except TransportError as exc:
        raise cluster.translate(exc, what) from None


def list_objects(
    cluster: KubeCluster,
    resource: Resource,
    namespace: str | None = None,
    label_selector: str | None = None,
    all_namespaces: bool = False,
    field_selector: str | None = None,
) -> list[Obj]:
    ns = None if all_namespaces or not resource.namespaced else (namespace or cluster.namespace)
    what = f"{resource.kind} list" + (f" in {ns}" if ns else "")
    query = {"labelSelector": label_selector, "fieldSelector": field_selector}
    items, _ = list_pages(cluster, resource.path(ns), query, what=what)
    return items


def _write(
    cluster: KubeCluster,
    method: str,
    resource: Resource,
    name: str,
    namespace: str,
    body: Obj,
    content_type: str,
    *,
    dry_run: bool,
    field_manager: str,
) -> tuple[Any, int]:
    """One write as field manager `field_manager` (a server dry run when asked); (body, status).
    A POST goes to the collection, every other verb to the object."""
    query = [("fieldManager", field_manager)]
    if dry_run:
        query.append(("dryRun", "All"))
    path = resource.path(namespace) if method == "POST" else resource.path(namespace, name)
    return cluster.call(
        _request,
        cluster,
        method,
        path,
        query=query,
        body=body,
        content_type=content_type,
        what=describe(resource, name, namespace),
    )


def _target(cluster: KubeCluster, obj: Obj) -> tuple[Resource, str, str]:
    meta = obj.get("metadata") or {}
    return resource_of(obj), str(meta.get("name")), meta.get("namespace") or cluster.namespace


def apply(
    cluster: KubeCluster, obj: Obj, *, dry_run: bool = False, field_manager: str = c.FIELD_MANAGER
) -> tuple[Obj, bool]:
    """Server-side apply `obj`; returns (the server's object, whether it was created)."""
    resource, name, ns = _target(cluster, obj)
    data, status = _write(
        cluster, "PATCH", resource, name, ns, obj, APPLY_CONTENT_TYPE, dry_run=dry_run, field_manager=field_manager
    )
    return dict(object_or_error(cluster, data, resource.kind, describe(resource, name, ns))), status == 201


def merge_patch(
    cluster: KubeCluster,
    resource: Resource,
    name: str,
    namespace: str | None,
    patch: Obj,
    *,
    dry_run: bool = False,
    field_manager: str = c.FIELD_MANAGER,
) -> Obj:
    """JSON merge patch (`kubectl patch --type merge`): change only the fields in `patch`, leave
    every other field as stored (server defaults included); returns the server's object."""
    ns = namespace or cluster.namespace
    data, _ = _write(
        cluster,
        "PATCH",
        resource,
        name,
        ns,
        patch,
        "application/merge-patch+json",
        dry_run=dry_run,
        field_manager=field_manager,
    )
    return dict(object_or_error(cluster, data, resource.kind, describe(resource, name, ns)))


def create(cluster: KubeCluster, obj: Obj, *, dry_run: bool = False, field_manager: str = c.FIELD_MANAGER) -> Obj:
    """POST `obj` (a create, never an update); returns the server's object."""
    resource, name, ns = _target(cluster, obj)
    data, _ = _write(
        cluster, "POST", resource, name, ns, obj, "application/json", dry_run=dry_run, field_manager=field_manager
    )
    return dict(object_or_error(cluster, data, resource.kind, describe(resource, name, ns)))


def delete(
    cluster: KubeCluster,
    resource: Resource,
    name: str,
    namespace: str | None = None,
    *,
    propagation: str | None = None,
    dry_run: bool = False,
    uid: str | None = None,
) -> bool:
    """Delete one object; False when it was not there. `uid`: only if it is still that object
    (a precondition: the server answers 409 Conflict for another one of the same name)."""
    ns = namespace or cluster.namespace
    body: Obj = {"apiVersion": "v1", "kind": "DeleteOptions"}
    if propagation:
        body["propagationPolicy"] = propagation
    if uid:
        body["preconditions"] = {"uid": uid}
    if dry_run:
        body["dryRun"] = ["All"]
    try:
        cluster.call(
            _request,
            cluster,
            "DELETE",
            resource.path(ns, name),
            body=body,
            content_type="application/json",
            what=describe(resource, name, ns),
        )
    except ApiNotFoundError:
        return False
    return True


def served_kinds(cluster: KubeCluster, api_version: str) -> set[str] | None:
    """The kinds a group/version serves (discovery), or None when the version is not served."""
    path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    what = f"API discovery of {api_version}"
    try:
        data, _ = cluster.call(_request, cluster, "GET", path, what=what)
    except ApiNotFoundError:
        return None
    resources = object_or_error(cluster, data, "APIResourceList", what).get("resources") or []
    if not isinstance(resources, list) or not all(isinstance(r, dict) for r in resources):
        raise cluster.translate(_shape("its resources are not a list of objects"), what)
    return {str(r.get("kind")) for r in resources if "/" not in str(r.get("name"))}
