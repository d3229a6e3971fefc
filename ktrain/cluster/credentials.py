"""Who a request says it is: a kubeconfig `user` turned into headers and a client certificate,
the way client-go's `rest`/`transport` packages do it, for the standard-library transport.

- `token`, `tokenFile` (re-read once a minute, and at once after a 401, as client-go's
  `cachingTokenSource` does: service-account tokens are rotated), `username`/`password`;
- `client-certificate[-data]` and `client-key[-data]`;
- `exec` credential plugins (`client.authentication.k8s.io/v1` and `v1beta1`): run once per
  process and reused until their `expirationTimestamp`, or until the server answers 401;
  `KUBERNETES_EXEC_INFO`, `interactiveMode`, `provideClusterInfo`, `env` and `installHint` as
  in client-go's `plugin/pkg/client/auth/exec`;
- impersonation (`as`, `as-uid`, `as-groups`, `as-user-extra`).

A static token, basic auth or client certificate wins over an exec plugin (client-go: "the
intention is to use the provided token"). `auth-provider` is not handled here:
`ktrain.cluster.kube.connect` hands such a user to the `kubernetes` client.

Secrets stay in memory: no message quotes a token, a key or a plugin's output.
"""

from __future__ import annotations

import os
import sys
import time
from _thread import allocate_lock

from ktrain.errors import ClusterError, UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

TOKEN_FILE_PERIOD = 60.0  # seconds a token file's contents are trusted (client-go: one minute)
EXEC_TIMEOUT = 300.0  # a non-interactive plugin that has not answered in five minutes never will
EXEC_INTERACTIVE_TIMEOUT = 1800.0  # one that asks the user (a browser login) gets half an hour
EXEC_TIMEOUT_ENV = "KTRAIN_EXEC_PLUGIN_TIMEOUT"  # seconds, for both kinds (kubectl waits for ever)
MAX_PLUGIN_OUTPUT = 1024 * 1024
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
EXEC_EXPIRY_SLACK = 5.0  # refresh a little before the plugin's expiry, not after a refused request


class ClientCert:
    """PEM bytes of a certificate chain and its key, or the files holding them."""

    __slots__ = ("cert_data", "cert_file", "key_data", "key_file")

    def __init__(
        self,
        *,
        cert_file: str | None = None,
        key_file: str | None = None,
        cert_data: bytes | None = None,
        key_data: bytes | None = None,
    ) -> None:
        self.cert_file, self.key_file = cert_file, key_file
        self.cert_data, self.key_data = cert_data, key_data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClientCert) and (
            self.cert_file,
            self.key_file,
            self.cert_data,
            self.key_data,
        ) == (other.cert_file, other.key_file, other.cert_data, other.key_data)

    __hash__ = None  # type: ignore[assignment]


def _b64(value: Any, what: str) -> bytes:
    import base64
    import binascii

    try:
        return base64.b64decode(str(value), validate=False)
    except (binascii.Error, ValueError):
        raise UsageError(f"the kubeconfig's {what} is not valid base64") from None


