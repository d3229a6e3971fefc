"""Pod host names and ports, mapped onto this machine (pure).

On the cluster a pod of a JobSet is reached as `<jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>`
(ENGINE.md §5.7; also with `.<namespace>.svc[.cluster.local]` after it), and every pod has its
own network, so all of them may listen on the same port (29500, 2222). Locally they share one:
each name becomes 127.0.0.1, and each (pod, port) a free port of its own, chosen when the run
starts. `rewrite` applies that to one string: `host:port` → `127.0.0.1:<its port>`, a bare host
→ `127.0.0.1`; `rewrite_json` does the same inside JSON text (TF_CONFIG, MX_CONFIG), where a port
may also sit beside the host as `{"url": host, "port": N}`.

The map travels to the pod as JSON (`NetMap.to_json`) for `ktrain.local.shim`, which applies it
to the environment a wrapper script computed inside the pod (ktrain's own TF/Paddle/MXNet
wrappers build host names from `$KTRAIN_JOBSET` at run time, out of reach of the planner).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

LOCALHOST = "127.0.0.1"
NETMAP_ENV = "KTRAIN_LOCAL_NETMAP"  # the map, for ktrain.local.shim inside a pod
_NAME_END = r"(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
# A port variable and the address variables it may go with: MASTER_PORT with MASTER_ADDR, ...
_OWN_IP = re.compile(r"(?<![\d.])127\.0\.0\.1:(\d{1,5})(?!\d)")
ADDRESS_SUFFIXES = ("_ADDR", "_ADDRESS", "_ADDRS", "_HOST", "_URI", "_URL")


@dataclass
class NetMap:
    """Which names are pods (`hosts`: every spelling → the pod's host name) and the local port
    of each (pod host name, port) used so far (`ports`)."""

    jobset: str
    rjobs: list[str]
    subdomain: str
    namespace: str
    hosts: set[str] = field(default_factory=set)
    ports: dict[str, int] = field(default_factory=dict)

    def pattern(self) -> re.Pattern[str]:
        rjobs = "|".join(re.escape(r) for r in sorted(self.rjobs, key=len, reverse=True))
        domain = re.escape(self.subdomain)
        ns = re.escape(self.namespace)
        return re.compile(
            rf"(?<![A-Za-z0-9.-])({re.escape(self.jobset)}-(?:{rjobs})-\d+-\d+)"
            rf"(?:\.{domain}(?:\.{ns}\.svc(?:\.cluster\.local)?)?)?\.?{_NAME_END}(?::(\d{{1,5}})(?!\d))?"
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "jobset": self.jobset,
                "rjobs": self.rjobs,
                "subdomain": self.subdomain,
                "namespace": self.namespace,
                "hosts": sorted(self.hosts),
                "ports": self.ports,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> NetMap:
        data = json.loads(text)
        return cls(
            jobset=data["jobset"],
            rjobs=list(data["rjobs"]),
            subdomain=data["subdomain"],
            namespace=data["namespace"],
            hosts=set(data["hosts"]),
            ports={str(k): int(v) for k, v in data["ports"].items()},
        )


class Rewriter:
    """Rewrites strings with a `NetMap`; `alloc` gives a free port for a (host, port) not seen
    yet (None: leave such a port as it is, as the shim does: it cannot agree with other pods)."""

    def __init__(self, netmap: NetMap, alloc: Callable[[], int] | None = None, self_host: str | None = None) -> None:
        self.netmap = netmap
        self.alloc = alloc
        # The pod whose values these are: its own IP (127.0.0.1 here) with one of its ports means
        # that port (PaddlePaddle's rank 0 names its master by its pod IP).
        self.self_host = self_host
        self._re = netmap.pattern()
        self.rewritten: set[str] = set()  # the pod hosts actually met

    def host_of(self, text: str) -> str | None:
        """The pod host a string names first, if any."""
        for m in self._re.finditer(text):
            if m.group(1) in self.netmap.hosts:
                return m.group(1)
        return None

    def port(self, host: str, port: int) -> int | None:
        key = f"{host}:{port}"
        found = self.netmap.ports.get(key)
        if found is None and self.alloc is not None:
            found = self.alloc()
            self.netmap.ports[key] = found
        return found

    def rewrite(self, text: str) -> str:
        if self.self_host is not None and LOCALHOST in text:
            text = self._rewrite_own_ip(text)
        if "-" not in text:
            return text

        def sub(m: re.Match[str]) -> str:
            host = m.group(1)
            if host not in self.netmap.hosts:
                return m.group(0)
            self.rewritten.add(host)
            if m.group(2) is None:
                return LOCALHOST
            local = self.port(host, int(m.group(2)))
            return f"{LOCALHOST}:{local if local is not None else m.group(2)}"

        return self._re.sub(sub, text)

    def _rewrite_own_ip(self, text: str) -> str:
        local_ports = set(self.netmap.ports.values())  # already rewritten: left alone

        def sub(m: re.Match[str]) -> str:
            port = int(m.group(1))
            local = self.netmap.ports.get(f"{self.self_host}:{port}")
            if local is None or port in local_ports:
                return m.group(0)
            return f"{LOCALHOST}:{local}"

        return _OWN_IP.sub(sub, text)

    def rewrite_json(self, text: str) -> str:
        """`rewrite` for a JSON value: strings inside it, and `{"url": host, "port": N}` pairs."""
        stripped = text.strip()
        if not stripped.startswith(("{", "[")):
            return self.rewrite(text)
        try:
            data = json.loads(stripped)
        except ValueError:
            return self.rewrite(text)
        new = self._walk(data)
        if new == data:
            return text
        return json.dumps(new, separators=(",", ":"))

    def _walk(self, value: object) -> object:
        if isinstance(value, str):
            return self.rewrite(value)
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, dict):
            out = {k: self._walk(v) for k, v in value.items()}
            port = value.get("port")
            if isinstance(port, int) and not isinstance(port, bool):
                host = next((self.host_of(v) for v in value.values() if isinstance(v, str) and self.host_of(v)), None)
                if host is not None:
                    local = self.port(host, port)
                    if local is not None:
                        out["port"] = local
            return out
        return value

    def rewrite_env(self, env: dict[str, str]) -> dict[str, str]:
        """Every value rewritten; a `*_PORT` number whose address variable (`MASTER_PORT` with
        `MASTER_ADDR`, `DMLC_TRACKER_PORT` with `DMLC_TRACKER_URI`) names a pod gets that pod's
        local port."""
        out = {}
        for name, value in env.items():
            new = self.rewrite_json(value) if value.lstrip()[:1] in ("{", "[") else self.rewrite(value)
            if name.endswith("PORT") and value.isdigit() and len(value) <= 5:
                host = self._paired_host(env, name[: -len("PORT")].rstrip("_"))
                if host is not None:
                    local = self.port(host, int(value))
                    if local is not None:
                        new = str(local)
            out[name] = new
        return out

    def _paired_host(self, env: dict[str, str], prefix: str) -> str | None:
        for suffix in ADDRESS_SUFFIXES:
            value = env.get(prefix + suffix)
            if value:
                host = self.host_of(value)
                if host is not None:
                    return host
        return None

    def rewrite_args(self, args: list[str]) -> list[str]:
        """Every word rewritten; `--master-port N` / `--master_port=N` next to a
        `--master-addr HOST` naming a pod gets that pod's local port."""
        hosts: dict[str, str] = {}
        for i in range(len(args)):
            key, value = _option(args, i)
            if key is not None and value is not None and key.endswith(("addr", "address", "host")):
                host = self.host_of(value)
                if host is not None:
                    hosts[key.rsplit("addr", 1)[0].rsplit("host", 1)[0]] = host
        out = [self.rewrite(word) for word in args]
        for i in range(len(args)):
            key, value = _option(args, i)
            if key is None or value is None or not key.endswith("port") or not value.isdigit():
                continue
            host = hosts.get(key[: -len("port")])
            local = self.port(host, int(value)) if host is not None else None
            if local is None:
                continue
            if "=" in args[i]:
                out[i] = f"{args[i].split('=', 1)[0]}={local}"
            else:
                out[i + 1] = str(local)
        return out


def _option(args: list[str], i: int) -> tuple[str | None, str | None]:
    """(`master_` for `--master_port`/`--master-port`, its value) of the option at i, if any."""
    word = args[i]
    if not word.startswith("--") or len(word) < 4:
        return None, None
    name, eq, value = word[2:].partition("=")
    key = name.lower().replace("-", "_")
    if eq:
        return key, value
    return key, args[i + 1] if i + 1 < len(args) else None
