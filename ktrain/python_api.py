"""ktrain from Python: `ktrain.render`, `ktrain.validate`, `ktrain.train` and `ktrain.Client`.

Shaped like the Kubeflow SDK's `TrainerClient().train(trainer=CustomTrainer(func=..., func_args=...,
packages_to_install=..., pip_index_urls=..., num_nodes=..., resources_per_node=..., env=...))`, with
the same parameter names where the meaning is the same, so a notebook moves over by changing its
import. Everything goes through the same use cases as the CLI (`ktrain.service`, `ktrain.cluster`),
so results and errors (`ktrain.errors.KtrainError` and its subclasses, with the CLI's messages) are
the same. `import ktrain` loads none of this; the first call does.

    >>> import ktrain
    >>> objects = ktrain.render(runtime="torch-distributed", num_nodes=2, name="demo",
    ...                         command=["torchrun", "train.py"])
    >>> [o["kind"] for o in objects]
    ['JobSet']
    >>> objects[0]["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"]
    2
"""

from __future__ import annotations

import inspect
import json
import os
import textwrap
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ktrain.errors import UsageError

Obj = dict[str, Any]
FUNC_FILE = "ktrain_train.py"
MPI_HOSTFILE = "/etc/mpi/hostfile"
# SDK `get_resources_per_node`: these keys are lower-cased, `gpu` is NVIDIA's.
_RESOURCE_ALIASES = {"gpu": "nvidia.com/gpu", "storage": "ephemeral-storage"}
_STANDARD_RESOURCES = {"cpu", "memory", "gpu", "storage", "ephemeral-storage"}


