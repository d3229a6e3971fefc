"""`JobInput`: what the user said about a job on the command line, typer-free.

The typer declaration of each field (flag names, help) lives in `ktrain.cli.options`, keyed by
field name; this module stays importable without typer so the fast path
(`ktrain.cli.fastpath`) builds the very same value the typer commands receive.
"""

from __future__ import annotations

from ktrain.cli.common import parse_pairs, registry_from
from ktrain.util.structs import struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the fast path a few ms to import
    from typing import Any


@struct
class JobInput:
    """What the user said about the job, as given on the command line (None: not given)."""

    command: list[str] | None = None
    filename: str | None = None
    values: list[str] | None = None
    sets: list[str] | None = None
    runtime: str | None = None
    runtime_kind: str | None = None
    runtime_file: list[str] | None = None
    runtimes_dir: list[str] | None = None
    name: str | None = None
    namespace: str | None = None
    nodes: int | None = None
    nproc_per_node: int | None = None
    image: str | None = None
    env: list[str] | None = None
    resource: list[str] | None = None
    cpu: str | None = None
    memory: str | None = None
    label: list[str] | None = None
    annotation: list[str] | None = None
    dataset: str | None = None
    model: str | None = None
    dataset_secret: str | None = None
    model_secret: str | None = None
    queue: str | None = None
    patch: list[str] | None = None
    suspend: bool | None = None
    ssh_secret: str | None = None
    allow_extensions: bool = False
    kubeconfig: str | None = None
    context: str | None = None

    def overrides(self) -> Any:
        """The flags as a `service.JobOverrides`."""
        from ktrain.service import JobOverrides

        requests: dict[str, str] = {}
        if self.cpu is not None:
            requests["cpu"] = self.cpu
        if self.memory is not None:
            requests["memory"] = self.memory
        return JobOverrides(
            runtime=self.runtime,
            runtime_kind=self.runtime_kind,
            name=self.name,
            namespace=self.namespace,
            nodes=self.nodes,
            nproc_per_node=self.nproc_per_node,
            image=self.image,
            command=list(self.command) if self.command else None,
            env=parse_pairs(self.env, "--env"),
            requests=requests,
            limits=dict(parse_pairs(self.resource, "--resource")),
            labels=dict(parse_pairs(self.label, "--label")),
            annotations=dict(parse_pairs(self.annotation, "--annotation")),
            dataset=self.dataset,
            model=self.model,
            dataset_secret=self.dataset_secret,
            model_secret=self.model_secret,
            queue=self.queue,
            suspend=self.suspend,
            patch_files=list(self.patch or []),
            values_files=list(self.values or []),
            sets=list(self.sets or []),
        )

    def render_request(self) -> Any:
        """A `service.RenderRequest` for these inputs."""
        from ktrain.service import RenderRequest

        return RenderRequest(
            file=self.filename,
            overrides=self.overrides(),
            ssh_secret=self.ssh_secret,
            allow_extensions=self.allow_extensions,
        )

    def registry(self) -> Any:
        return registry_from(self.runtime_file, self.runtimes_dir)

    def connection(self, request_timeout: float = 30.0) -> Any:
        """The `ConnectionOptions` these inputs name (no cluster is contacted)."""
        return connection(self.kubeconfig, self.context, self.namespace, request_timeout)


def connection(
    kubeconfig: str | None, context: str | None, namespace: str | None, request_timeout: float = 30.0
) -> Any:
    """A `ConnectionOptions` from the kubectl-style flags (no cluster is contacted)."""
    from ktrain.cluster.connection import ConnectionOptions

    return ConnectionOptions(
        kubeconfig=kubeconfig, context=context, namespace=namespace, request_timeout=request_timeout
    )
