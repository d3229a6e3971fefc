"""`job validate`'s use case: validate_request on the bundled runtimes and on job files."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktrain.errors import ValidationFailedError
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.requests import JobOverrides, RenderRequest
from ktrain.service.validate import validate_request


@pytest.mark.parametrize("runtime", ["torch-distributed", "deepspeed-distributed", "jax-distributed"])
def test_a_job_on_a_bundled_runtime_validates(runtime: str) -> None:
    request = RenderRequest(overrides=JobOverrides(runtime=runtime, name="job", nodes=2))
    outcome = validate_request(request, RuntimeRegistry())
    assert outcome.job.name == "job"
    assert outcome.runtime.runtime.name == runtime
    assert outcome.job.spec.trainer.num_nodes == 2


def test_a_schema_error_points_at_the_job_file_line(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: bad\n"
        "spec:\n  runtimeRef:\n    name: torch-distributed\n  trainer:\n    numNodes: zero\n"
    )
    with pytest.raises(ValidationFailedError) as caught:
        validate_request(RenderRequest(file=str(path)), RuntimeRegistry())
    exc = caught.value
    assert any("numNodes" in e.path for e in exc.errors)
    assert [(loc.file, loc.line) for loc in exc.locations.values()] == [(str(path), 9)]


def test_an_unknown_runtime_is_refused() -> None:
    from ktrain.errors import RuntimeNotFoundError

    request = RenderRequest(overrides=JobOverrides(runtime="no-such-runtime", name="job"))
    with pytest.raises(RuntimeNotFoundError, match="no-such-runtime"):
        validate_request(request, RuntimeRegistry())
