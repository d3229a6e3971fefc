"""Option parsing shared by the commands."""

from __future__ import annotations

import sys

from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any


def parse_pairs(values: list[str] | None, flag: str) -> list[tuple[str, str]]:
    out = []
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} expects KEY=VALUE, got {item!r}")
        out.append((key, value))
    return out


def registry_from(runtime_files: list[str] | None, runtimes_dirs: list[str] | None) -> Any:
    import os

    from ktrain.inputs.registry import RuntimeRegistry

    return RuntimeRegistry(files=runtime_files, dirs=runtimes_dirs, env_path=os.environ.get("KTRAIN_RUNTIMES_PATH"))


def warn(message: str) -> None:
    from ktrain.output.errors import bounded
    from ktrain.util.text import printable

    # a warning may quote the server (a 403's message): its control characters are shown escaped
    sys.stderr.write("".join(f"warning: {printable(line)}\n" for line in bounded(message).split("\n")))


def note(message: str) -> None:
    sys.stderr.write(f"note: {message}\n")


def report_inputs(notes: list[str], warnings: list[str]) -> None:
    """What reading and rendering a job found out: notes (a v1 file converted, the files `--code`
    sends), then warnings, on stderr, as every job command prints them."""
    for message in notes:
        note(message)
    for message in warnings:
        warn(message)


def stall_notice(reason: str) -> None:
    """While waiting: why the job is not moving (once per new reason), on stderr."""
    from ktrain.util.text import printable

    sys.stderr.write(f"waiting: {printable(reason)}\n")


OUTPUT_FORMATS = ("yaml", "json", "name")


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str, flag: str) -> float:
    """Seconds from `90`, `30s`, `10m`, `1h30m` (Go duration units, as kubectl takes them)."""
    import re  # compiled only for a command that takes a duration

    value = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", value)
    if not parts or "".join(n + u for n, u in parts) != value:
        raise UsageError(f"{flag} expects a duration such as 30s, 10m or 1h30m, got {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def parse_timeout(text: str | None, flag: str = "--timeout") -> float | None:
    """A --timeout value in seconds; absent or 0 means no limit."""
    return (parse_duration(text, flag) or None) if text is not None else None


def connection(
    kubeconfig: str | None, context: str | None, namespace: str | None, request_timeout: float = 30.0
) -> Any:
    """A `ConnectionOptions` from the kubectl-style flags (no cluster is contacted)."""
    from ktrain.service.connection import ConnectionOptions

    return ConnectionOptions(
        kubeconfig=kubeconfig, context=context, namespace=namespace, request_timeout=request_timeout
    )


def cluster_for(kubeconfig: str | None, context: str | None, namespace: str | None, request_timeout: float) -> Any:
    """The cluster the kubectl-style flags name (kubeconfig read, nothing sent yet)."""
    from ktrain.service.connection import connect

    return connect(connection(kubeconfig, context, namespace, request_timeout))


def utc_now() -> Any:
    """The current time, as an aware UTC datetime (ages in `job list` / `job get`)."""
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc)


def dump_data(data: Any, output: str) -> str:
    """`-o yaml|json` of plain data that is not a Kubernetes object list."""
    if output == "json":
        import json

        return json.dumps(data, indent=4) + "\n"
    from ktrain.output.yamltext import dump

    return dump(data)