def _resources(resources_per_node: Mapping[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (resources_per_node or {}).items():
        name = key.lower() if key.lower() in _STANDARD_RESOURCES else key
        out[_RESOURCE_ALIASES.get(name, name)] = str(value)
    return out


def _job_source(job: Obj | str | os.PathLike[str] | None) -> tuple[str | None, str | None]:
    """(file label, text) for the service: a path is read by the service, text and dicts are not."""
    if job is None:
        return None, None
    if isinstance(job, Mapping):
        from ktrain.output.yamltext import dump

        return "<job>", dump(dict(job))
    if isinstance(job, os.PathLike):
        return os.fspath(job), None
    if isinstance(job, str):
        if "\n" not in job and os.path.exists(job):
            return job, None
        return "<job>", job
    raise UsageError(f"job must be a dict, YAML text or a path, not {type(job).__name__}")


def _request(
    job: Obj | str | os.PathLike[str] | None = None,
    *,
    runtime: str | None = None,
    name: str | None = None,
    namespace: str | None = None,
    num_nodes: int | None = None,
    num_proc_per_node: int | None = None,
    image: str | None = None,
    command: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    resources_per_node: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    dataset: str | None = None,
    model: str | None = None,
    code: list[str] | None = None,
    packages_to_install: list[str] | None = None,
    pip_index_urls: list[str] | None = None,
    allow_extensions: bool = False,
    ssh_secret: str | None = None,
) -> Any:
    from ktrain.service.requests import JobOverrides, RenderRequest

    resources = _resources(resources_per_node)
    file, text = _job_source(job)
    overrides = JobOverrides(
        runtime=runtime,
        name=name,
        namespace=namespace,
        nodes=num_nodes,
        nproc_per_node=num_proc_per_node,
        image=image,
        command=list(command) if command is not None else None,
        env=[(str(k), str(v)) for k, v in (env or {}).items()],
        # The SDK puts each resource in both requests and limits.
        requests=dict(resources),
        limits=dict(resources),
        labels=dict(labels or {}),
        annotations=dict(annotations or {}),
        dataset=dataset,
        model=model,
        code=list(code or []),
        pip=list(packages_to_install or []),
        pip_index_urls=list(pip_index_urls or []),
    )
    return RenderRequest(
        file=file, text=text, overrides=overrides, allow_extensions=allow_extensions, ssh_secret=ssh_secret
    )


def _registry(runtime_files: list[str] | None = None) -> Any:
    from ktrain.inputs.registry import RuntimeRegistry

    return RuntimeRegistry(files=list(runtime_files or []))


def render(
    job: Obj | str | os.PathLike[str] | None = None,
    *,
    runtime_files: list[str] | None = None,
    **overrides: Any,
) -> list[Obj]:
    """The objects `ktrain job render` prints, as plain dicts: from a TrainJob (a dict, YAML text
    or a path) and/or the same overrides the flags take (`runtime=`, `num_nodes=`, `image=`,
    `command=`, `env=`, `resources_per_node=`, `code=`, `packages_to_install=`, ...)."""
    from ktrain.service.render import render_request

    return list(render_request(_request(job, **overrides), _registry(runtime_files)).result.objects)


def validate(
    job: Obj | str | os.PathLike[str] | None = None,
    *,
    runtime_files: list[str] | None = None,
    **overrides: Any,
) -> list[str]:
    """What `ktrain job validate` checks; returns its warnings, raises ValidationFailedError."""
    from ktrain.service.validate import validate_request

    return list(validate_request(_request(job, **overrides), _registry(runtime_files)).warnings)


def function_source(func: Callable[..., Any], func_args: Mapping[str, Any] | None) -> str:
    """The script that runs `func` in the pod: its source, then a call, as the SDK's
    `get_command_using_train_func` builds it (one positional dict when `func_args` is given);
    the arguments travel as JSON, so only JSON values are accepted."""
    if not callable(func):
        raise UsageError(f"func must be callable, not {type(func).__name__}")
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as exc:
        raise UsageError(f"cannot read the source of {getattr(func, '__name__', func)!r}: {exc}") from None
    name = func.__name__
    if not name.isidentifier() or name == "<lambda>":
        raise UsageError("func must be a function defined with `def` (a lambda has no name to call)")
    call = f"{name}()"
    if func_args is not None:
        try:
            encoded = json.dumps(dict(func_args), sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"func_args must be JSON values: {exc}") from None
        call = f"{name}(json.loads({encoded!r}))"
    return f"{source}\n\nif __name__ == '__main__':\n    import json\n\n    {call}\n"


def _launcher_command(entry: Any) -> list[str]:
    policy = entry.runtime.spec.ml_policy
    if policy is not None and policy.torch is not None:
        return ["torchrun", FUNC_FILE]
    if policy is not None and policy.mpi is not None:
        return ["mpirun", "--hostfile", MPI_HOSTFILE, "python3", FUNC_FILE]
    return ["python3", FUNC_FILE]


def train_request(
    func: Callable[..., Any],
    *,
    runtime: str,
    func_args: Mapping[str, Any] | None = None,
    runtime_files: list[str] | None = None,
    **overrides: Any,
) -> Any:
    """The render request `ktrain.train` submits (exposed for `render`-style inspection)."""
    from ktrain.inputs.code_bundle import CodeBundle, CodeFile

    if "command" in overrides:
        raise UsageError("train() builds the command from func: pass command= to Client().create instead")
    request = _request(runtime=runtime, **overrides)
    entry = _registry(runtime_files).get(runtime)
    request.overrides.command = _launcher_command(entry)
    script = function_source(func, func_args).encode()
    request.code_bundle = CodeBundle(files=[CodeFile(path=FUNC_FILE, data=script, executable=False)])
    return request


def train(
    func: Callable[..., Any],
    *,
    runtime: str,
    num_nodes: int | None = None,
    resources_per_node: Mapping[str, Any] | None = None,
    func_args: Mapping[str, Any] | None = None,
    packages_to_install: list[str] | None = None,
    pip_index_urls: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    namespace: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    runtime_files: list[str] | None = None,
    backend: str = "cluster",
    **overrides: Any,
) -> str:
    """Run `func` on the cluster (the SDK's CustomTrainer): its source, and `func_args` as JSON,
    travel as code; it runs under the runtime's launcher (torchrun for torch runtimes, mpirun
    for MPI ones, python otherwise). Returns the job's name.

    `backend="local"` runs the same pods on this machine instead (`ktrain job run --local`),
    printing their lines, and returns when the run ends; a failed run raises
    `ktrain.local.runner.LocalRunError` (its `exit_code` is the failing pod's)."""
    if backend not in ("cluster", "local"):
        raise UsageError(f"backend must be 'cluster' or 'local', not {backend!r}")
    request = train_request(
        func,
        runtime=runtime,
        func_args=func_args,
        runtime_files=runtime_files,
        num_nodes=num_nodes,
        resources_per_node=resources_per_node,
        packages_to_install=packages_to_install,
        pip_index_urls=pip_index_urls,
        env=env,
        name=name,
        namespace=namespace,
        **overrides,
    )
    if backend == "local":
        from ktrain.local.run import run_checked
        from ktrain.service.render import render_request

        return run_checked(render_request(request, _registry(runtime_files)), request.overrides)
    return Client(kubeconfig=kubeconfig, context=context, namespace=namespace)._submit(request, runtime_files)


class Client:
    """The cluster side: `create`, `list`, `get`, `logs`, `wait`, `delete`, as the CLI's commands
    (same connection rules: kubeconfig, context, namespace; same errors)."""

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
        request_timeout: float = 30.0,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.namespace = namespace
        self.request_timeout = request_timeout
        self._cluster: Any = None

    def _options(self) -> Any:
        from ktrain.cluster.connection import ConnectionOptions

        return ConnectionOptions(
            kubeconfig=self.kubeconfig,
            context=self.context,
            namespace=self.namespace,
            request_timeout=self.request_timeout,
        )

    def _connect(self) -> Any:
        if self._cluster is None:
            from ktrain.cluster.kube import connect

            self._cluster = connect(self._options())
        return self._cluster

    def _submit(self, request: Any, runtime_files: list[str] | None = None) -> str:
        """`ktrain job create` (target JobSet): render with the cluster's runtimes, then apply with
        rollback (ktrain.cluster.submission.create_job)."""
        from ktrain.cluster.submission import create_job, record_runtime
        from ktrain.service.render import render_resolving, require_admissible

        cluster = self._connect()
        request.default_namespace = cluster.namespace
        outcome, _warnings = render_resolving(request, _registry(runtime_files), self._options(), cluster=cluster)
        require_admissible(outcome.result)
        job = outcome.job
        objects = record_runtime(outcome.result.objects, outcome.runtime.runtime.name)
        create_job(cluster, objects, name=job.name, namespace=job.namespace, target="jobset")
        return str(job.name)

    def create(self, job: Obj | str | os.PathLike[str] | None = None, **overrides: Any) -> str:
        """`ktrain job create`: returns the job's name."""
        runtime_files = overrides.pop("runtime_files", None)
        return self._submit(_request(job, **overrides), runtime_files)

    def list(self, *, selector: str | None = None) -> list[Obj]:
        """`ktrain job list -o json`: the objects that stand for the jobs (TrainJob, else JobSet)."""
        from ktrain.cluster.observe import list_jobs

        return [obj for _, obj in list_jobs(self._connect(), selector=selector)]

    def get(self, name: str) -> Obj:
        """`ktrain job get NAME -o json`: the job's state as ktrain derives it."""
        from ktrain.cluster.observe import details_document, get_job

        return details_document(get_job(self._connect(), name, explain=True))

    def why(self, name: str) -> Obj:
        """`ktrain job why NAME -o json`: why the job is (not) running; `running` says which."""
        from ktrain.cluster.observe import diagnose_job, job_facts, why_document

        cluster = self._connect()
        facts = job_facts(cluster, name)
        return why_document(facts, diagnose_job(cluster, facts))

    def logs(
        self, name: str, *, follow: bool = False, step: str | None = None, node: int | None = None
    ) -> Iterator[str]:
        """`ktrain job logs`: the log lines; with `follow`, streamed as the pods write them until
        the job ends (the reading runs in a thread; errors are raised here)."""
        import queue
        import threading

        from ktrain.cluster.observe import LogOptions, LogSelection, stream_logs

        cluster = self._connect()
        lines: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=10_000)

        def read() -> None:
            try:
                stream_logs(
                    cluster,
                    name,
                    LogSelection(step=step, rank=node),
                    LogOptions(follow=follow),
                    emit=lambda _pod, line: lines.put(("line", line)),
                    notice=lambda _text: None,
                )
                lines.put(("end", None))
            except BaseException as exc:  # handed to the reader below
                lines.put(("error", exc))

        thread = threading.Thread(target=read, name=f"ktrain-logs-{name}", daemon=True)
        thread.start()
        while True:
            kind, value = lines.get()
            if kind == "line":
                yield str(value)
            elif kind == "error":
                raise value
            else:
                return

    def wait(self, name: str, *, condition: str = "complete", timeout: float | None = None) -> str:
        """`ktrain job wait --for CONDITION`: returns the state reached; raises as the CLI exits
        (WaitTimeoutError on timeout, JobFailedError when the job ended otherwise)."""
        from ktrain.cluster.observe import wait_for_job

        return str(wait_for_job(self._connect(), name, condition, timeout=timeout).state)

    def delete(self, name: str) -> None:
        """`ktrain job delete NAME`: the job and every object it owns."""
        from ktrain.cluster.submission import delete_job
        from ktrain.errors import NotFoundError

        cluster = self._connect()
        if not delete_job(cluster, name, cluster.namespace):
            raise NotFoundError(f"job {name} not found in namespace {cluster.namespace}")