def _read_secret_file(path: str, what: str) -> bytes:
    """The file's bytes (at most 1 MiB). Only a regular file: a FIFO or a device would block the
    command for ever (opened without blocking, then checked before a byte is read)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(f"the kubeconfig's {what} {path} is not a regular file")
            data = fh.read(MAX_PLUGIN_OUTPUT + 1)
    except OSError as exc:
        raise UsageError(f"cannot read the kubeconfig's {what} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_PLUGIN_OUTPUT:
        raise UsageError(f"the kubeconfig's {what} {path} is larger than 1 MiB")
    return data


class Credentials:
    """Headers and a client certificate for requests, refreshed when they age or are refused."""

    def __init__(self, user: dict[str, Any], *, cluster: dict[str, Any] | None = None) -> None:
        self._token: str | None = user.get("token") or None
        self._token_file: str | None = user.get("tokenFile") or None
        self._file_token: str | None = None
        self._file_read_at = -1e18
        username, password = user.get("username"), user.get("password")
        self._basic = (str(username), str(password or "")) if username else None
        self._cert = self._static_cert(user)
        self._impersonation = _impersonation_headers(user)
        exec_config = user.get("exec")
        static = self._token or self._token_file or self._basic or self._cert
        self._exec = ExecPlugin(exec_config, cluster or {}) if isinstance(exec_config, dict) and not static else None

    @staticmethod
    def _static_cert(user: dict[str, Any]) -> ClientCert | None:
        cert_data = user.get("client-certificate-data")
        key_data = user.get("client-key-data")
        cert_file = user.get("client-certificate")
        key_file = user.get("client-key")
        if not (cert_data or cert_file or key_data or key_file):
            return None
        if not (cert_data or cert_file) or not (key_data or key_file):
            raise UsageError(
                "the kubeconfig user has a client certificate without its key, or a key without its certificate"
            )
        return ClientCert(
            cert_file=None if cert_data else str(cert_file),
            key_file=None if key_data else str(key_file),
            cert_data=_b64(cert_data, "client-certificate-data") if cert_data else None,
            key_data=_b64(key_data, "client-key-data") if key_data else None,
        )

    def for_request(self) -> tuple[list[tuple[str, str]], ClientCert | None]:
        """(headers, client certificate) for one request: (name, value) pairs, a name may repeat
        (one Impersonate-Group header per group). An exec plugin is asked at most once here."""
        headers = list(self._impersonation)
        cert = self._cert
        token = self._current_token()
        if token:
            headers.append(("Authorization", f"Bearer {token}"))
        elif self._basic is not None:
            import base64

            pair = f"{self._basic[0]}:{self._basic[1]}".encode()
            headers.append(("Authorization", "Basic " + base64.b64encode(pair).decode("ascii")))
        elif self._exec is not None:
            credential = self._exec.get()
            if credential.token:
                headers.append(("Authorization", f"Bearer {credential.token}"))
            cert = credential.cert
        return headers, cert

    def _current_token(self) -> str | None:
        if self._token_file:
            now = time.monotonic()
            if now - self._file_read_at >= TOKEN_FILE_PERIOD:
                token = _read_secret_file(self._token_file, "tokenFile").decode("utf-8", "replace").strip()
                self._file_token, self._file_read_at = token or None, now
            return self._file_token or self._token
        return self._token

    def refresh(self) -> bool:
        """After a 401: fetch what may have changed (a rotated token file, an exec credential).
        True when the request is worth sending once more."""
        if self._token_file:
            before = self._file_token
            self._file_read_at = -1e18
            return self._current_token() != before
        if self._exec is not None and not (self._token or self._basic or self._cert):
            return self._exec.invalidate()
        return False


def _impersonation_headers(user: dict[str, Any]) -> list[tuple[str, str]]:
    """client-go's impersonatingRoundTripper: one header per group and per extra value (the API
    server reads each header as one value; it does not split on commas)."""
    headers: list[tuple[str, str]] = []
    if user.get("as"):
        headers.append(("Impersonate-User", str(user["as"])))
    if user.get("as-uid"):
        headers.append(("Impersonate-Uid", str(user["as-uid"])))
    headers += [("Impersonate-Group", str(g)) for g in user.get("as-groups") or []]
    for key, values in sorted((user.get("as-user-extra") or {}).items()):
        headers += [(f"Impersonate-Extra-{header_key_escape(str(key))}", str(v)) for v in values or []]
    return headers


_TOKEN_BYTES = frozenset(b"!#$&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def header_key_escape(key: str) -> str:
    """client-go's headerKeyEscape: every byte that is not an HTTP token character, and `%`, as %XX
    (the API server lower-cases the key and `url.PathUnescape`s it)."""
    return "".join(chr(b) if b in _TOKEN_BYTES else f"%{b:02X}" for b in key.encode("utf-8", "surrogatepass"))


# --- exec credential plugins ------------------------------------------------------------------


class ExecCredential:
    __slots__ = ("cert", "expires", "token")

    def __init__(self, token: str | None, cert: ClientCert | None, expires: float | None) -> None:
        self.token, self.cert, self.expires = token, cert, expires

    def fresh(self) -> bool:
        return self.expires is None or time.time() < self.expires - EXEC_EXPIRY_SLACK


# One credential per plugin configuration and cluster, for the life of the process (client-go
# keeps its authenticators in a package-level cache keyed the same way).
_EXEC_CACHE: dict[str, ExecCredential] = {}
# `job logs -f --all` streams from several threads: one plugin run serves them all. (threading.Lock
# is this; importing `threading` would cost every cluster command about 1 ms.)
_EXEC_LOCK = allocate_lock()


class ExecPlugin:
    def __init__(self, config: dict[str, Any], cluster: dict[str, Any]) -> None:
        import json

        self.config = config
        self.cluster = cluster
        api_version = config.get("apiVersion")
        if api_version not in EXEC_API_VERSIONS:
            raise UsageError(
                f"the kubeconfig's exec plugin asks for apiVersion {api_version!r}; "
                f"ktrain speaks {' and '.join(EXEC_API_VERSIONS)}",
                hint="client.authentication.k8s.io/v1alpha1 was removed in Kubernetes 1.24: update the plugin",
            )
        self.api_version = str(api_version)
        if not isinstance(config.get("command"), str) or not config["command"]:
            raise UsageError("the kubeconfig's exec plugin has no command")
        mode = config.get("interactiveMode")
        if mode is None:
            if self.api_version.endswith("/v1"):
                raise UsageError(
                    f"the kubeconfig's exec plugin {config['command']!r} must set interactiveMode "
                    f"for {self.api_version}"
                )
            mode = "IfAvailable"
        if mode not in ("Never", "IfAvailable", "Always"):
            raise UsageError(f"the kubeconfig's exec plugin has an unknown interactiveMode {mode!r}")
        self.mode = str(mode)
        self.key = json.dumps([config, cluster if config.get("provideClusterInfo") else None], sort_keys=True)

    def get(self) -> ExecCredential:
        with _EXEC_LOCK:
            cached = _EXEC_CACHE.get(self.key)
            if cached is not None and cached.fresh():
                return cached
            credential = self._run()
            _EXEC_CACHE[self.key] = credential
            return credential

    def invalidate(self) -> bool:
        with _EXEC_LOCK:
            return _EXEC_CACHE.pop(self.key, None) is not None

    def _interactive(self) -> bool:
        if self.mode == "Never":
            return False
        try:
            terminal = os.isatty(sys.stdin.fileno())
        except (AttributeError, ValueError, OSError):
            terminal = False
        if self.mode == "Always" and not terminal:
            raise ClusterError(
                f"the exec credential plugin {self.config['command']!r} needs a terminal (interactiveMode: Always), "
                "and standard input is not one",
                hint="run ktrain from a terminal once to log in, or change the plugin's interactiveMode",
            )
        return terminal

    def _exec_info(self, interactive: bool) -> str:
        import json

        spec: dict[str, Any] = {"interactive": interactive}
        if self.config.get("provideClusterInfo"):
            cluster = self.cluster
            info: dict[str, Any] = {"server": cluster.get("server")}
            for key, out in (
                ("tls-server-name", "tls-server-name"),
                ("insecure-skip-tls-verify", "insecure-skip-tls-verify"),
                ("proxy-url", "proxy-url"),
            ):
                if cluster.get(key):
                    info[out] = cluster[key]
            if cluster.get("certificate-authority-data"):
                info["certificate-authority-data"] = cluster["certificate-authority-data"]
            elif cluster.get("certificate-authority"):
                import base64

                ca = _read_secret_file(str(cluster["certificate-authority"]), "certificate-authority")
                info["certificate-authority-data"] = base64.b64encode(ca).decode("ascii")
            for extension in cluster.get("extensions") or []:
                if isinstance(extension, dict) and extension.get("name") == "client.authentication.k8s.io/exec":
                    info["config"] = extension.get("extension")
            spec["cluster"] = info
        return json.dumps({"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec})

    def _run(self) -> ExecCredential:
        import subprocess

        command = str(self.config["command"])
        interactive = self._interactive()
        env = dict(os.environ)
        for item in self.config.get("env") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                env[item["name"]] = str(item.get("value", ""))
        env["KUBERNETES_EXEC_INFO"] = self._exec_info(interactive)
        argv = [command, *(str(a) for a in self.config.get("args") or [])]
        try:
            proc = subprocess.Popen(
                argv,
                env=env,
                stdin=None if interactive else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=None,  # the plugin talks to the user (prompts, errors) as under kubectl
                # its own process group, so that a timeout kills what it started too (not when it
                # needs the terminal: a new session would lose it)
                start_new_session=not interactive,
            )
        except FileNotFoundError:
            hint = str(self.config.get("installHint") or "").strip() or None
            raise ClusterError(
                f"the exec credential plugin {command!r} of the kubeconfig is not installed (not found on PATH)",
                hint=hint or "install it, or pick another context with --context",
            ) from None
        except PermissionError:
            raise ClusterError(f"the exec credential plugin {command!r} is not executable") from None
        limit = _exec_limit(interactive)
        try:
            output = _read_bounded(proc, time.monotonic() + limit)
        except _PluginTooLong:
            raise ClusterError(
                f"the exec credential plugin {command!r} did not answer within {limit:g}s (it was stopped)"
            ) from None
        except _PluginTooChatty:
            raise ClusterError(
                f"the exec credential plugin {command!r} printed more than 1 MiB (it was stopped)"
            ) from None
        if proc.returncode != 0:
            raise ClusterError(
                f"the exec credential plugin {command!r} failed (exit {proc.returncode})",
                hint="its own message is above; run it by hand to log in again",
            )
        return self._parse(output, command)

    def _parse(self, output: bytes, command: str) -> ExecCredential:
        import json

        def bad(why: str) -> ClusterError:  # never quote the output: it holds the credential
            return ClusterError(f"the exec credential plugin {command!r} printed {why}")

        if len(output) > MAX_PLUGIN_OUTPUT:
            raise bad("more than 1 MiB")
        try:
            document = json.loads(output)
        except ValueError:
            raise bad("something that is not a JSON ExecCredential") from None
        if not isinstance(document, dict) or document.get("kind") != "ExecCredential":
            raise bad("JSON that is not an ExecCredential")
        if document.get("apiVersion") != self.api_version:
            raise bad(
                f"an ExecCredential of apiVersion {document.get('apiVersion')!r}, "
                f"where the kubeconfig asked for {self.api_version}"
            )
        status = document.get("status")
        if not isinstance(status, dict):
            raise bad("an ExecCredential without a status")
        token = status.get("token")
        cert_data, key_data = status.get("clientCertificateData"), status.get("clientKeyData")
        if bool(cert_data) != bool(key_data):
            raise bad("a client certificate without its key (or a key without its certificate)")
        if not token and not cert_data:
            raise bad("an ExecCredential with neither a token nor a client certificate")
        cert = ClientCert(cert_data=str(cert_data).encode(), key_data=str(key_data).encode()) if cert_data else None
        expires = None
        stamp = status.get("expirationTimestamp")
        if stamp:
            expires = _rfc3339(str(stamp))
            if expires is None:  # never quoted: a confused plugin may have put the token there
                raise bad("an expirationTimestamp that is not an RFC 3339 time")
        return ExecCredential(str(token) if token else None, cert, expires)


def _exec_limit(interactive: bool) -> float:
    raw = os.environ.get(EXEC_TIMEOUT_ENV, "").strip()
    if not raw:
        return EXEC_INTERACTIVE_TIMEOUT if interactive else EXEC_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 1e9:
        raise UsageError(f"{EXEC_TIMEOUT_ENV} must be a number of seconds above 0")
    return seconds


class _PluginTooLong(Exception):
    pass


class _Terminated(BaseException):
    """SIGTERM or SIGHUP reached ktrain while a plugin ran: the plugin is stopped, then the signal
    is delivered again as it would have been."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_termination() -> dict[int, Any]:
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, _frame: object) -> None:
        raise _Terminated(signum)

    return {signum: signal.signal(signum, handler) for signum in (signal.SIGTERM, signal.SIGHUP)}


