"""An in-process Kubernetes API server double, spoken to over real HTTP.

    with ApiServerDouble(crds={"jobset", "trainer"}, token="t0k3n") as srv:
        srv.write_kubeconfig(tmp_path / "kubeconfig")
        api = kubernetes.client.CoreV1Api(srv.api_client())

The official `kubernetes` client works against it unmodified. See the package docstring for
what is and is not modelled.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from .cluster import DEFAULT_NAMESPACES, Change, Cluster, rfc3339, rfc3339_nano
from .errors import (
    REASON_FOR_CODE,
    ApiError,
    bad_request,
    conflict,
    forbidden_request,
    generic,
    invalid,
    invalid_object,
    method_not_supported,
    no_such_resource,
    not_found,
    not_supported,
    unauthorized,
)
from .negotiation import JSON_TYPE, PROTOBUF_TYPE, YAML_TYPE, negotiate_input, negotiate_output, negotiate_stream
from .resources import (
    EVENTS,
    NAMESPACES,
    PODS,
    ResourceType,
    api_resource,
    resolve_crd_sets,
)
from .schema import DEFAULT_UPSTREAM
from .selectors import make_filter

JSON = dict[str, Any]
THREAD_PREFIX = "apiserver-double"


# --- fault injection ---------------------------------------------------------------------------


@dataclass
class Fault:
    """A rule that delays and/or fails matching requests.

    `verb` is the RBAC-style verb (get, list, watch, create, update, patch, delete,
    deletecollection) or `apply` for server-side apply (which also matches `patch`).
    `resource` is a plural, kind, short name, `plural.group` or `plural/subresource`
    (e.g. `pods/log`); None matches every request, discovery included.
    """

    verb: str | None = None
    resource: str | None = None
    namespace: str | None = None
    name: str | None = None
    code: int | None = None
    message: str | None = None
    reason: str | None = None
    nth: int | None = None  # fire only on the n-th matching request (1-based)
    times: int | None = None  # fire at most this many times
    delay: float = 0.0
    seen: int = 0  # matching requests so far
    hits: int = 0  # times the fault fired
    # What a firing fault does instead of answering `code` (see FAULT_ACTIONS); None: answer `code`.
    action: str | None = None
    dry_run: bool | None = None  # match only server dry runs (True) or only real requests (False)
    # Match only requests across all namespaces (a list with no namespace in its path): an RBAC
    # Role grants a namespace, not the cluster.
    all_namespaces: bool = False


# A fault's `action`: what a network or a dying server does to a request.
#   "reset":         the connection is reset before the request is carried out (nothing stored);
#   "lose-response": the request is carried out (a write is stored), then the connection is reset
#                    without an answer, as when a proxy or the network drops the response;
#   "go-away":       as "lose-response", and the server stops listening: every later request
#                    finds the connection refused (the server died mid-command).
FAULT_ACTIONS = ("reset", "lose-response", "go-away")


@dataclass(frozen=True)
class Route:
    verb: str  # "" for discovery and other non-resource paths
    rtype: ResourceType | None = None
    namespace: str | None = None
    name: str | None = None
    subresource: str = ""

    @property
    def rbac_verbs(self) -> tuple[str, ...]:
        return ("apply", "patch") if self.verb == "apply" else (self.verb,)


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    verb: str
    resource: str  # plural.group (plus /subresource), "" for discovery
    namespace: str | None
    name: str | None
    target: str = ""  # the request-target as sent: path and query, in the client's order
    status: int | None = None  # the answer's status code, once sent (None: no answer, e.g. a reset)

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def param(self, key: str) -> str | None:
        values = self.query.get(key)
        return values[0] if values else None


def _matches_resource(spec: str, route: Route) -> bool:
    rt = route.rtype
    if rt is None:
        return False
    wanted = spec.lower()
    base, _, sub = wanted.partition("/")
    return base in rt.aliases() and sub == route.subresource


# --- HTTP plumbing ------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], double: ApiServerDouble) -> None:
        self.double = double
        self.tracking_lock = threading.Lock()
        self.connections: dict[socket.socket, threading.Thread] = {}
        self.to_reset: set = set()  # sockets to close with RST instead of FIN
        self.counter = 0
        self.tls_context: Any = None  # set by ApiServerDouble.start for HTTPS
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        if self.tls_context is not None:  # the handshake runs in the connection's thread
            sock = self.tls_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def shutdown_request(self, request: Any) -> None:
        with self.tracking_lock:
            reset = request in self.to_reset
            self.to_reset.discard(request)
        if not reset:
            super().shutdown_request(request)
            return
        try:  # SO_LINGER 0: close() sends RST, as a crashed peer or a dropping proxy does
            request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close_request(request)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Without TCP_NODELAY, headers and body written separately meet the client's delayed
        # ACK and every request costs ~40 ms.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.tracking_lock:
            self.counter += 1
            thread = threading.Thread(
                target=self._serve_connection,
                args=(request, client_address),
                name=f"{THREAD_PREFIX}-conn-{self.counter}",
                daemon=True,
            )
            self.connections[request] = thread
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            if self.tls_context is not None:
                request.settimeout(10)
                try:
                    request.do_handshake()
                except (OSError, ValueError):
                    return  # a client that rejected our certificate, or spoke plain HTTP
                request.settimeout(None)
            self.finish_request(request, client_address)
        except OSError:
            pass  # the client or stop() closed the socket
        finally:
            self.shutdown_request(request)
            with self.tracking_lock:
                self.connections.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Swallow errors instead of printing tracebacks to stderr."""

    def close_connections(self) -> list[threading.Thread]:
        with self.tracking_lock:
            items = list(self.connections.items())
        for sock, _ in items:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return [thread for _, thread in items]


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    streaming = False  # set once a chunked response has begun
    media = JSON_TYPE  # the negotiated response media type (JSON until negotiated)
    recorded: RecordedRequest | None = None  # the request being answered

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the default access log on stderr."""

    def send_response(self, code: int, message: str | None = None) -> None:
        if self.recorded is not None and self.recorded.status is None:
            self.recorded.status = code
        super().send_response(code, message)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # -- response helpers ---------------------------------------------------------------------

    def _send(self, code: int, body: bytes, content_type: str, warnings: Sequence[str] = ()) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for warning in warnings:
            self.send_header("Warning", f"299 - {json.dumps(warning)}")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, code: int, payload: Any, warnings: Sequence[str] = ()) -> None:
        """An object (or Status) in the negotiated media type: JSON, or YAML when asked for."""
        if self.media == YAML_TYPE:
            body = yaml.safe_dump(payload, sort_keys=False).encode()
            self._send(code, body, YAML_TYPE, warnings)
            return
        self._send(code, json.dumps(payload).encode(), JSON_TYPE, warnings)

    def reset_connection(self) -> None:
        """End this connection with a TCP reset and no answer."""
        with self.server.tracking_lock:
            self.server.to_reset.add(self.connection)
        self.close_connection = True

    def start_chunked(self, content_type: str) -> None:
        self.streaming = True
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data: bytes) -> None:
        if not data:
            return
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone() from exc

    def end_chunks(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone() from exc

    # -- dispatch -------------------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        double = self.server.double
        split = urlsplit(self.path)
        query = parse_qs(split.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.streaming = False
        self.media = JSON_TYPE
        route = Route("")
        route_error: ApiError | None = None
        try:
            route = double._route(method, split.path, query, self.headers.get("Content-Type", ""))
        except ApiError as err:
            route_error = err  # answered below, after authentication
        self.recorded = double._record(method, split.path, query, dict(self.headers.items()), body, route, self.path)
        try:
            peer = self.connection.getpeercert() if double.tls else None
            double._authenticate(self.headers.get("Authorization"), peer)
            double._impersonate(self.headers)
            if route_error is not None:
                raise route_error
            action = double._run_faults(route, query)
            if action == "reset":
                self.reset_connection()
                return
            if action in ("lose-response", "go-away"):
                self._dispatch_unanswered(split.path, query, body, route, stop=action == "go-away")
                return
            double._dispatch(self, split.path, query, body, route)
        except _ClientGone:
            self.close_connection = True
        except Exception as exc:
            if self.streaming:
                # Too late for a Status body: drop the connection mid-stream.
                self.close_connection = True
                return
            if isinstance(exc, ApiError):
                err = exc
            else:  # a bug in the double: answer like the real server's 500
                err = generic(500, f"Internal error occurred: {type(exc).__name__}: {exc}", "InternalError")
            try:
                self.send_json(err.code, err.status())
            except OSError:
                self.close_connection = True

    def _dispatch_unanswered(
        self, path: str, query: Mapping[str, list[str]], body: bytes, route: Route, *, stop: bool
    ) -> None:
        """Carry the request out, throw the answer away and reset the connection (and with
        `stop`, stop the server before the client can see the reset)."""
        real = self.wfile
        self.wfile = io.BytesIO()  # type: ignore[assignment]
        try:
            self.server.double._dispatch(self, path, query, body, route)
        except Exception:  # noqa: BLE001 - whatever the outcome, no answer
            pass
        finally:
            self.wfile = real
        if stop:
            # Close the listener before the client learns the answer is lost: a client that
            # reconnects at once must find the connection refused, as from a server that is gone.
            self.server.double._go_away()
        self.reset_connection()


def _one(query: Mapping[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def _flag(query: Mapping[str, list[str]], key: str) -> bool:
    return (_one(query, key) or "").lower() in ("true", "1")


def _int_param(query: Mapping[str, list[str]], key: str) -> int | None:
    raw = _one(query, key)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise bad_request(f'invalid value for {key}: "{raw}"') from None


# --- the double ---------------------------------------------------------------------------------


class ApiServerDouble:
    """A fake kube-apiserver on 127.0.0.1 for tests; see the module docstring."""

    def __init__(
        self,
        crds: Iterable[str] | None = None,
        token: str | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        upstream_dir: Path | None = DEFAULT_UPSTREAM,
        validate_schemas: bool = True,
        strict_namespaces: bool = True,
        namespaces: Sequence[str] = DEFAULT_NAMESPACES,
        full_crd_schemas: bool = True,
        user: str = "system:serviceaccount:default:ktrain",
        kube_version: tuple[int, int, int] = (1, 33, 0),
        tls: bool = False,
        server_names: tuple[str, ...] = ("127.0.0.1", "localhost"),
    ) -> None:
        """`tls`: serve HTTPS with a certificate for `server_names` from the test CA
        (`tests/apiserver/tls.py`), and accept client certificates that CA signed."""
        self.crd_sets = resolve_crd_sets(crds)
        self.tls = tls
        self.server_names = server_names
        self._tls_context: Any = None
        self.token = token
        # (resource, name) pairs the authenticated user may impersonate ("*": any name), and who
        # each impersonating request acted as (impersonation.py)
        self.impersonable: set[tuple[str, str]] = set()
        self.acted_as: list[dict[str, Any]] = []
        self.host = host
        self.user = user
        self.kube_version = kube_version
        self.cluster = Cluster(
            self.crd_sets,
            upstream_dir,
            validate_schemas=validate_schemas,
            strict_namespaces=strict_namespaces,
            namespaces=namespaces,
            full_crd_schemas=full_crd_schemas,
        )
        self.faults: list[Fault] = []
        # Called with each request before it is answered (in its handler's thread): a test's
        # controller that acts on what clients read (tests/notebook_controller.py).
        self.request_hooks: list[Callable[[RecordedRequest], None]] = []
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._port = port
        self._server: _Server | None = None
        self._serve_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._listener_closed = threading.Event()
        self._stopper: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> ApiServerDouble:
        """Start serving; after stop() this rebinds the same port."""
        stopper, self._stopper = self._stopper, None
        if stopper is not None and stopper is not threading.current_thread():
            stopper.join(10)  # a "go-away" fault's stop must finish before serving again
        if self._server is not None:
            return self
        self._stopping.clear()
        self._listener_closed.clear()
        with self.cluster.lock:
            self.cluster.closing = False
        server = _Server((self.host, self._port), self)
        if self.tls and self._tls_context is None:
            self._tls_context = self._server_tls_context()
        server.tls_context = self._tls_context
        self._port = server.server_address[1]
        self._server = server
        self._serve_thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{THREAD_PREFIX}-serve",
            daemon=True,
        )
        self._serve_thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: later requests get connection refused; streams end; threads exit."""
        stopper = self._stopper
        if stopper is not None and stopper is not threading.current_thread():
            stopper.join(10)  # a "go-away" fault is stopping the server already
        server = self._server
        if server is None:
            return
        self._stopping.set()
        with self.cluster.lock:
            self.cluster.closing = True
            self.cluster.changed.notify_all()
        server.shutdown()
        # The listener first: a client whose connection is cut below and that reconnects at once
        # must find the port closed, as with a server that is gone.
        server.server_close()
        self._listener_closed.set()
        threads = server.close_connections()
        if self._serve_thread is not None:
            self._serve_thread.join(timeout=5)
        for thread in threads:
            thread.join(timeout=5)
        self._server = None
        self._serve_thread = None

    def _go_away(self) -> None:
        """Stop serving from inside a handler (fault action "go-away"): returns once the listening
        socket is closed, so that the next connection is refused."""
        stopper = threading.Thread(target=self.stop, name=f"{THREAD_PREFIX}-go-away", daemon=True)
        self._stopper = stopper
        stopper.start()
        self._listener_closed.wait(10)

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> ApiServerDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self._port}"

    @property
    def ca_pem(self) -> bytes:
        from .tls import shared_authority

        return shared_authority().ca_pem

    def client_certificate(self, user: str = "double-user") -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) of a client certificate the double accepts (CN = user)."""
        from .tls import shared_authority

        return shared_authority().client(user)

    def _server_tls_context(self) -> Any:
        import ssl
        import tempfile

        from .tls import shared_authority

        authority = shared_authority()
        cert, key = authority.server(self.server_names)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "cert.pem").write_bytes(cert)
            (Path(tmp) / "key.pem").write_bytes(key)
            context.load_cert_chain(str(Path(tmp) / "cert.pem"), str(Path(tmp) / "key.pem"))
        context.verify_mode = ssl.CERT_OPTIONAL  # kube-apiserver: a client certificate is one way in
        context.load_verify_locations(cadata=authority.ca_pem.decode())
        return context

    @property
    def schema_validation(self) -> bool:
        """Whether custom resources are validated against the reference CRD schemas."""
        return self.cluster.validate_schemas

    # -- client configuration ---------------------------------------------------------------------

    def kubeconfig(
        self,
        namespace: str = "default",
        context: str = "double",
        token: str | None = None,
        anonymous: bool = False,
        user: str = "double-user",
    ) -> JSON:
        """A kubeconfig dict for this server; `token` defaults to the server's own. Over TLS the
        cluster carries the test CA (`certificate-authority-data`)."""
        import base64

        credentials: JSON = {}
        bearer = token if token is not None else self.token
        if bearer and not anonymous:
            credentials["token"] = bearer
        cluster: JSON = {"server": self.url}
        if self.tls:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": user, "user": credentials}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": user, "namespace": namespace},
                }
            ],
            "current-context": context,
            "preferences": {},
        }

    def write_kubeconfig(
        self,
        path: str | Path,
        namespace: str = "default",
        context: str = "double",
        token: str | None = None,
        anonymous: bool = False,
    ) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        document = self.kubeconfig(namespace, context, token, anonymous)
        target.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        return target

    def api_client(self, namespace: str = "default", token: str | None = None, anonymous: bool = False) -> Any:
        """A `kubernetes.client.ApiClient` configured through the client's kubeconfig loader."""
        from kubernetes import client, config

        configuration = client.Configuration()
        config.load_kube_config_from_dict(
            self.kubeconfig(namespace, "double", token, anonymous),
            context="double",
            client_configuration=configuration,
            persist_config=False,
        )
        return client.ApiClient(configuration)

    # -- fault injection --------------------------------------------------------------------------

    def inject(
        self,
        *,
        verb: str | None = None,
        resource: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        code: int | None = None,
        message: str | None = None,
        reason: str | None = None,
        nth: int | None = None,
        times: int | None = None,
        delay: float = 0.0,
        action: str | None = None,
        dry_run: bool | None = None,
    ) -> Fault:
        """Add a Fault (see its docstring); returns it so tests can read `seen` / `hits`."""
        if action is not None and action not in FAULT_ACTIONS:
            raise ValueError(f"unknown fault action {action!r}: use one of {', '.join(FAULT_ACTIONS)}")
        fault = Fault(
            verb, resource, namespace, name, code, message, reason, nth, times, delay, action=action, dry_run=dry_run
        )
        with self._lock:
            self.faults.append(fault)
        return fault

    def forbid(
        self,
        verb: str,
        resource: str,
        *,
        namespace: str | None = None,
        name: str | None = None,
        all_namespaces: bool = False,
    ) -> Fault:
        """Answer 403 Forbidden (RBAC-style message) to `verb` on `resource`; with `all_namespaces`,
        only to requests across every namespace (what a user with a namespaced Role meets)."""
        fault = self.inject(verb=verb, resource=resource, namespace=namespace, name=name, code=403)
        fault.all_namespaces = all_namespaces
        return fault

    def fail_nth(self, verb: str, resource: str, n: int, code: int = 422, message: str | None = None) -> Fault:
        return self.inject(verb=verb, resource=resource, nth=n, code=code, message=message)

    def fail_nth_create(self, resource: str, n: int, code: int = 422, message: str | None = None) -> Fault:
        """Fail only the n-th create of `resource` (a plural or a kind)."""
        return self.fail_nth("create", resource, n, code, message)

    def lose_response(
        self,
        verb: str | None = None,
        resource: str | None = None,
        *,
        nth: int | None = None,
        dry_run: bool | None = False,
    ) -> Fault:
        """Carry out the matching request (a write is stored), then reset the connection unanswered."""
        return self.inject(verb=verb, resource=resource, nth=nth, times=1, action="lose-response", dry_run=dry_run)

    def go_away(
        self,
        verb: str | None = None,
        resource: str | None = None,
        *,
        nth: int | None = None,
        dry_run: bool | None = False,
    ) -> Fault:
        """As `lose_response`, and the server stops: later requests find the connection refused."""
        return self.inject(verb=verb, resource=resource, nth=nth, times=1, action="go-away", dry_run=dry_run)

    def slow(self, seconds: float, *, verb: str | None = None, resource: str | None = None) -> Fault:
        """Delay matching requests (all requests by default) by `seconds`."""
        return self.inject(verb=verb, resource=resource, delay=seconds)

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    # -- inspection and seeding -------------------------------------------------------------------

    def requests_for(self, verb: str | None = None, resource: str | None = None) -> list[RecordedRequest]:
        """Recorded requests, filtered by verb and/or resource (plural or plural.group)."""
        with self._lock:
            found = list(self.requests)
        out = []
        for req in found:
            if verb is not None and req.verb != verb:
                continue
            if resource is not None and resource not in (req.resource, req.resource.split(".")[0]):
                continue
            out.append(req)
        return out

    def clear_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    def resource_type(self, resource: str, group: str | None = None) -> ResourceType:
        return self.cluster.resolve(resource, group)

    def objects(self, resource: str, namespace: str | None = None, group: str | None = None) -> list[JSON]:
        """Stored objects of a type (deep copies), in one namespace or all."""
        return self.cluster.items(self.resource_type(resource, group), namespace, lambda _: True)

    def get_object(
        self,
        resource: str,
        name: str,
        namespace: str | None = "default",
        group: str | None = None,
    ) -> JSON | None:
        rt = self.resource_type(resource, group)
        try:
            return self.cluster.get(rt, namespace, name)
        except ApiError:
            return None

    def put_object(self, obj: JSON, manager: str = "apiserver-double") -> JSON:
        """Store an object directly (no validation, no faults); create or replace."""
        rt = self._type_of(obj)
        return self.cluster.put(rt, obj, manager)

    def delete_object(
        self,
        resource: str,
        name: str,
        namespace: str | None = "default",
        propagation: str | None = None,
        group: str | None = None,
    ) -> None:
        self.cluster.delete(self.resource_type(resource, group), namespace, name, propagation)

    def set_status(
        self,
        resource: str,
        name: str,
        status: JSON,
        namespace: str | None = "default",
        group: str | None = None,
    ) -> JSON:
        """Replace `.status` of a stored object, as its controller would."""
        rt = self.resource_type(resource, group)
        with self.cluster.lock:
            obj = self.cluster.get(rt, namespace, name)
            obj["status"] = status
            return self.cluster.put(rt, obj)

    def add_namespace(self, name: str, labels: Mapping[str, str] | None = None) -> JSON:
        meta: JSON = {"name": name}
        if labels:
            meta["labels"] = dict(labels)
        return self.cluster.put(NAMESPACES, {"metadata": meta})

    def compact(self) -> None:
        """Drop watch history: watches resuming from an older resourceVersion get 410 Gone."""
        self.cluster.compact()

    def _type_of(self, obj: JSON) -> ResourceType:
        for rt in self.cluster.types.values():
            if rt.api_version == obj.get("apiVersion") and rt.kind == obj.get("kind"):
                return rt
        raise KeyError(f"not served: {obj.get('apiVersion')} {obj.get('kind')}")

    # -- pods, logs and events --------------------------------------------------------------------

    def add_pod(
        self,
        name: str,
        namespace: str = "default",
        *,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        phase: str = "Running",
        node: str | None = None,
        containers: Sequence[str | JSON] = ("main",),
        init_containers: Sequence[str | JSON] = (),
        container_statuses: list[JSON] | None = None,
        owner: JSON | None = None,
        restart_count: int = 0,
    ) -> JSON:
        """Add a pod as the scheduler/kubelet would have left it.

        Container statuses default from `phase`: Pending -> waiting (ContainerCreating),
        Running -> running, Succeeded -> terminated 0, Failed -> terminated 1.
        `owner` is a stored object that becomes the pod's controller ownerReference.
        """
        now = rfc3339()
        specs = [_container_spec(c) for c in containers]
        init_specs = [_container_spec(c) for c in init_containers]
        meta: JSON = {"name": name, "namespace": namespace}
        if labels:
            meta["labels"] = dict(labels)
        if annotations:
            meta["annotations"] = dict(annotations)
        if owner is not None:
            meta["ownerReferences"] = [_owner_reference(owner)]
        spec: JSON = {"containers": specs, "restartPolicy": "Never"}
        if init_specs:
            spec["initContainers"] = init_specs
        if node:
            spec["nodeName"] = node
        if container_statuses is None:
            container_statuses = [_container_status(c, phase, now, restart_count) for c in specs]
        status: JSON = {"phase": phase, "containerStatuses": container_statuses}
        if phase != "Pending":
            status["startTime"] = now
        if init_specs:
            status["initContainerStatuses"] = [
                _container_status(c, "Succeeded" if phase != "Pending" else "Pending", now, 0) for c in init_specs
            ]
        return self.cluster.put(PODS, {"metadata": meta, "spec": spec, "status": status})

    def _single_container(self, namespace: str, pod: str) -> str:
        obj = self.cluster.get(PODS, namespace, pod)
        names = [c["name"] for c in obj["spec"]["containers"]]
        if len(names) != 1:
            raise ValueError(f"pod {pod} has containers {names}; pass container=")
        return str(names[0])

    def append_log(
        self,
        pod: str,
        text: str,
        *,
        container: str | None = None,
        namespace: str = "default",
        previous: bool = False,
        timestamp: dt.datetime | None = None,
    ) -> None:
        """Append log text (split into lines) to a container; wakes `follow` streams."""
        name = container or self._single_container(namespace, pod)
        self.cluster.append_log(namespace, pod, name, text, previous, timestamp)

    def terminate_container(
        self,
        pod: str,
        container: str | None = None,
        *,
        namespace: str = "default",
        exit_code: int = 0,
        reason: str | None = None,
    ) -> JSON:
        """Mark a container terminated (ends log follow streams); the pod's phase follows."""
        name = container or self._single_container(namespace, pod)
        now = rfc3339()
        with self.cluster.lock:
            obj = self.cluster.get(PODS, namespace, pod)
            status = obj.setdefault("status", {})
            statuses = status.setdefault("containerStatuses", [])
            entry = next((s for s in statuses if s.get("name") == name), None)
            if entry is None:
                entry = {"name": name, "image": "busybox", "imageID": "", "restartCount": 0}
                statuses.append(entry)
            started = (entry.get("state") or {}).get("running", {}).get("startedAt", now)
            entry["state"] = {
                "terminated": {
                    "exitCode": exit_code,
                    "reason": reason or ("Completed" if exit_code == 0 else "Error"),
                    "startedAt": started,
                    "finishedAt": now,
                }
            }
            entry["ready"] = False
            entry["started"] = False
            if all("terminated" in (s.get("state") or {}) for s in statuses):
                failed = any(s["state"]["terminated"].get("exitCode", 0) != 0 for s in statuses)
                status["phase"] = "Failed" if failed else "Succeeded"
            return self.cluster.put(PODS, obj)

    def add_event(
        self,
        involved: JSON | tuple[str, str],
        reason: str,
        message: str,
        *,
        type: str = "Normal",  # noqa: A002 - mirrors the Event field name
        namespace: str | None = None,
        count: int = 1,
        component: str = "apiserver-double",
        timestamp: dt.datetime | None = None,
    ) -> JSON:
        """Record a core/v1 Event about `involved` (a stored object, or (kind, name))."""
        if isinstance(involved, tuple):
            kind, obj_name = involved
            ref: JSON = {"kind": kind, "name": obj_name, "namespace": namespace or "default"}
        else:
            meta = involved.get("metadata") or {}
            ref = {
                "apiVersion": involved.get("apiVersion", ""),
                "kind": involved.get("kind", ""),
                "name": meta.get("name", ""),
                "namespace": meta.get("namespace", namespace or "default"),
                "uid": meta.get("uid", ""),
            }
            if meta.get("resourceVersion"):
                ref["resourceVersion"] = meta["resourceVersion"]
        ns = namespace or ref.get("namespace") or "default"
        stamp = rfc3339(timestamp)
        event = {
            "metadata": {"name": f"{ref['name']}.{secrets.token_hex(8)}", "namespace": ns},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type,
            "count": count,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "source": {"component": component},
            "reportingComponent": component,
            "reportingInstance": "",
        }
        return self.cluster.put(EVENTS, event)

    # -- request handling (called from handler threads) -------------------------------------------

    def _record(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
        route: Route,
        target: str = "",
    ) -> RecordedRequest:
        resource = ""
        if route.rtype is not None:
            suffix = f"/{route.subresource}" if route.subresource else ""
            resource = route.rtype.group_resource + suffix
        req = RecordedRequest(
            method, path, query, headers, body, route.verb, resource, route.namespace, route.name, target
        )
        with self._lock:
            self.requests.append(req)
        for hook in list(self.request_hooks):
            hook(req)
        return req

    def _authenticate(self, header: str | None, peer_cert: Any = None) -> None:
        """A bearer token, or (over TLS) a client certificate the test CA signed; the
        handshake already verified it, so its presence is enough (x509 authenticator)."""
        if self.token is None or peer_cert:
            return
        # k8s.io/apiserver/pkg/authentication/request/bearertoken: the scheme is matched
        # case-insensitively ("bearer" from the Python client's in-cluster loader is fine)
        scheme, _, token = (header or "").strip().partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.token:
            raise unauthorized()

    def _impersonate(self, headers: Any) -> None:
        from .impersonation import check

        identity = check(headers, self.user, self.impersonable)
        if identity is not None:
            with self._lock:
                self.acted_as.append(identity)

    def _route(self, method: str, path: str, query: Mapping[str, list[str]], content_type: str) -> Route:
        segments = [s for s in path.split("/") if s]
        if not segments or segments[0] not in ("api", "apis"):
            return Route("get" if method == "GET" else "")
        if segments[0] == "api":
            if len(segments) < 2:
                return Route("get")
            if segments[1] != "v1":
                raise no_such_resource()
            group, version, rest = "", "v1", segments[2:]
        else:
            if len(segments) < 3:
                return Route("get")
            group, version, rest = segments[1], segments[2], segments[3:]
        if not rest:
            return Route("get")
        namespace: str | None = None
        types = self.cluster.types
        if rest[0] == "namespaces" and len(rest) >= 3:
            candidate = types.get((group, rest[2]))
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise no_such_resource()
        rt = self.cluster.lookup(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if rt.namespaced and name is not None and namespace is None:
            raise no_such_resource()
        if not rt.namespaced and namespace is not None:
            raise no_such_resource()
        known_sub = (sub == "status" and rt.status_subresource) or (sub == "log" and rt is PODS)
        if sub and not known_sub:
            raise no_such_resource()
        if sub == "log":
            if method != "GET":
                raise method_not_supported(rt.group, "pods/log")
            return Route("get", rt, namespace, name, sub)
        verb = self._verb(method, name, query, content_type)
        if sub:
            allowed: tuple[str, ...] = ("get", "update", "patch", "apply")
        else:
            allowed = rt.verbs + (("apply",) if "patch" in rt.verbs else ())
        if verb not in allowed:
            raise method_not_supported(rt.group, rt.plural)
        return Route(verb, rt, namespace, name, sub)

    @staticmethod
    def _verb(method: str, name: str | None, query: Mapping[str, list[str]], content_type: str) -> str:
        if method == "GET":
            if name:
                return "get"
            return "watch" if _flag(query, "watch") else "list"
        if method == "POST" and not name:
            return "create"
        if method == "PUT" and name:
            return "update"
        if method == "PATCH" and name:
            return "apply" if content_type.startswith("application/apply-patch") else "patch"
        if method == "DELETE":
            return "delete" if name else "deletecollection"
        return "unsupported"

    def _run_faults(self, route: Route, query: Mapping[str, list[str]]) -> str | None:
        """Delay and/or fail as the matching faults say; returns a firing fault's action."""
        dry_run = bool(query.get("dryRun"))
        with self._lock:
            rules = list(self.faults)
        for fault in rules:
            with self._lock:
                if fault.verb is not None and fault.verb not in route.rbac_verbs:
                    continue
                if fault.dry_run is not None and fault.dry_run != dry_run:
                    continue
                if fault.resource is not None and not _matches_resource(fault.resource, route):
                    continue
                if fault.namespace is not None and fault.namespace != route.namespace:
                    continue
                if fault.all_namespaces and (
                    route.namespace is not None or not (route.rtype and route.rtype.namespaced)
                ):
                    continue
                if fault.name is not None and fault.name != route.name:
                    continue
                fault.seen += 1
                if fault.nth is not None and fault.seen != fault.nth:
                    continue
                if fault.times is not None and fault.hits >= fault.times:
                    continue
                fault.hits += 1
            if fault.delay:
                self._stopping.wait(fault.delay)
            if fault.action is not None:
                return fault.action
            if fault.code is not None:
                raise self._fault_error(fault, route)
        return None

    def _fault_error(self, fault: Fault, route: Route) -> ApiError:
        code = fault.code or 500
        rt = route.rtype
        group = rt.group if rt else ""
        plural = (rt.plural + (f"/{route.subresource}" if route.subresource else "")) if rt else ""
        name = route.name or ""
        if code == 403 and rt is not None and fault.message is None:
            verb = "patch" if route.verb == "apply" else route.verb
            scope = f'in the namespace "{route.namespace}"' if route.namespace else "at the cluster scope"
            why = f'User "{self.user}" cannot {verb} resource "{plural}" in API group "{group}" {scope}'
            return forbidden_request(group, plural, name, why)
        if code == 422 and rt is not None and fault.reason is None:
            detail = fault.message or "injected by the API server double"
            return invalid_object(rt.group, rt.kind, name, [invalid("metadata.name", name, detail)])
        if code == 404 and rt is not None and fault.message is None:
            return not_found(group, plural, name)
        if code == 409 and rt is not None and fault.message is None:
            return conflict(
                group,
                plural,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            )
        message = fault.message or ("Internal error occurred: injected failure" if code == 500 else "injected failure")
        return ApiError(code, message, fault.reason or REASON_FOR_CODE.get(code, "Unknown"))

    def _dispatch(
        self,
        handler: _Handler,
        path: str,
        query: Mapping[str, list[str]],
        body: bytes,
        route: Route,
    ) -> None:
        accept = handler.headers.get("Accept")
        if route.rtype is None:
            if path.strip("/").split("/")[0] in ("api", "apis"):  # discovery documents negotiate too
                handler.media = negotiate_output(accept)
                self._refuse_protobuf(handler)
            self._discovery(handler, path)
            return
        # Every resource handler negotiates the answer first (handlers/get.go, create.go, patch.go,
        # delete.go, update.go); a watch then needs a stream serializer (watch.go).
        handler.media = negotiate_output(accept)
        if route.verb == "watch":
            handler.media = negotiate_stream(accept)
        self._refuse_protobuf(handler)
        rt = route.rtype
        ns = route.namespace
        cluster = self.cluster
        dry_run = self._dry_run(query, route)
        field_validation = _one(query, "fieldValidation") or ""
        if field_validation not in ("", "Ignore", "Warn", "Strict"):
            raise bad_request(f"fieldValidation parameter unsupported: {field_validation}")
        manager = _one(query, "fieldManager")
        default_manager = (handler.headers.get("User-Agent") or "unknown").split("/")[0][:128]
        if route.subresource == "log":
            assert route.name is not None
            self._serve_log(handler, ns or "default", route.name, query)
        elif route.verb == "get":
            assert route.name is not None
            handler.send_json(200, cluster.get(rt, ns, route.name))
        elif route.verb == "list":
            accept = make_filter(_one(query, "labelSelector"), _one(query, "fieldSelector"), rt.allowed_field_labels())
            handler.send_json(
                200, cluster.list(rt, ns, accept, _int_param(query, "limit") or 0, _one(query, "continue") or "")
            )
        elif route.verb == "watch":
            self._serve_watch(handler, rt, ns, query)
        elif route.verb == "create":
            obj = _parse_body(body, negotiate_input(handler.headers.get("Content-Type")))
            result = cluster.create(rt, ns, obj, manager or default_manager, dry_run, field_validation)
            handler.send_json(201, result.obj, result.warnings)
        elif route.verb == "update":
            assert route.name is not None
            result = cluster.update(
                rt,
                ns,
                route.name,
                _parse_body(body, negotiate_input(handler.headers.get("Content-Type"))),
                manager or default_manager,
                dry_run,
                field_validation,
                route.subresource,
            )
            handler.send_json(200, result.obj, result.warnings)
        elif route.verb in ("patch", "apply"):
            assert route.name is not None
            result = cluster.patch(
                rt,
                ns,
                route.name,
                handler.headers.get("Content-Type", ""),
                body,
                manager,
                default_manager,
                _flag(query, "force"),
                dry_run,
                field_validation,
                route.subresource,
            )
            handler.send_json(201 if result.created else 200, result.obj, result.warnings)
        elif route.verb == "delete":
            assert route.name is not None
            options = _parse_body(body, negotiate_input(handler.headers.get("Content-Type"))) if body else {}
            if not isinstance(options, dict):
                raise bad_request("the body of a delete must be a DeleteOptions object")
            dry_run = dry_run or options.get("dryRun") == ["All"]
            policy = self._propagation(query, options)
            handler.send_json(200, cluster.delete(rt, ns, route.name, policy, dry_run, options.get("preconditions")))
        elif route.verb == "deletecollection":
            options = _parse_body(body, negotiate_input(handler.headers.get("Content-Type"))) if body else {}
            accept = make_filter(_one(query, "labelSelector"), _one(query, "fieldSelector"), rt.allowed_field_labels())
            policy = self._propagation(query, options)
            handler.send_json(200, cluster.delete_collection(rt, ns, accept, policy, dry_run))
        else:
            raise method_not_supported(rt.group, rt.plural)

    @staticmethod
    def _refuse_protobuf(handler: _Handler) -> None:
        """The one media type the real server serves and the double cannot encode (README.md)."""
        if handler.media not in (JSON_TYPE, YAML_TYPE):
            handler.media = JSON_TYPE
            raise ApiError(
                406,
                f"the API-server double does not encode {PROTOBUF_TYPE}: ask for application/json",
                "NotAcceptable",
            )

    def _dry_run(self, query: Mapping[str, list[str]], route: Route) -> bool:
        values = list(query.get("dryRun", []))
        for value in values:
            if value != "All":
                options = {"create": "CreateOptions", "update": "UpdateOptions", "delete": "DeleteOptions"}.get(
                    route.verb, "PatchOptions"
                )
                raise invalid_object("meta.k8s.io", options, "", [not_supported("dryRun", value, ["All"])])
        return bool(values)

    @staticmethod
    def _propagation(query: Mapping[str, list[str]], options: Any) -> str | None:
        policy = _one(query, "propagationPolicy")
        if isinstance(options, dict):
            if options.get("propagationPolicy"):
                policy = str(options["propagationPolicy"])
            elif options.get("orphanDependents") is not None:
                policy = "Orphan" if options["orphanDependents"] else "Background"
        if policy is None and _one(query, "orphanDependents") is not None:
            policy = "Orphan" if _flag(query, "orphanDependents") else "Background"
        return policy

    # -- discovery --------------------------------------------------------------------------------

    def _discovery(self, handler: _Handler, path: str) -> None:
        segments = [s for s in path.split("/") if s]
        groups = self.cluster.served_groups()
        if segments in (["version"],):
            major, minor, patch = self.kube_version
            handler.send_json(
                200,
                {
                    "major": str(major),
                    "minor": str(minor),
                    "gitVersion": f"v{major}.{minor}.{patch}",
                    "gitCommit": "apiserver-double",
                    "gitTreeState": "clean",
                    "buildDate": "2025-01-01T00:00:00Z",
                    "goVersion": "go1.24.0",
                    "compiler": "gc",
                    "platform": "linux/amd64",
                },
            )
        elif segments in (["healthz"], ["livez"], ["readyz"]):
            handler._send(200, b"ok", "text/plain; charset=utf-8")
        elif segments == ["api"]:
            handler.send_json(
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self.host}:{self._port}"}
                    ],
                },
            )
        elif segments == ["api", "v1"]:
            handler.send_json(200, self._resource_list("", "v1"))
        elif segments == ["apis"]:
            handler.send_json(
                200,
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [_group_doc(g, v) for g, v in sorted(groups.items())],
                },
            )
        elif len(segments) == 2 and segments[0] == "apis" and segments[1] in groups:
            doc = _group_doc(segments[1], groups[segments[1]])
            handler.send_json(200, dict(doc, kind="APIGroup", apiVersion="v1"))
        elif len(segments) == 3 and segments[0] == "apis" and groups.get(segments[1]) == segments[2]:
            handler.send_json(200, self._resource_list(segments[1], segments[2]))
        else:
            raise no_such_resource()

    def _resource_list(self, group: str, version: str) -> JSON:
        resources: list[JSON] = []
        for rt in sorted(self.cluster.types_in(group, version), key=lambda r: r.plural):
            resources.extend(api_resource(rt))
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    # -- streaming: watch and log follow ----------------------------------------------------------

    def _serve_watch(
        self,
        handler: _Handler,
        rt: ResourceType,
        namespace: str | None,
        query: Mapping[str, list[str]],
    ) -> None:
        cluster = self.cluster
        accept = make_filter(_one(query, "labelSelector"), _one(query, "fieldSelector"), rt.allowed_field_labels())
        timeout = _int_param(query, "timeoutSeconds")
        rv_param = _one(query, "resourceVersion") or ""
        initial: list[JSON] = []
        if rv_param in ("", "0"):
            with cluster.lock:
                initial = cluster.items(rt, namespace, accept)
                last = cluster.rv
        else:
            try:
                last = int(rv_param)
            except ValueError:
                raise bad_request(f'invalid resource version: "{rv_param}"') from None
        handler.start_chunked("application/json")
        for obj in initial:
            handler.chunk(_event_line("ADDED", obj))
        deadline = None if timeout is None else time.monotonic() + timeout
        scoped = namespace is not None and rt.namespaced
        while True:
            try:
                changes = cluster.changes_after(last)
            except ApiError as err:  # 410 Gone travels as an ERROR event, as on a real server
                handler.chunk(_event_line("ERROR", err.status()))
                break
            if changes:
                last = changes[-1].rv
            for change in changes:
                if change.rtype is not rt or (scoped and change.namespace != namespace):
                    continue
                event = _watch_event(change, accept)
                if event is not None:
                    handler.chunk(_event_line(*event))
            with cluster.lock:
                remaining = 0.5 if deadline is None else deadline - time.monotonic()
                if cluster.closing or remaining <= 0:
                    break
                if cluster.rv == last:
                    cluster.changed.wait(min(0.5, remaining))
        handler.end_chunks()

    def _serve_log(self, handler: _Handler, namespace: str, pod_name: str, query: Mapping[str, list[str]]) -> None:
        cluster = self.cluster
        pod = cluster.get(PODS, namespace, pod_name)
        spec = pod.get("spec") or {}
        names = [c["name"] for c in spec.get("containers") or []]
        init_names = [c["name"] for c in spec.get("initContainers") or []]
        container = _one(query, "container")
        if not container:
            if len(names) != 1:
                message = f"a container name must be specified for pod {pod_name}, choose one of: [{' '.join(names)}]"
                if init_names:
                    message += f" or one of the init containers: [{' '.join(init_names)}]"
                raise bad_request(message)
            container = names[0]
        if container not in names + init_names:
            raise bad_request(f"container {container} is not valid for pod {pod_name}")
        previous = _flag(query, "previous")
        timestamps = _flag(query, "timestamps")
        follow = _flag(query, "follow") and not previous
        tail = _int_param(query, "tailLines")
        limit = _int_param(query, "limitBytes")
        since = _int_param(query, "sinceSeconds")
        since_time = _one(query, "sinceTime")
        cutoff: dt.datetime | None = None
        if since is not None:
            cutoff = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=since)
        elif since_time:
            try:
                cutoff = dt.datetime.fromisoformat(since_time.replace("Z", "+00:00"))
            except ValueError:
                raise bad_request(f'invalid sinceTime: "{since_time}"') from None
        with cluster.lock:
            lines = cluster.log_lines(namespace, pod_name, container, previous)
            state = cluster.container_state(namespace, pod_name, container)
        if previous and not lines:
            raise bad_request(f'previous terminated container "{container}" in pod "{pod_name}" not found')
        if not lines and "waiting" in state:
            reason = (state.get("waiting") or {}).get("reason", "ContainerCreating")
            raise bad_request(f'container "{container}" in pod "{pod_name}" is waiting to start: {reason}')
        seen = len(lines)
        shown = [line for line in lines if cutoff is None or line.time >= cutoff]
        if tail is not None:
            shown = shown[-tail:] if tail > 0 else []

        def render(line: Any) -> bytes:
            prefix = f"{rfc3339_nano(line.time)} " if timestamps else ""
            return f"{prefix}{line.text}\n".encode()

        payload = b"".join(render(line) for line in shown)
        if limit is not None:
            payload = payload[:limit]
        if not follow:
            handler._send(200, payload, "text/plain")
            return
        handler.start_chunked("text/plain")
        sent = len(payload)
        handler.chunk(payload)
        while limit is None or sent < limit:
            with cluster.lock:
                lines = cluster.log_lines(namespace, pod_name, container, False)
                state = cluster.container_state(namespace, pod_name, container)
                fresh = lines[seen:]
                seen = len(lines)
                if not fresh:
                    if "terminated" in state or cluster.closing:
                        break
                    cluster.changed.wait(0.5)
                    continue
            data = b"".join(render(line) for line in fresh)
            if limit is not None:
                data = data[: limit - sent]
            sent += len(data)
            handler.chunk(data)
        handler.end_chunks()


