"""`job validate`: the JSON Schema, then everything the engine checks, offline."""

from __future__ import annotations

from ktrain.engine import RenderContext, render
from ktrain.engine.validation import validate_runtime_ref
from ktrain.errors import ValidationFailedError
from ktrain.inputs.documents import (
    locate_field_errors,
    parse_model,
)
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.job import job_document
from ktrain.service.render import check_ssh_secret, require_admissible
from ktrain.service.requests import RenderRequest, ValidateOutcome
from ktrain.service.runtimes import is_runtime_path

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    pass


def validate_request(request: RenderRequest, registry: RuntimeRegistry) -> ValidateOutcome:
    """Offline validation: the TrainJob JSON Schema first, then everything the engine checks
    (CRD rules, webhooks, plugins). Raises ValidationFailedError with every problem found."""
    from ktrain.authoring.json_schemas import schema_errors
    from ktrain.engine import SshKeyPair

    check_ssh_secret(request.ssh_secret)
    doc, entry = job_document(request, registry)
    located = schema_errors(doc, "trainjob.schema.json")
    if located:
        exc = ValidationFailedError([err for err, _ in located])
        for i, (_, where) in enumerate(located):
            if where is not None:
                exc.locations[i] = where
        raise exc
    job = parse_model(doc, "TrainJob", what="TrainJob")
    errors = validate_runtime_ref(job, entry.runtime)
    # The output is thrown away, so a placeholder key pair stands in for a generated one.
    status_server = None
    if request.feature_gates:
        from ktrain.inputs.feature_gates import status_server_for

        status_server = status_server_for(request.feature_gates, request.status_server, request.status_ca)
    ctx = RenderContext(
        status_server=status_server,
        ssh_key=SshKeyPair(b"<validate>", b"<validate>\n"),
        ssh_secret_name=request.ssh_secret,
        allow_extensions=request.allow_extensions,
    )
    try:
        if errors:
            raise ValidationFailedError(errors)
        result = render(job, entry.runtime, ctx)
        require_admissible(result)
    except ValidationFailedError as exc:
        # the job file's lines (and --patch files'); runtime paths point into the runtime's document
        locate_field_errors(exc, doc, only=lambda e: entry.document is None or not is_runtime_path(e.path))
        if entry.document is not None:
            locate_field_errors(exc, entry.document, only=lambda e: is_runtime_path(e.path))
        raise
    return ValidateOutcome(job=job, runtime=entry, warnings=[*request.input_warnings, *result.warnings])