class _PluginTooChatty(Exception):
    pass


def _read_bounded(proc: Any, deadline: float) -> bytes:
    """The plugin's standard output, read as it comes: at most MAX_PLUGIN_OUTPUT bytes, and
    until `deadline`; past either the plugin (and its process group) is killed. Then its exit."""
    import selectors
    import signal

    parts: list[bytes] = []
    total = 0
    fd = proc.stdout.fileno()
    previous = _on_termination()
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _PluginTooLong
                if not selector.select(left):
                    continue
                data = os.read(fd, 65536)
                if not data:
                    break
                total += len(data)
                if total > MAX_PLUGIN_OUTPUT:
                    raise _PluginTooChatty
                parts.append(data)
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: it closed its output, kept running
            raise _PluginTooLong from None
    except _Terminated as exc:
        _kill(proc)  # its whole session: what it started goes too
        for signum, old in previous.items():
            signal.signal(signum, old)
        previous = {}
        os.kill(os.getpid(), exc.signum)  # as if it had come now (the default: ktrain ends)
        raise KeyboardInterrupt from None  # a handler that returned: stop this command anyway
    except BaseException:
        _kill(proc)
        raise
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        proc.stdout.close()
    return b"".join(parts)


def _kill(proc: Any) -> None:
    import signal

    try:
        if proc.pid == os.getpgid(proc.pid):  # its own group (start_new_session): all of it
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    try:
        proc.wait(5)
    except Exception:  # noqa: BLE001 - a process that survives SIGKILL is left to the OS
        pass


def _rfc3339(text: str) -> float | None:
    import datetime as dt

    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.timestamp()