def _parse_body(body: bytes, media: str) -> Any:
    """A request body in its negotiated media type (JSON, or YAML; protobuf is not decoded)."""
    if media == YAML_TYPE:
        try:
            return yaml.safe_load(body or b"null")
        except yaml.YAMLError as exc:
            raise bad_request(f"error converting YAML to JSON: {exc}") from None
    if media != JSON_TYPE:
        raise bad_request(f"the API-server double does not decode {media}")
    return _parse_json(body)


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError as exc:
        raise bad_request(f"couldn't get version/kind; json parse error: {exc}") from None


def _group_doc(group: str, version: str) -> JSON:
    entry = {"groupVersion": f"{group}/{version}", "version": version}
    return {"name": group, "versions": [entry], "preferredVersion": entry}


def _event_line(kind: str, obj: JSON) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


def _watch_event(change: Change, accept: Any) -> tuple[str, JSON] | None:
    """Translate a stored change into what a filtered watch sees (ADDED/MODIFIED/DELETED)."""
    now_matches = accept(change.new)
    before = change.old is not None and accept(change.old)
    if change.type == "DELETED":
        return ("DELETED", change.new) if before else None
    if change.type == "ADDED":
        return ("ADDED", change.new) if now_matches else None
    if now_matches and before:
        return ("MODIFIED", change.new)
    if now_matches:
        return ("ADDED", change.new)
    if before:
        return ("DELETED", change.new)
    return None


