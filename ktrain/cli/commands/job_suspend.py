"""`ktrain job suspend` and `ktrain job resume`: set only spec.suspend of a job (its TrainJob, whose
controller passes it on, else its JobSet)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ktrain.cli.common import cluster_for
from ktrain.cli.spec import CONTEXT, KUBECONFIG, NAMESPACE, REQUEST_TIMEOUT, Argument, command

if TYPE_CHECKING:
    from typing import Annotated

NAMES = Argument(help="Job names.", show_default=False)


def _set_suspended(
    names: list[str], suspend: bool, kubeconfig: str | None, context: str | None, namespace: str | None, timeout: float
) -> None:
    from ktrain.service.job_suspend import set_suspended

    cluster = cluster_for(kubeconfig, context, namespace, timeout)
    done = "suspended" if suspend else "resumed"
    for name in dict.fromkeys(names):
        written, changed = set_suspended(cluster, name, cluster.namespace, suspend)
        sys.stdout.write(f"{written.ref} {done}" + ("" if changed else " (no change)") + "\n")


@command("job", "suspend")
def suspend_jobs(
    names: Annotated[list[str], NAMES],
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Suspend jobs: their pods are deleted, the job stays (spec.suspend: true on the TrainJob, else the JobSet)."""
    _set_suspended(names, True, kubeconfig, context, namespace, request_timeout)


@command("job", "resume")
def resume_jobs(
    names: Annotated[list[str], NAMES],
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    namespace: Annotated[str | None, NAMESPACE] = None,
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Resume suspended jobs (spec.suspend: false on the TrainJob, else the JobSet; nothing else changes)."""
    _set_suspended(names, False, kubeconfig, context, namespace, request_timeout)
