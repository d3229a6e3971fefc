"""The TrainJob status endpoint of a local run: what the Trainer controller's status server
(upstream `pkg/statusserver/server.go`) is to a pod, on 127.0.0.1.

`job run --local` starts one per run: a self-signed CA and a server certificate for 127.0.0.1
(`cryptography`, EC keys, valid for the run's day), a random per-run bearer token, and the three
variables the TrainJobStatus plugin gives the trainer containers (`KUBEFLOW_TRAINER_SERVER_URL`,
`..._CA_CERT`, `..._TOKEN`, pointing at files in the run's directory). So the Kubeflow SDK's
`update_trainjob_status` and `transformers`' `KubeflowCallback` report from a local run unchanged.

It answers as upstream's server does: `POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status`
with `Authorization: Bearer <token>` (403 `Forbidden` otherwise, and for another job's path); a body
over 64 KiB is 413 `Payload too large`; a body that does not decode as Go decodes
`UpdateTrainJobStatusRequest` (wrong types, trailing data) is 422 `Invalid payload`; one the CRD's
schema refuses (what the API server would answer the controller's status apply) is 422 with the API
server's message; no `trainerStatus` is 200 `{}`; success is 200 with the request as decoded. Every
error body is a `metav1.Status`. Anything else is 404 `Not found`.
"""

from __future__ import annotations

import datetime as dt
import hmac
import ipaddress
import json
import os
import secrets
import ssl
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from ktrain.progress.status import MAX_METRIC_TEXT, MAX_METRICS, Metric, TrainerStatus, parse_time
from ktrain.progress.view import summary

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_BODY = 1 << 16  # upstream's maxBodySize
MAX_DRAIN = 4 << 20  # read (and drop) this much of a refused body, so the client sees the 413
READ_TIMEOUT = 10.0  # upstream's readTimeout
INT32_MAX = 2**31 - 1
ENV_URL = "KUBEFLOW_TRAINER_SERVER_URL"
ENV_CA = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
ENV_TOKEN = "KUBEFLOW_TRAINER_SERVER_TOKEN"