def _container_spec(container: str | JSON) -> JSON:
    return container if isinstance(container, dict) else {"name": container, "image": "busybox"}


def _owner_reference(owner: JSON) -> JSON:
    meta = owner.get("metadata") or {}
    return {
        "apiVersion": owner.get("apiVersion", ""),
        "kind": owner.get("kind", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _container_status(spec: JSON, phase: str, now: str, restart_count: int) -> JSON:
    if phase == "Pending":
        state: JSON = {"waiting": {"reason": "ContainerCreating"}}
    elif phase == "Running":
        state = {"running": {"startedAt": now}}
    else:
        code = 0 if phase == "Succeeded" else 1
        state = {
            "terminated": {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "startedAt": now,
                "finishedAt": now,
            }
        }
    return {
        "name": spec["name"],
        "image": spec.get("image", "busybox"),
        "imageID": "",
        "ready": phase == "Running",
        "started": phase == "Running",
        "restartCount": restart_count,
        "state": state,
    }


def owner_reference(owner: JSON, controller: bool = True) -> JSON:
    """An ownerReference pointing at a stored object (for building dependents in tests)."""
    ref = _owner_reference(owner)
    ref["controller"] = controller
    return ref


def double_fixture(**options: Any) -> Any:
    """Build a pytest fixture yielding a started ApiServerDouble, e.g.

    apiserver = double_fixture(crds={"jobset"}, token="t0k3n")
    """
    import pytest

    @pytest.fixture
    def _double() -> Iterator[ApiServerDouble]:
        with ApiServerDouble(**options) as srv:
            yield srv

    return _double


__all__ = [
    "ApiServerDouble",
    "Fault",
    "RecordedRequest",
    "double_fixture",
    "owner_reference",
]
