"""The pure rendering engine: TrainJob + runtime (+ context) -> Kubernetes objects.

No network, file system, clock, randomness or printing happens below this package;
everything of that kind arrives in `RenderContext` (STYLE.md principle 1).
"""

from __future__ import annotations

from ktrain.engine.context import RenderContext, SshKeyPair
from ktrain.engine.framework import RenderResult, check_inputs, run

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:  # records (ktrain.api.records) or the pydantic models: the engine reads both alike
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.api.trainjob import TrainJob


def render(job: TrainJob, runtime: TrainingRuntime, ctx: RenderContext | None = None) -> RenderResult:
    """Render the objects the Trainer controller would create for `job` on `runtime`.

    Raises `ValidationFailedError` with every problem found when the inputs are invalid.
    """
    return run(job, runtime, ctx or RenderContext())


__all__ = ["RenderContext", "RenderResult", "SshKeyPair", "check_inputs", "render"]