class _Refused(Exception):
    def __init__(self, code: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


def go_json(value: Any) -> bytes:
    """What Go's `json.Encoder` writes: no spaces, UTF-8, `<`, `>` and `&` escaped, a newline."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (text + "\n").encode()


def status_body(code: int, message: str, reason: str) -> bytes:
    """A metav1.Status as Go's encoder writes it (TypeMeta empty, ListMeta `{}`)."""
    return go_json({"metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code})


def status_path(namespace: str, name: str) -> str:
    return f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status"


def _field(obj: dict[str, Any], name: str) -> Any:
    """encoding/json's field lookup: the exact key, else a case-insensitive one (the last wins)."""
    if name in obj:
        return obj[name]
    found = None
    for key, value in obj.items():
        if key.lower() == name.lower():
            found = value
    return found


def _int32(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value <= INT32_MAX:
        raise ValueError("not an int32")
    return value


def _string(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def decode_request(body: bytes) -> dict[str, Any] | None:
    """`UpdateTrainJobStatusRequest` as Go's decoder reads it: the trainerStatus mapping in the
    CRD's field order (None: absent or null). Raises ValueError where Go's decoder fails."""
    text = body.decode("utf-8")  # invalid UTF-8 is a decode error too (Go replaces it; close enough)
    decoder = json.JSONDecoder()
    value, end = decoder.raw_decode(text, len(text) - len(text.lstrip()))
    if text[end:].strip():
        raise ValueError("trailing data")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("not an object")
    raw = _field(value, "trainerStatus")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError("trainerStatus is not an object")
    out: dict[str, Any] = {}
    percent = _int32(_field(raw, "progressPercentage"))
    if percent is not None:
        out["progressPercentage"] = percent
    eta = _int32(_field(raw, "estimatedRemainingSeconds"))
    if eta is not None:
        out["estimatedRemainingSeconds"] = eta
    metrics = _field(raw, "metrics")
    if metrics is not None:
        if not isinstance(metrics, list):
            raise ValueError("metrics is not a list")
        items = []
        for item in metrics:
            if item is None:
                items.append({"name": "", "value": ""})
                continue
            if not isinstance(item, dict):
                raise ValueError("a metric is not an object")
            items.append({"name": _string(_field(item, "name")), "value": _string(_field(item, "value"))})
        if items:
            out["metrics"] = items
    updated = _field(raw, "lastUpdatedTime")
    if updated is not None:
        if not isinstance(updated, str) or parse_time(updated) is None or "T" not in updated.upper():
            raise ValueError("lastUpdatedTime is not RFC 3339")
        out["lastUpdatedTime"] = _utc_seconds(updated)
    return out


def _utc_seconds(text: str) -> str:
    """metav1.Time as it encodes: UTC, whole seconds, `Z`."""
    seconds = parse_time(text)
    assert seconds is not None
    return datetime.fromtimestamp(int(seconds // 1), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def schema_errors(status: dict[str, Any]) -> list[str]:
    """What the TrainJob CRD's schema says of `status.trainerStatus` (the API server's wording)."""
    base = "status.trainerStatus"
    errors: list[str] = []
    percent = status.get("progressPercentage")
    if percent is not None and percent > 100:
        errors.append(
            f"{base}.progressPercentage: Invalid value: {percent}: {base}.progressPercentage in body "
            "should be less than or equal to 100"
        )
    if percent is not None and percent < 0:
        errors.append(
            f"{base}.progressPercentage: Invalid value: {percent}: {base}.progressPercentage in body "
            "should be greater than or equal to 0"
        )
    eta = status.get("estimatedRemainingSeconds")
    if eta is not None and eta < 0:
        errors.append(
            f"{base}.estimatedRemainingSeconds: Invalid value: {eta}: {base}.estimatedRemainingSeconds "
            "in body should be greater than or equal to 0"
        )
    metrics = status.get("metrics") or []
    if len(metrics) > MAX_METRICS:
        errors.append(f"{base}.metrics: Too many: {len(metrics)}: must have at most {MAX_METRICS} items")
    for i, metric in enumerate(metrics[:MAX_METRICS]):
        for key in ("name", "value"):
            text = metric[key]
            path = f"{base}.metrics[{i}].{key}"
            if not text:
                errors.append(f'{path}: Invalid value: "": {path} in body should be at least 1 chars long')
            elif len(text) > MAX_METRIC_TEXT:
                errors.append(f"{path}: Too long: may not be more than {MAX_METRIC_TEXT} bytes")
    if "lastUpdatedTime" not in status:
        errors.append(f'{base}: Invalid value: "object": lastUpdatedTime is required when trainerStatus is present')
    return errors


def invalid_message(namespace: str, name: str, errors: list[str]) -> str:
    """The API server's StatusError message for an invalid object (`apierrors.NewInvalid`)."""
    shown = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return f'TrainJob.trainer.kubeflow.org "{name}" is invalid: {shown}'


def to_trainer_status(status: dict[str, Any]) -> TrainerStatus:
    return TrainerStatus(
        progress_percentage=status.get("progressPercentage"),
        estimated_remaining_seconds=status.get("estimatedRemainingSeconds"),
        metrics=[Metric(m["name"], m["value"]) for m in status.get("metrics") or []],
        last_updated_time=status.get("lastUpdatedTime"),
    )


def _certificates() -> tuple[bytes, bytes, bytes]:
    """(CA certificate, server certificate, server key), PEM: a CA of this run only, and a
    certificate for 127.0.0.1 and localhost it signed."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ktrain local run status CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca.public_bytes(pem), server.public_bytes(pem), key_pem


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


class StatusServer:
    """One run's status endpoint. `start()` it, give `env()` to the trainer containers, read
    `latest`; `stop()` at the end. `on_update(status)` is called for each accepted update."""

    def __init__(
        self, directory: str, namespace: str, name: str, on_update: Callable[[TrainerStatus], None] | None = None
    ) -> None:
        self.directory = directory
        self.namespace = namespace
        self.name = name
        self.on_update = on_update
        self.token = secrets.token_urlsafe(32)
        self.latest: TrainerStatus | None = None
        self.updates = 0
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.ca_path = os.path.join(directory, "ca.crt")
        self.token_path = os.path.join(directory, "token")
        self.port = 0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}{status_path(self.namespace, self.name)}"

    def env(self) -> dict[str, str]:
        return {ENV_URL: self.url, ENV_CA: self.ca_path, ENV_TOKEN: self.token_path}

    def start(self) -> StatusServer:
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        ca, cert, key = _certificates()
        _write(self.ca_path, ca)
        _write(self.token_path, self.token.encode())
        cert_path = os.path.join(self.directory, "server.crt")
        key_path = os.path.join(self.directory, "server.key")
        _write(cert_path, cert + ca)
        _write(key_path, key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(cert_path, key_path)
        os.unlink(key_path)  # loaded: nothing of the key stays on disk
        handler = _handler(self)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 16

            def get_request(self) -> Any:
                sock, address = super().get_request()
                sock.settimeout(READ_TIMEOUT)
                return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

            def handle_error(self, request: Any, client_address: Any) -> None:  # a client's broken TLS: quiet
                return None

        self._server = Server(("127.0.0.1", 0), handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="ktrain-status", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, method: str, path: str, authorization: str | None, body: bytes | None) -> tuple[int, bytes]:
        """(status code, body) for one request, as upstream's handler decides (the body is None
        when it was larger than MAX_BODY)."""
        if body is None:  # upstream's body-size middleware answers before the routes
            return 413, status_body(413, "Payload too large", "RequestEntityTooLarge")
        expected = status_path(self.namespace, self.name)
        parts = path.split("?", 1)[0].split("/")
        prefix = ["", "apis", "trainer.kubeflow.org", "v1alpha1", "namespaces"]
        is_route = (
            method == "POST"
            and len(parts) == 9
            and parts[:5] == prefix
            and (parts[6], parts[8]) == ("trainjobs", "status")
            and bool(parts[5] and parts[7])
        )
        if not is_route:
            return 404, status_body(404, "Not found", "NotFound")
        words = (authorization or "").split(" ")
        given = words[1] if len(words) == 2 and words[0] == "Bearer" else ""

        if not hmac.compare_digest(given.encode(), self.token.encode()) or path.split("?", 1)[0] != expected:
            return 403, status_body(403, "Forbidden", "Forbidden")
        try:
            status = decode_request(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return 422, status_body(422, "Invalid payload", "Invalid")
        if status is None:
            return 200, b"{}\n"
        errors = schema_errors(status)
        if errors:
            return 422, status_body(422, invalid_message(self.namespace, self.name, errors), "Invalid")
        found = to_trainer_status(status)
        with self._lock:
            self.latest = found
            self.updates += 1
        if self.on_update is not None:
            try:
                self.on_update(found)
            except Exception:  # noqa: BLE001 - showing progress must never fail the run
                pass
        return 200, go_json({"trainerStatus": status})


def _handler(server: StatusServer) -> Any:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ktrain-status"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet, as upstream logs at V(5)
            return None

        def _drain(self, length: int) -> None:
            """Read a refused body away (bounded), as Go's server does before answering."""
            left = min(length, MAX_DRAIN)
            while left > 0:
                piece = self.rfile.read(min(left, 65536))
                if not piece:
                    break
                left -= len(piece)

        def _body(self) -> bytes | None:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                data = bytearray()
                total = 0
                while True:
                    size = int(self.rfile.readline(64).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline(64)
                        return bytes(data) if total <= MAX_BODY else None
                    total += size
                    if total > MAX_DRAIN:
                        self.close_connection = True
                        return None
                    piece = self.rfile.read(size)
                    if total <= MAX_BODY:
                        data += piece
                    self.rfile.readline(8)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY or length < 0:
                self._drain(length)
                self.close_connection = True
                return None
            return self.rfile.read(length)

        def _serve(self) -> None:
            try:
                body = self._body() if self.command == "POST" else b""
            except (ValueError, OSError):
                body = None
            code, answer = server.answer(self.command, self.path, self.headers.get("Authorization"), body)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _serve

    return Handler


def trainer_rjobs(objects: list[dict[str, Any]]) -> list[str]:
    """The replicated jobs the TrainJobStatus plugin reaches: the first labelled ancestor trainer."""
    for obj in objects:
        if obj.get("kind") != "JobSet":
            continue
        for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
            labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
            if labels.get("trainer.kubeflow.org/trainjob-ancestor-step") == "trainer":
                return [str(rjob.get("name"))]
    return []


def serve_run(
    plan: Any, objects: list[dict[str, Any]], run_dir: str, show: Callable[[TrainerStatus], None]
) -> StatusServer:
    """Start a run's status endpoint and give its variables to the trainer step's containers."""
    server = StatusServer(os.path.join(run_dir, "trainer-status"), plan.namespace, plan.jobset, on_update=show).start()
    wanted = set(trainer_rjobs(objects))
    for pod in plan.pods():
        if pod.rjob in wanted:
            for container in pod.containers:
                container.env.update(server.env())
    return server


def show_progress(status: TrainerStatus) -> None:
    """One line on stderr per update: `progress: 45% ETA 1h00m loss=0.2347 (status)`."""
    sys.stderr.write(f"progress: {summary(status)}\n")
    sys.stderr.flush()
