"""What a `TrainerClient` runs its jobs on, behind one interface, as the Kubeflow SDK's
`kubeflow.trainer.backends` has it (`RuntimeBackend`): a Kubernetes cluster
(`ktrain.python_api.kubernetes_backend.KubernetesBackend`) or this machine
(`ktrain.python_api.local_backend.LocalBackend`: processes or containers). `TrainerClient` checks
the arguments, builds the render request and picks the backend; the backend reads and runs."""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Any

from ktrain.python_api import types as t


class TrainerBackend(abc.ABC):
    """One backend of a `TrainerClient` (the SDK's `RuntimeBackend`, on ktrain's use cases)."""

    # What `TrainerClient.target` says: "trainjob" or "jobset" on a cluster, "local" here.
    target: str
    # The SDK backend's name for the training options that check it (`options=[...]`); None: Kubernetes.
    option_backend: str | None = None

    @property
    @abc.abstractmethod
    def namespace(self) -> str:
        """The namespace jobs go to."""

    @abc.abstractmethod
    def runtime_entries(self) -> list[Any]:
        """The runtimes a job here can use (registry entries), one per name."""

    @abc.abstractmethod
    def runtime_missing(self, name: str) -> Exception:
        """The error for a runtime `name` that `runtime_entries` does not have."""

    @abc.abstractmethod
    def submit(self, request: Any, registry: Any) -> str:
        """Render the request and start the job; its name."""

    @abc.abstractmethod
    def list_jobs(self, runtime: str | None) -> list[t.TrainJob]:
        """Every job (of one runtime, when given)."""

    @abc.abstractmethod
    def get_job(self, name: object) -> t.TrainJob:
        """One job, its steps and status."""

    @abc.abstractmethod
    def get_job_logs(self, name: object, step: str, follow: bool) -> Iterator[str]:
        """The lines of one step (`node-0`, ...); with `follow`, until the job ends."""

    @abc.abstractmethod
    def get_job_events(self, name: object) -> list[t.Event]:
        """The events of the job's objects, oldest first."""

    @abc.abstractmethod
    def failure(self, name: str) -> Exception:
        """The error `wait_for_job_status` raises for a job that failed."""

    @abc.abstractmethod
    def delete_job(self, name: object) -> None:
        """Delete the job (a local one: stop its pods and forget it)."""
