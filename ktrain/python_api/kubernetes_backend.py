"""`TrainerClient` on a Kubernetes cluster (the SDK's `KubernetesBackend`): the jobs are TrainJobs
(or, with target "jobset", the objects the Trainer controller would make), read and written
through ktrain's use cases (`ktrain.service`), each read made once per call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ktrain.errors import JobFailedError, RuntimeNotFoundError, UsageError
from ktrain.python_api import arguments as a
from ktrain.python_api import types as t
from ktrain.python_api.backends import TrainerBackend
from ktrain.python_api.client import Client, job_name
from ktrain.python_api.sdk_views import events_of, runtime_of, step_selection, trainer_status_of, trainjob_of
from ktrain.service.cluster_runtimes import fetch_runtime_entries
from ktrain.service.job_get import get_job, job_events
from ktrain.service.job_list import list_jobs
from ktrain.service.submit import TARGETS


class KubernetesBackend(TrainerBackend):
    """A KubernetesBackendConfig's cluster (namespace, config_file, context): connected as kubectl
    is, the kubeconfig read at once (as the SDK does), nothing sent until a call needs it."""

    def __init__(self, config: object, target: object) -> None:
        if getattr(config, "client_configuration", None) is not None:
            raise UsageError(
                "backend_config.client_configuration: ktrain connects as kubectl does",
                hint="give config_file= (a kubeconfig) and context= instead",
            )
        self.target = a.text(target, "target")
        if self.target not in TARGETS:
            raise UsageError(f"target must be one of {', '.join(TARGETS)}, not {a.shown(self.target)}")
        config_file = getattr(config, "config_file", None)
        self.client = Client(
            kubeconfig=None if config_file is None else a.path(config_file, "backend_config.config_file"),
            context=a.optional_text(getattr(config, "context", None), "backend_config.context"),
            namespace=a.optional_text(getattr(config, "namespace", None), "backend_config.namespace"),
        )
        self.client.connect()  # reads the kubeconfig now, as the SDK does; nothing is sent yet

    @property
    def namespace(self) -> str:
        return str(self.client.connect().namespace)

    def runtime_entries(self) -> list[Any]:
        """Namespaced TrainingRuntimes before cluster-scoped ones of the same name (the SDK's
        preference); with target "jobset", ktrain's local ones too."""
        entries, _warnings = fetch_runtime_entries(self.client.connect())
        if self.target == "jobset":
            from ktrain.inputs.registry import RuntimeRegistry

            entries += RuntimeRegistry().entries()
        chosen: dict[str, Any] = {}
        for entry in sorted(entries, key=lambda e: e.runtime.kind != "TrainingRuntime"):
            chosen.setdefault(entry.runtime.name, entry)
        return list(chosen.values())

    def runtime_missing(self, name: str) -> Exception:
        return RuntimeNotFoundError(
            f"runtime {a.shown(name)} not found in namespace {self.namespace} or the cluster",
            hint="`ktrain runtime list` shows the runtimes",
        )

    def submit(self, request: Any, registry: Any) -> str:
        return self.client._submit(request, registry, target=self.target, depth=1)  # warnings at the caller's line

    def _runtimes(self) -> dict[str, t.Runtime]:
        return {e.runtime.name: runtime_of(e) for e in self.runtime_entries()}

    def list_jobs(self, runtime: str | None) -> list[t.TrainJob]:
        """One list of JobSets, TrainJobs and pods (`ktrain.service.job_list`), and the runtimes."""
        jobs = list_jobs(self.client.connect())
        runtimes = self._runtimes() if jobs else {}
        return [
            trainjob_of(job.summary, job.pods, runtimes)
            for job in jobs
            if runtime is None or job.summary.runtime == runtime
        ]

    def get_job(self, name: object) -> t.TrainJob:
        details = get_job(self.client.connect(), job_name(name), events=False, logs=False)
        job = trainjob_of(details.summary, details.pods, self._runtimes())
        job.trainer_status = trainer_status_of(details.trainjob)  # as upstream's progress guide reads it
        return job

    def get_job_logs(self, name: object, step: str, follow: bool) -> Iterator[str]:
        """A step that has no running pod yet gives no lines, as in the SDK."""
        job = self.get_job(name)
        rjob, rank = step_selection(step, job.runtime)
        found = next((s for s in job.steps if s.name == step and s.status != "Pending"), None)
        if found is None:
            return iter(())
        return self.client.logs(job.name, follow=follow, step=rjob, node=rank)

    def get_job_events(self, name: object) -> list[t.Event]:
        checked = job_name(name)
        jobset, pods, events = job_events(self.client.connect(), checked)
        return events_of(checked, jobset, pods, events)

    def failure(self, name: str) -> Exception:
        return JobFailedError(f"TrainJob {name} is Failed")

    def delete_job(self, name: object) -> None:
        self.client.delete(name)
