"""`job create`'s target: what a TrainJob cannot carry, and which objects go to the cluster.

`ktrain job create` and the Python API (`ktrain.Client`, `ktrain.train`, `ktrain.TrainerClient`)
both submit through these, so the two targets mean the same from either:

- `jobset`: the rendered objects (JobSet, ConfigMaps, Secrets, ...), the JobSet labelled with its
  runtime; no Trainer controller needed;
- `trainjob`: the TrainJob for the Trainer controller, with the `--code` ConfigMaps its runtime
  patch mounts.
"""

from __future__ import annotations

from ktrain.errors import UsageError
from ktrain.service.requests import JobOverrides, RenderOutcome, RenderRequest

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.util.jsondata import Obj

TARGET_JOBSET = "jobset"
TARGET_TRAINJOB = "trainjob"
TARGETS = (TARGET_JOBSET, TARGET_TRAINJOB)


def refuse_for_target(overrides: JobOverrides, target: str) -> None:
    """What the target cannot carry, refused before anything is rendered or sent."""
    if target not in TARGETS:
        raise UsageError(f"--target must be jobset or trainjob, got {target!r}")
    if target != TARGET_TRAINJOB:
        return
    from ktrain.authoring.scheduling import refuse_for_trainjob

    refuse_for_trainjob(priority_class=overrides.priority_class, scheduler=overrides.scheduler)
    if overrides.elastic is not None:
        raise UsageError(
            "--elastic cannot travel in a TrainJob (the controller sets torchrun's node count)",
            hint="use --target jobset",
        )
    refuse_failure_policy(overrides, None)


def refuse_failure_policy(overrides: JobOverrides, job: Obj | None) -> None:
    """--target trainjob: what of the failure policy (flags, or the job's `ktrain.io/` annotations)
    a TrainJob cannot carry (authoring/failure_policy.py)."""
    flags: tuple[object, ...] = (overrides.max_restarts, overrides.restart_on_preemption, overrides.fail_on_exit_codes)
    flags += (overrides.restart_strategy, overrides.ttl_seconds)
    annotations = ((job or {}).get("metadata") or {}).get("annotations") or {}
    if all(v is None for v in flags) and not any(str(k).startswith("ktrain.io/") for k in annotations):
        return
    from ktrain.authoring.failure_policy import refuse_for_trainjob, resolve

    refuse_for_trainjob(resolve(overrides, job))


def objects_for_target(outcome: RenderOutcome, request: RenderRequest, target: str) -> list[Obj]:
    """The objects to submit for `target`, refusing before any request what the cluster would
    refuse: for `jobset` what JobSet's webhook would reject (for `trainjob` the Trainer controller
    reports it itself, as a Warning event), and names the API server would not take.
    `job create --dry-run=client` prints exactly these objects."""
    from ktrain.service.job_create import check_names

    rendered = outcome.result.objects
    if target == TARGET_TRAINJOB:
        from ktrain.inputs.code_bundle import is_code
        from ktrain.jobs.plan import trainjob_to_submit

        overrides = request.overrides
        trainjob = outcome.job.to_dict()
        refuse_failure_policy(overrides, trainjob)
        objects = [
            trainjob_to_submit(
                trainjob, rendered, overrides.labels, overrides.annotations, note_nodes=request.note_nodes
            )
        ]
        # --code: the ConfigMaps the TrainJob's runtime patch mounts, owned by the TrainJob.
        objects += [o for o in rendered if o.get("kind") == "ConfigMap" and is_code(o)]
    else:
        from ktrain.jobs.plan import record_runtime
        from ktrain.service.render import require_admissible

        require_admissible(outcome.result)
        objects = record_runtime(rendered, outcome.runtime.runtime.name)
    check_names(objects, outcome.job.namespace)
    return objects


def controller_runtime_note(outcome: RenderOutcome) -> str | None:
    """For `trainjob`: a runtime the cluster does not have, which the controller will not find."""
    if outcome.runtime.source == "cluster":
        return None
    return (
        f"runtime {outcome.runtime.runtime.name} is not on the cluster (it comes from "
        f"{outcome.runtime.origin}); the Trainer controller will not find it"
    )
