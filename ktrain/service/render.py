"""`job render` / `job create`: render a request, asking the cluster for runtimes where wanted."""

from __future__ import annotations

from ktrain.engine import RenderContext, RenderResult, render
from ktrain.engine.validation import validate_runtime_ref
from ktrain.errors import (
    InputError,
    RuntimeNotFoundError,
    UsageError,
    ValidationFailedError,
)
from ktrain.inputs.documents import locate_field_errors
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.code import code_objects
from ktrain.service.job import build_job
from ktrain.service.requests import RenderOutcome, RenderRequest
from ktrain.service.runtimes import add_extension_hint, is_runtime_path

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from typing import Any


def check_ssh_secret(name: str | None) -> None:
    """--ssh-secret names a Secret the pods mount: a DNS-1123 subdomain, as pod validation says."""
    from ktrain.engine.field_errors import dns1123_subdomain_errors

    if name is None:
        return
    problems = dns1123_subdomain_errors(name) if name else ["Required value"]
    if problems:
        raise InputError(
            f'Invalid value: "{name[:300]}": ' + "; ".join(problems),
            file="--ssh-secret",
            column=1,
            source_line=name[:300],
        )


def render_request(request: RenderRequest, registry: RuntimeRegistry) -> RenderOutcome:
    check_ssh_secret(request.ssh_secret)
    job, entry, doc = build_job(request, registry)  # the runtime is checked there too
    errors = validate_runtime_ref(job, entry.runtime)
    if errors:
        exc = ValidationFailedError(errors)
        if doc is not None:
            locate_field_errors(exc, doc)
        raise exc
    needs_key = (
        entry.runtime.spec.ml_policy is not None
        and entry.runtime.spec.ml_policy.mpi is not None
        and request.ssh_secret is None
    )
    ssh_key = None
    if needs_key and request.ssh_key_refusal is not None:
        raise UsageError(
            f"runtime {entry.runtime.name} uses MPI, whose pods need an SSH key pair, and none is named",
            hint=request.ssh_key_refusal,
        )
    if needs_key:
        from ktrain.inputs.ssh_keys import generate_ssh_key_pair

        ssh_key = generate_ssh_key_pair()
    snapshot_text = None
    if request.runtime_snapshot:
        from ktrain.output.yamltext import dump

        snapshot_text = dump(entry.runtime.to_dict())
    status_server = None
    if request.feature_gates:
        from ktrain.inputs.feature_gates import offline_ca_note, status_server_for

        status_server = status_server_for(request.feature_gates, request.status_server, request.status_ca)
        if status_server is not None and status_server.ca_cert is None:
            note = offline_ca_note(job.name, status_server)
            if note not in request.notes:
                request.notes.append(note)
    ctx = RenderContext(
        status_server=status_server,
        ssh_key=ssh_key,
        ssh_secret_name=request.ssh_secret,
        allow_extensions=request.allow_extensions,
        runtime_snapshot=request.runtime_snapshot,
        runtime_snapshot_text=snapshot_text,
    )
    try:
        result = render(job, entry.runtime, ctx)
    except ValidationFailedError as exc:
        add_extension_hint(exc, entry.runtime, allow_extensions=request.allow_extensions)
        # Runtime schema errors point into the runtime's file, everything else into the job's.
        if doc is not None:
            # JobSet errors name JobSet paths: only metadata.name also exists in the TrainJob.
            in_job = (
                (lambda e: e.path.startswith("metadata"))
                if exc.subject == "JobSet"
                else (lambda e: not is_runtime_path(e.path))
            )
            locate_field_errors(exc, doc, only=in_job)
        if entry.document is not None:
            locate_field_errors(exc, entry.document, only=lambda e: is_runtime_path(e.path))
        raise
    if request.input_warnings:
        result.warnings[:0] = [n for n in request.input_warnings if n not in result.warnings]
    ov = request.overrides
    if ov.elastic is not None:
        from ktrain.authoring import elastic

        if not request.allow_extensions:
            raise UsageError(
                "--elastic is a ktrain extension (upstream Trainer has no elastic policy)",
                hint="add --allow-extensions to use it",
            )
        elastic.apply(result.objects, min_nodes=ov.elastic[0], max_nodes=ov.elastic[1], max_restarts=ov.max_restarts)
    policy = failure_policy_of(request, job)
    if policy is not None:  # restarts, fail-fast exit codes, TTL: authoring/failure_policy.py
        from ktrain.authoring import failure_policy

        failure_policy.apply(result.objects, policy, elastic=ov.elastic is not None)
    if ov.priority_class is not None or ov.scheduler is not None:
        from ktrain.authoring import scheduling

        scheduling.apply(result.objects, priority_class=ov.priority_class, scheduler=ov.scheduler)
    if request.code_bundle is not None:
        # The code goes first: its ConfigMaps must exist before the pods that mount them.
        result.objects[:0] = code_objects(request, job.name, job.namespace)
    secret_printed = any(o["kind"] == "Secret" and o.get("type") == "kubernetes.io/ssh-auth" for o in result.objects)
    return RenderOutcome(job=job, runtime=entry, result=result, document=doc, secret_printed=secret_printed, ctx=ctx)


