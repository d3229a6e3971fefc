"""The bodies of `ktrain job suspend` and `ktrain job resume`, typer-free (declared in `ktrain.cli.job`)."""

from __future__ import annotations

import sys


def suspend_jobs(
    names: list[str],
    suspend: bool,
    kubeconfig: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
    request_timeout: float = 30.0,
) -> None:
    """Set spec.suspend of each job (its TrainJob, else its JobSet): `kind/NAME suspended|resumed`."""
    from ktrain.cli.jobinput import connection
    from ktrain.cluster.kube import connect
    from ktrain.cluster.submission import set_suspended

    cluster = connect(connection(kubeconfig, context, namespace, request_timeout))
    done = "suspended" if suspend else "resumed"
    for name in dict.fromkeys(names):
        written, changed = set_suspended(cluster, name, cluster.namespace, suspend)
        sys.stdout.write(f"{written.ref} {done}" + ("" if changed else " (no change)") + "\n")
