"""Refresh the cluster completion values of one connection (runs detached, in the background).

`python -m ktrain.completion.refresh ENTRY_PATH [--kubeconfig K] [--context C] [--namespace N]`
asks the CLI itself — `ktrain runtime list --source cluster -o name` and `ktrain job list -o name`
— each under `TIME_LIMIT` seconds, and writes what they printed to ENTRY_PATH. A command that
fails, is missing or times out contributes no values; it is never retried before the next TTL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ktrain.completion.request import ENV_VAR
from ktrain.inputs import parse_cache as cache

TIME_LIMIT = 10.0
RUNTIME_PREFIXES = ("clustertrainingruntime.trainer.kubeflow.org/", "trainingruntime.trainer.kubeflow.org/")
JOB_PREFIXES = ("jobset.jobset.x-k8s.io/", "trainjob.trainer.kubeflow.org/")


def command_env() -> dict[str, str]:
    """The environment for the commands asked: not in completion mode. The refresh is started by
    the completer, whose `_KTRAIN_COMPLETE` it inherits; with it `ktrain job list -o name` would
    answer completions instead of names (issue #19)."""
    return {key: value for key, value in os.environ.items() if key != ENV_VAR and not key.startswith("COMP_")}


def _names(cli: list[str], args: list[str], prefixes: tuple[str, ...]) -> list[str]:
    try:
        out = subprocess.run(
            [*cli, *args],
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT,
            stdin=subprocess.DEVNULL,
            check=False,
            env=command_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    names = []
    for line in out.stdout.splitlines():
        for prefix in prefixes:
            if line.startswith(prefix) and len(line) > len(prefix):
                names.append(line[len(prefix) :].strip())
    return sorted(set(names))


def _cluster_namespaces(conn: list[str]) -> list[str]:
    """The cluster's namespaces (no CLI command lists them): empty when they may not be listed."""
    flags = dict(zip(conn[::2], conn[1::2], strict=False))
    try:
        from ktrain.cluster import client as k
        from ktrain.cluster.connection import ConnectionOptions
        from ktrain.cluster.kube import connect

        options = ConnectionOptions(
            kubeconfig=flags.get("--kubeconfig"), context=flags.get("--context"), request_timeout=TIME_LIMIT
        )
        items = k.list_objects(connect(options), k.NAMESPACE)
    except Exception:  # noqa: BLE001 - forbidden (common for namespaces), unreachable...: no values
        return []
    return sorted({str((o.get("metadata") or {}).get("name")) for o in items} - {"None"})


def refresh(entry_path: str, conn: list[str], cli: list[str] | None = None) -> dict[str, object]:
    cli = cli or [sys.executable, "-m", "ktrain"]
    entry = {
        "time": time.time(),
        "runtimes": _names(cli, ["runtime", "list", "--source", "cluster", "-o", "name", *conn], RUNTIME_PREFIXES),
        "jobs": _names(cli, ["job", "list", "-o", "name", *conn], JOB_PREFIXES),
        "namespaces": _cluster_namespaces(conn),
    }
    cache.write_json(entry_path, entry)
    try:
        os.unlink(entry_path + ".refreshing")
    except OSError:
        pass
    return entry


if __name__ == "__main__":
    refresh(sys.argv[1], sys.argv[2:])