def failure_policy_of(request: RenderRequest, job: Any) -> Any:
    """The job's failure policy: the flags over the job file's `ktrain.io/` annotations (or None)."""
    ov = request.overrides
    annotations = getattr(getattr(job, "metadata", None), "annotations", None)
    flags = (ov.max_restarts, ov.restart_on_preemption, ov.fail_on_exit_codes, ov.restart_strategy, ov.ttl_seconds)
    if all(v is None for v in flags) and not any(str(k).startswith("ktrain.io/") for k in annotations or {}):
        return None
    from ktrain.authoring.failure_policy import resolve

    return resolve(request.overrides, {"metadata": {"annotations": annotations or {}}})


def render_resolving(
    request: RenderRequest,
    registry: RuntimeRegistry,
    options: Any,
    *,
    cluster: Any = None,
    prefer_cluster: bool = False,
    run: Any = None,
) -> tuple[Any, list[str]]:
    """`render_request` (or `run`, e.g. `validate_request`), with runtimes from the cluster where
    the caller wants them.

    - `cluster` given (job create): the cluster's runtimes win over local ones of the same name,
      except a `--runtime-file` (the user named that file for this job).
    - `prefer_cluster` (render with --kubeconfig/--context): the same, but an unreachable
      cluster is only a warning.
    - otherwise local runtimes are used, and the cluster (when a kubeconfig exists) is asked
      only for a name that is not found locally.
    """
    # ktrain.cluster is imported only where the cluster is asked: not for a runtime found locally
    use = run or render_request
    warnings: list[str] = []
    if cluster is not None:
        from ktrain.service.cluster_runtimes import add_cluster_runtimes

        # Runtimes we may not list (403) matter only when the name is then not found at all.
        unreadable = add_cluster_runtimes(registry, cluster, prefer=True)
        try:
            return use(request, registry), warnings
        except RuntimeNotFoundError as exc:
            if unreadable:
                exc.hint = "; ".join([*([exc.hint] if exc.hint else []), *unreadable])
            raise
    if prefer_cluster:
        from ktrain.service.cluster_runtimes import try_add_cluster_runtimes

        warnings += try_add_cluster_runtimes(registry, options, prefer=True, request=request)
    try:
        return use(request, registry), warnings
    except RuntimeNotFoundError:
        from ktrain.service.cluster_runtimes import kubeconfig_available, try_add_cluster_runtimes

        if prefer_cluster or not kubeconfig_available(options.kubeconfig):
            raise
        fallback = try_add_cluster_runtimes(registry, options, prefer=False, request=request)
        try:
            return use(request, registry), warnings
        except RuntimeNotFoundError as exc:
            if fallback:
                exc.hint = f"{exc.hint}; {fallback[0]}" if exc.hint else fallback[0]
            raise


def require_admissible(result: RenderResult) -> None:
    """What JobSet's webhook would refuse is an error for `job validate` and `job create`
    (a render still prints it, as the controller still builds it)."""
    if result.rejections:
        raise ValidationFailedError(result.rejections, subject="JobSet")
